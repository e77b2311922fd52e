#!/usr/bin/python3
"""Hostile input, as issue 15 lists it: files whose sizes claim terabytes, header lengths of 0xFFFFFFFF,
(2**62,)-shaped .npy, 100k-deep JSON, op names with ../, output folders that cannot be written, a full disk
(a 256 KiB tmpfs in a private mount namespace, where the machine allows one) and SIGKILL in the middle of a
write. Every case must end in a coded error or a clean result: never a signal, nothing written outside the
output folder, never a half-written file under a final name.

usage: test_hostile.py BUILD_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TOOLS = {t: f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "msaccucmp", "transplt", "profparse")}
CODE = r"E[A-Z0-9]\d{4}"  # CANN-style error codes: E10001, EC0011, EH0001, ...
checks = T.Checks()
check, failures = checks.check, checks.failures




def run(tool, *args, cwd=None):
    p = subprocess.run([TOOLS[tool], *args], capture_output=True, text=True, cwd=cwd or WORK,
                       env={**os.environ, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log"})
    return p.returncode, p.stdout + p.stderr


def refused(what, code, text, param=None):
    """A clean refusal: exit 1 or 2 (never a signal) with a coded message naming the parameter."""
    import re
    check(code in (1, 2) and re.search(CODE, text) is not None and (param is None or f"[{param}]" in text),
          f"{what}: exit {code}, coded{' and naming ' + param if param else ''}" + ("" if code in (1, 2) else f"\n{text[-600:]}"))


def files_under(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def npy(path, descr, shape, data=b"", version=1, header_len=None):
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode()
    h += b" " * ((64 - (len(h) + 11) % 64) % 64) + b"\n"
    n = len(h) if header_len is None else header_len
    head = b"\x93NUMPY" + (b"\x01\x00" + struct.pack("<H", n) if version == 1 else b"\x02\x00" + struct.pack("<I", n))
    with open(path, "wb") as f:
        f.write(head + h + data)


def conv_model(path, node_name="conv", out_name="c", weights=(8, 3, 3, 3)):
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal(weights).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], [out_name], pads=[1, 1, 1, 1], name=node_name),
         helper.make_node("Sigmoid", [out_name], ["y"], name="act")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, weights[1], 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, weights[0], 8, 8])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
conv_model(f"{WORK}/m.onnx")
code, text = run("atc", "--model=m.onnx", "--framework=5", "--output=m", "--soc_version=Ascend310P3", "--log=error")
assert code == 0, text
np.save(f"{WORK}/ok.npy", np.ones((1, 3, 8, 8), np.float32))

# --- sizes that claim terabytes, (2**62,) shapes, 0xFFFFFFFF header lengths -------------------------------
npy(f"{WORK}/tb.npy", "<f4", "(1, 3, 8, %d)" % 2**40, b"\0" * 16)
npy(f"{WORK}/e62.npy", "<f4", "(%d,)" % 2**62)  # 2**62 * 4 bytes wraps to 0 in 64 bits: no data needed to lie
npy(f"{WORK}/huge_dim.npy", "<f4", "(%s,)" % ("9" * 30))
npy(f"{WORK}/hl2.npy", "<f4", "(4,)", b"\0" * 16, version=2, header_len=0xFFFFFFFF)
for name in ("tb", "e62", "huge_dim", "hl2"):
    code, text = run("msame", "--model=m.om", f"--input={name}.npy", "--output=out_npy")
    refused(f"msame --input {name}.npy", code, text, "--input")
    code, text = run("msaccucmp", "file_compare", "-m", f"{name}.npy", "-g", "ok.npy", "-out", "fc")
    refused(f"msaccucmp file_compare -m {name}.npy", code, text, "-m")
check(not glob.glob(f"{WORK}/out_npy/**/*.bin", recursive=True) and not glob.glob(f"{WORK}/fc/*"), "no output from refused inputs")

acl = f"{WORK}/dump.json"
json.dump({"dump": {"dump_path": f"{WORK}/dump", "dump_list": [], "dump_mode": "all"}}, open(acl, "w"))
code, text = run("msame", "--model=m.om", "--input=ok.npy", f"--acl_json_path={acl}", "--output=out", "--log=error")
assert code == 0, text
conv_dump = next(p for p in glob.glob(f"{WORK}/dump/**/Conv2D.*", recursive=True))
body = open(conv_dump, "rb").read()
for name, header in (("ffffffff", 0xFFFFFFFF), ("2^63", 2**63 + 5), ("zero", 0)):
    path = f"{WORK}/dump_{name}"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", header) + body[8:])
    code, text = run("msaccucmp", "convert", "-d", path, "-out", "cv")
    refused(f"a dump whose header length is {name}", code, text)

om = bytearray(open(f"{WORK}/m.om", "rb").read())
OFF_IS_CHECKSUM, TABLE = 81, 256 + 8  # om_file.h: the checksum flag; the table follows the header's count field
for name, patch in (("partition size 2^64-1", lambda b: b.__setitem__(slice(TABLE + 16, TABLE + 24), b"\xff" * 8)),
                    ("partition offset 2^40", lambda b: b.__setitem__(slice(TABLE + 8, TABLE + 16), struct.pack("<Q", 2**40))),
                    ("partition count 0xFFFFFFFF", lambda b: b.__setitem__(slice(256, 260), b"\xff" * 4)),
                    ("model length 0xFFFFFFFF", lambda b: b.__setitem__(slice(76, 80), b"\xff" * 4))):
    bad = bytearray(om)
    patch(bad)
    bad[OFF_IS_CHECKSUM] = 1  # get past the checksum: the bounds checks behind it must hold on their own
    with open(f"{WORK}/bad.om", "wb") as f:
        f.write(bad)
    code, text = run("msame", "--model=bad.om", "--output=out_bad")
    refused(f".om with {name}", code, text, "--model")
    code, text = run("atc", "--mode=verify", "--om=bad.om")
    check(code in (1, 2) and "bad.om" in text, f"atc --mode=verify on the .om with {name}: exit {code}")

# --- 100k-deep JSON -------------------------------------------------------------------------------------
deep_array = "[" * 100000 + "]" * 100000
deep_object = '{"a":' * 100000 + "1" + "}" * 100000
for name, text in (("deep_array.json", deep_array), ("deep_object.json", deep_object),
                   ("deep_dump.json", '{"dump":' + deep_array + "}"), ("deep_prof.json", '{"profiler": {"switch": "on", "aic_metrics":' + deep_array + "}}")):
    open(f"{WORK}/{name}", "w").write(text)
for name in ("deep_dump.json", "deep_prof.json", "deep_array.json"):
    code, text = run("msame", "--model=m.om", f"--acl_json_path={name}", "--output=out_deep")
    refused(f"msame --acl_json_path={name}", code, text, "--acl_json_path")
code, text = run("atc", "--model=m.onnx", "--framework=5", "--output=deep", "--soc_version=Ascend310P3", "--fusion_switch_file=deep_object.json")
refused("atc --fusion_switch_file with 100k nested objects", code, text, "--fusion_switch_file")
code, text = run("atc", "--singleop=deep_array.json", "--output=deep_single", "--soc_version=Ascend310P3")
refused("atc --singleop with 100k nested arrays", code, text, "--singleop")
os.makedirs(f"{WORK}/src", exist_ok=True)
open(f"{WORK}/src/train.py", "w").write("import torch\nx = torch.zeros(1).cuda()\n")
code, text = run("transplt", "-i", "src", "-o", "tp_deep", "-r", "deep_object.json")
refused("transplt -r with 100k nested objects", code, text)
np.save(f"{WORK}/golden_x.npy", np.ones(4, np.float32))
os.makedirs(f"{WORK}/golden", exist_ok=True)
np.save(f"{WORK}/golden/conv.0.1.npy", np.ones(4, np.float32))
code, text = run("msaccucmp", "compare", "-m", os.path.dirname(conv_dump), "-g", "golden", "-f", "deep_object.json", "-out", "cmp_deep")
refused("msaccucmp compare -f with 100k nested objects", code, text, "-f")
check(not os.path.exists(f"{WORK}/deep.om") and not os.path.exists(f"{WORK}/tp_deep") and not glob.glob(f"{WORK}/cmp_deep/result_*"),
      "nothing written for the deep JSON inputs")

# --- op names with ../ ------------------------------------------------------------------------------------
os.makedirs(f"{WORK}/jail")
conv_model(f"{WORK}/jail/evil.onnx", node_name="../../../escaped_conv", out_name="../../../escaped_tensor")
before = set(files_under(WORK))
code, text = run("atc", "--model=evil.onnx", "--framework=5", "--output=evil", "--soc_version=Ascend310P3", "--log=error", cwd=f"{WORK}/jail")
check(code == 0, "atc converts a model whose op and tensor names hold ../")
json.dump({"dump": {"dump_path": f"{WORK}/jail/dump", "dump_list": [], "dump_mode": "all"}}, open(f"{WORK}/jail/acl.json", "w"))
prof = {"profiler": {"switch": "on", "output": f"{WORK}/jail/prof"}}
json.dump(prof, open(f"{WORK}/jail/prof.json", "w"))
code, text = run("msame", "--model=evil.om", "--acl_json_path=acl.json", "--output=out", "--log=error", cwd=f"{WORK}/jail")
check(code == 0, "msame dumps it")
code, text = run("msame", "--model=evil.om", "--acl_json_path=prof.json", "--output=out", "--log=error", cwd=f"{WORK}/jail")
check(code == 0, "msame profiles it")
code, text = run("profparse", "--export=on", f"--output={WORK}/jail/prof", "--log=error")
check(code == 0, "profparse exports it")
code, text = run("atc", "--mode=1", "--om=evil.om", "--json=evil.json", cwd=f"{WORK}/jail")
escaped = [f for f in set(files_under(WORK)) - before if not f.startswith("jail/")]
check(escaped == [], f"nothing written outside the working folder: {escaped}")
dumps = files_under(f"{WORK}/jail/dump")
check(any("escaped_conv" in f and "/../" not in f"/{f}" for f in dumps), "the dump of the ../ op is inside the dump folder")

# --- output folders that cannot be written ---------------------------------------------------------------
blocker = f"{WORK}/a_file"
open(blocker, "w").write("not a folder")
for tool, args, param in (("atc", ["--model=m.onnx", "--framework=5", f"--output={blocker}/m", "--soc_version=Ascend310P3"], "--output"),
                          ("msame", ["--model=m.om", f"--output={blocker}/out"], "--output"),
                          ("msaccucmp", ["file_compare", "-m", "ok.npy", "-g", "ok.npy", "-out", f"{blocker}/fc"], None),
                          ("transplt", ["-i", "src", "-o", f"{blocker}/tp"], None),
                          ("profparse", ["--export=on", f"--output={blocker}"], "--output")):
    code, text = run(tool, *args)
    refused(f"{tool} writing under a file", code, text, param)
check(open(blocker).read() == "not a folder", "the file in the way is untouched")


# --- a full disk -------------------------------------------------------------------------------------------
def in_tiny_fs(script, size="256k"):
    """Runs `script` (sh) with $FULL a fresh tmpfs of `size`, in a private mount namespace; None if unavailable."""
    mnt = f"{WORK}/full"
    os.makedirs(mnt, exist_ok=True)
    p = subprocess.run(["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size={size} tmpfs "{mnt}" || exit 99\n'
                        f'export FULL="{mnt}"\n{script}'], capture_output=True, text=True, cwd=WORK,
                       env={**os.environ, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log"})
    return None if p.returncode == 99 or "unshare" in p.stderr[:200] else p


conv_model(f"{WORK}/big.onnx", weights=(256, 256, 3, 3))  # 2.4 MB of weights: far over 256 KiB
p = in_tiny_fs(f'{TOOLS["atc"]} --model=big.onnx --framework=5 --output="$FULL/big" --soc_version=Ascend310P3 '
               '--precision_mode=must_keep_origin_dtype --log=error; echo "rc=$?"; ls -A "$FULL"')
if p is None:
    print("skip the full-disk cases: no private mount namespace here (unshare -rm)")
else:
    out = p.stdout + p.stderr
    check("rc=1" in out and "E13004" in out and "No space left on device" in out, f"atc on a full disk: exit 1, E13004, ENOSPC\n{out[-400:]}")
    check(out.strip().endswith("rc=1"), f"atc on a full disk leaves nothing behind: {out.splitlines()[-1:]}")
    p = in_tiny_fs(f'cp -r dump "$FULL/" 2>/dev/null; head -c 200000 /dev/zero > "$FULL/filler"; '
                   f'{TOOLS["msaccucmp"]} convert -d {conv_dump} -out "$FULL/cv" -t npy; echo "rc=$?"; ls -A "$FULL/cv" 2>/dev/null',
                   size="208k")
    out = p.stdout + p.stderr
    check("rc=1" in out and "E13004" in out, f"msaccucmp convert on a full disk: exit 1, E13004\n{out[-400:]}")

# --- SIGKILL in the middle of a write ----------------------------------------------------------------------
# atc killed at a range of moments (reading, converting, writing a 200 MB .om): after every kill there is either
# no huge.om or a complete one that verifies; never a partial file under the final name.
conv_model(f"{WORK}/huge.onnx", weights=(1024, 1024, 7, 7))  # 200 MB of fp32 weights
atc_huge = [TOOLS["atc"], "--model=huge.onnx", "--framework=5", f"--output={WORK}/kill/huge", "--soc_version=Ascend310P3",
            "--precision_mode=must_keep_origin_dtype", "--log=error"]
mid_write = 0
for delay in ("as the .om's temporary file appears", 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2):
    shutil.rmtree(f"{WORK}/kill", ignore_errors=True)
    os.makedirs(f"{WORK}/kill")
    proc = subprocess.Popen(atc_huge, cwd=WORK, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if isinstance(delay, str):
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not any(".tmp." in f for f in os.listdir(f"{WORK}/kill")):
            time.sleep(0.001)
    else:
        time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = os.listdir(f"{WORK}/kill")
    mid_write += any(".tmp." in f for f in left)
    if "huge.om" in left:
        code, text = run("atc", "--mode=verify", f"--om={WORK}/kill/huge.om")
        check(code == 0, f"killed {delay}: the huge.om there is complete ({text[-200:]})")
    else:
        check(True, f"killed {delay}: no huge.om ({left})")
print(f"     {mid_write} of the kills landed while the .om was being written")
code, text = run("atc", *atc_huge[1:])
check(code == 0 and os.listdir(f"{WORK}/kill") == ["huge.om"], f"the next run writes it whole and removes the killed run's temporary file ({os.listdir(f'{WORK}/kill')})")
code, text = run("atc", "--mode=verify", f"--om={WORK}/kill/huge.om")
check(code == 0, "and it verifies")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
