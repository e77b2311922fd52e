# npukit's toolkit environment, as CANN's <toolkit>/set_env.sh sets it: `source <prefix>/set_env.sh`.
# The prefix is wherever this file is (the install can be moved): the tools on PATH, libascendcl on
# LD_LIBRARY_PATH, pyACL on PYTHONPATH, and the variables Ascend's samples build with (DDK_PATH, NPU_HOST_LIB).
_npukit_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
export ASCEND_TOOLKIT_HOME="$_npukit_root"
export ASCEND_HOME_PATH="$_npukit_root"
export ASCEND_OPP_PATH="$_npukit_root/opp"
export PATH="$_npukit_root/bin${PATH:+:$PATH}"
export LD_LIBRARY_PATH="$_npukit_root/runtime/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$_npukit_root/python/site-packages${PYTHONPATH:+:$PYTHONPATH}"
export DDK_PATH="$_npukit_root"
export NPU_HOST_LIB="$_npukit_root/runtime/lib64/stub"
unset _npukit_root
