"""What every Python test of npukit repeats: where the repository, its test data and the built tools are, and
how a tool is run and its failure reported. A test script is run as `script [SOURCE_DIR] BUILD_DIR WORK_DIR`
(tests/CMakeLists.txt); `paths()` reads that command line.

    import testlib as T
    BUILD, WORK = T.paths()
    out = T.must(T.tool(BUILD, "atc"), "--mode=6", f"--om={T.DATA}/om/a3c_pong_model.om", cwd=WORK)
"""
import json
import os
import shutil
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository's root
DATA = os.path.join(SOURCE, "tests", "data")  # real files made outside this project (tests/data/README.md)
EXAMPLES = os.path.join(SOURCE, "examples")
PY = "/usr/bin/python3"  # Debian's Python: the one that sees python3-numpy, -onnx, -torch, -opencv
TOOLS = ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse")


def paths():
    """(BUILD, WORK) from the test's command line, absolute; WORK is created."""
    build, work = (os.path.abspath(p) for p in sys.argv[-2:])
    os.makedirs(work, exist_ok=True)
    return build, work


def fresh(path):
    """An empty folder at `path` (whatever was there is removed); returns `path`."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def tool(build, name):
    """The built binary of one of the six tools."""
    return os.path.join(build, "tools", name, name)


def sanitizer_env(build):
    """What a process that loads an instrumented libascendcl needs in a `make check SANITIZE=1` build: the ASan
    runtime preloaded (Python and the AscendCL samples are not instrumented themselves) and leak checks off (the
    interpreter's own allocations). Empty in a normal build."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            if "NPUKIT_SANITIZE:BOOL=ON" not in f.read():
                return {}
    except OSError:
        return {}
    asan = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    ubsan = subprocess.run(["g++", "-print-file-name=libubsan.so"], capture_output=True, text=True).stdout.strip()
    return {"LD_PRELOAD": f"{asan} {ubsan}", "ASAN_OPTIONS": "detect_leaks=0"}


def run(*args, cwd=None, env=None, input=None):
    """Runs a command (arguments turned into strings) and returns the CompletedProcess, text mode."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, input=input,
                          check=False)


def must(*args, cwd=None, env=None):
    """Runs a command that must succeed; returns stdout + stderr, or raises with both and the exit code."""
    r = run(*args, cwd=cwd, env=env)
    if r.returncode != 0:
        raise AssertionError(f"{[str(a) for a in args]} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def call(cmd, ok=True, env=None, cwd=None):
    """Runs an argument list; `env` adds to the environment. ok=True: it must exit 0 (AssertionError with its output
    otherwise)."""
    p = subprocess.run([str(a) for a in cmd], capture_output=True, text=True, check=False, cwd=cwd,
                       env={**os.environ, **(env or {})})
    if ok and p.returncode != 0:
        raise AssertionError(f"{[str(a) for a in cmd]} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p



# ---- atc --mode=1 JSON (a ge.proto.ModelDef as ATC prints it) ---------------------------------------------
GE_VALUE_OPS = ("Data", "Const", "NetOutput")  # ops GE adds for the graph's inputs, weights and outputs


def model_ops(model, compute_only=True):
    """The ops of an atc --mode=1 JSON (a path or the loaded dict); compute_only drops Data, Const and NetOutput."""
    if isinstance(model, str):
        with open(model) as f:
            model = json.load(f)
    ops = model["graph"][0].get("op", [])
    return [o for o in ops if not (compute_only and o["type"] in GE_VALUE_OPS)]


def attr(entity, key, default=None):
    """The value dict of attribute `key` of a model, op or tensor desc in that JSON ({"s": ..}, {"i": ..}, ...)."""
    for a in entity.get("attr", []):
        if a["key"] == key:
            return a["value"] if a["value"] is not None else {}
    return default


# GE's dtype names as numpy spells them (the subset the tests' models use).
GE_DTYPES = {"DT_FLOAT": "float32", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16", "DT_INT8": "int8",
             "DT_UINT8": "uint8", "DT_INT32": "int32", "DT_INT64": "int64", "DT_BOOL": "bool", "DT_DOUBLE": "float64"}


def dtype_of(desc):
    """A tensor desc's dtype as numpy names it ("float16" for DT_FLOAT16)."""
    return GE_DTYPES.get(desc.get("dtype", "DT_UNDEFINED"), desc.get("dtype"))


def model_inputs(model):
    """The graph's input descs: the output desc of each Data op, in graph order."""
    return [o["output_desc"][0] for o in model_ops(model, compute_only=False) if o["type"] == "Data"]

class Checks:
    """A script-style test's list of failed checks: check() records, finish() reports them and exits."""

    def __init__(self):
        self.failures = []

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            sys.exit(1)
        print("all checks passed")
