#!/usr/bin/python3
"""Every tool keeps one exit-code contract (issue 15): 0 done, 1 failed (a bad value or a missing file), 2 bad
usage (unknown flag, required flag missing) or nothing to do. A table runs each tool with an unknown flag, a
missing required flag, a missing file and nothing-to-do input, and checks the exit code, the parameter the
message names and that nothing was written. Also CANN's spellings: single-dash long flags and --h.
usage: test_conventions.py BUILD_DIR WORK_DIR"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = sys.argv[1:3]
TOOL = {t: os.path.join(BUILD, "tools", t, t) for t in ("atc", "msame", "msaccucmp", "transplt", "profparse", "aoe")}
checks = T.Checks()
check, failures = checks.check, checks.failures


def run(tool, *args):
    r = subprocess.run([TOOL[tool], *map(str, args)], capture_output=True, text=True, cwd=WORK)
    return r.returncode, r.stdout + r.stderr




def small_model(path, names, conv=False):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name=names[0]), helper.make_node("Sigmoid", ["r"], ["y"], name=names[1])]
    inits = []
    if conv:  # a Conv2D first: its dump holds NC1HWC0 and FRACTAL_Z tensors
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv")] + nodes
        nodes[1].input[0] = "c"
        inits = [helper.make_tensor("w", TensorProto.FLOAT, [4, 4, 1, 1], np.eye(4, dtype=np.float32).ravel().tolist())]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(WORK, "empty"))
os.makedirs(os.path.join(WORK, "src"))
with open(os.path.join(WORK, "src", "a.py"), "w") as f:
    f.write("import torch\nx = torch.zeros(2).cuda()\n")
small_model(os.path.join(WORK, "m.onnx"), ("relu", "sigmoid"))
small_model(os.path.join(WORK, "other.onnx"), ("act_a", "act_b"), conv=True)
np.save(os.path.join(WORK, "x.npy"), np.ones((1, 4, 4, 4), np.float32))
assert run("atc", "--framework=5", "--model=m.onnx", "--output=m", "--soc_version=Ascend310P3")[0] == 0
assert run("atc", "--framework=5", "--model=other.onnx", "--output=other", "--soc_version=Ascend310P3")[0] == 0
# Two dumps that share no op: the NPU dump of `other`, the golden dump of `m`.
for name, model in (("npu", "other.om"), ("gold", "m.onnx")):
    with open(os.path.join(WORK, f"acl_{name}.json"), "w") as f:
        json.dump({"dump": {"dump_path": f"dump_{name}", "dump_list": [], "dump_mode": "all"}}, f)
    assert run("msame", "--model", model, "--input", "x.npy", "--acl_json_path", f"acl_{name}.json")[0] == 0


def step(root):
    for d, _, files in os.walk(os.path.join(WORK, root)):
        if files:
            return os.path.relpath(d, WORK)


# (tool, case, argv, exit code, text the message must name, path that must not appear)
CASES = [
    ("atc", "unknown flag", ["--framework=5", "--model=m.onnx", "--output=o1", "--soc_version=Ascend310P3", "--bogus=1"], 2, "[--bogus]", "o1.om"),
    ("atc", "required flag", ["--framework=5", "--model=m.onnx", "--output=o2"], 2, "--soc_version", "o2.om"),
    ("atc", "missing file", ["--framework=5", "--model=missing.onnx", "--output=o3", "--soc_version=Ascend310P3"], 1, "--model", "o3.om"),
    ("atc", "nothing to do", ["--mode=diff", "m.om"], 2, "--mode", None),
    ("msame", "unknown flag", ["--model", "m.om", "--bogus", "1", "--output", "ms1"], 2, "--bogus", "ms1"),
    ("msame", "required flag", ["--input", "x.npy", "--output", "ms2"], 2, "--model", "ms2"),
    ("msame", "missing file", ["--model", "m.om", "--input", "missing.npy", "--output", "ms3"], 1, "--input", "ms3"),
    ("msaccucmp", "unknown flag", ["compare", "-m", "dump_npu", "-g", "dump_gold", "-out", "c1", "--bogus"], 2, "--bogus", "c1"),
    ("msaccucmp", "required flag", ["compare", "-g", "dump_gold", "-out", "c2"], 2, "--my_dump_path", "c2"),
    # CLI11 checks required flags before leftovers: the typo must still be what is named.
    ("msaccucmp", "unknown flag and a required one missing", ["compare", "-g", "dump_gold", "-out", "c5", "--bogus"], 2, "[--bogus]", "c5"),
    ("msaccucmp", "unknown flag, no subcommand", ["--bogus"], 2, "[--bogus]", None),
    ("msaccucmp", "required subcommand", [], 2, "[subcommand]", None),
    ("msaccucmp", "missing file", ["compare", "-m", "missing", "-g", "dump_gold", "-out", "c3"], 1, "-m", "c3"),
    ("msaccucmp", "nothing to do", ["compare", "-m", step("dump_npu"), "-g", step("dump_gold"), "-out", "c4"], 2, "no tensor pair", None),
    ("transplt", "unknown flag", ["-i", "src", "-o", "t1", "--bogus"], 2, "--bogus", "t1"),
    ("transplt", "required flag", ["-i", "src"], 2, "-o/--output", "src_msft"),
    ("transplt", "missing file", ["-i", "missing", "-o", "t3"], 1, "--input", "t3"),
    ("transplt", "nothing to do", ["-i", "empty", "-o", "t4"], 2, "no Python file", "t4"),
    ("profparse", "unknown flag", ["--export=on", "--output=empty", "--bogus=1"], 2, "[--bogus]", None),
    ("profparse", "required flag", [], 2, "--export", None),
    ("profparse", "missing file", ["--export=on", "--output=missing"], 1, "--output", None),
    ("profparse", "nothing to do", ["--export=on", "--output=empty"], 2, "PROF_", None),
    ("aoe", "unknown flag", ["--framework=5", "--model=m.onnx", "--job_type=2", "--soc_version=Ascend310P3", "--bogus=1"], 2, "[--bogus]", None),
    ("aoe", "required flag", ["--framework=5", "--model=m.onnx", "--soc_version=Ascend310P3"], 2, "--job_type", None),
    ("aoe", "missing file", ["--framework=5", "--model=missing.onnx", "--job_type=2", "--soc_version=Ascend310P3"], 1, "--model", None),
    ("aoe", "nothing to do", ["--framework=5", "--model_path=empty", "--job_type=2", "--soc_version=Ascend310P3"], 2, ".onnx", None),
]

for tool, case, argv, want, names, leftover in CASES:
    code, text = run(tool, *argv)
    check(code == want, f"{tool} {case}: exit {code}, want {want}" + ("" if code == want else "\n" + text))
    check(names in text, f"{tool} {case}: the message names {names!r}" + ("" if names in text else "\n" + text))
    if leftover:
        check(not os.path.exists(os.path.join(WORK, leftover)), f"{tool} {case}: nothing written ({leftover})")

# Errors name the parameter the user typed.
with open(os.path.join(WORK, "bad.om"), "wb") as f:
    f.write(b"not an om")
code, text = run("msame", "--model", "bad.om")
check(code == 1 and "parameter [--model]" in text, "a corrupt .om given to msame names --model")
code, text = run("transplt", "-i", "src", "-o", "t9", "-r", "missing.json")
check(code == 1 and "parameter [-r/--rule]" in text, "a missing transplt rule file names -r/--rule")
conv = next(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(WORK, "dump_npu")) for f in fs if f.startswith("Conv2D"))
code, text = run("msaccucmp", "convert", "-d", conv, "-f", "ND", "-out", "conv")
check("Value [ND] for parameter [-f]" in text and "-f NCHW" in text, "convert -f names the value given and the -f that works")
code, text = run("msaccucmp", "convert", "-d", conv, "-f", "NCHW", "-out", "conv")
check(code == 0 and re.search(r"The command was completed and took \d+ seconds\.\n$", text), "msaccucmp closes with CANN's 'took N seconds' line")

# CANN's spellings: one dash before long flags, --h for help.
code, text = run("atc", "-mode=6", "-om=m.om")
check(code == 0 and "Display Model Info start" in text, "atc -mode=6 -om=m.om works as --mode=6 --om=m.om")
code, text = run("atc", "--help")
groups = ["General:", "Input:", "Output:", "Target:", "Feature:", "Model Tuning:", "Operator Tuning:", "Debug:"]
check(all(g in text for g in groups), "atc --help is grouped as CANN's: " + ", ".join(groups))
for tool in TOOL:
    code, text = run(tool, "--h")
    check(code == 0 and f"Usage: {tool}" in text, f"{tool} --h prints help with the program name")

# msame --input DIR: one inference per file, outputs named after the inputs.
images = os.path.join(WORK, "images")
os.makedirs(images)
rng = np.random.default_rng(0)
for k in range(100):
    np.save(os.path.join(images, f"img_{k:03d}.npy"), rng.standard_normal((1, 4, 4, 4)).astype(np.float32))
code, text = run("msame", "--model", "m.onnx", "--input", "images", "--output", "out100", "--outfmt", "NPY")
written = sorted(os.listdir(os.path.join(WORK, "out100"))) if code == 0 else []
check(code == 0 and written == [f"img_{k:03d}_output_0.npy" for k in range(100)], f"msame --input DIR: 100 outputs named after the inputs ({len(written)})")
if written:
    x = np.load(os.path.join(images, "img_042.npy"))
    y = np.load(os.path.join(WORK, "out100", "img_042_output_0.npy"))
    check(np.allclose(y, 1 / (1 + np.exp(-np.maximum(x, 0))), atol=1e-6), "each output is its own input's result")
other = os.path.join(WORK, "images2")
os.makedirs(other)
np.save(os.path.join(other, "one.npy"), np.zeros((1, 4, 4, 4), np.float32))
code, text = run("msame", "--model", "m.onnx", "--input", "images,images2")
check(code == 1 and "holds 1 file(s)" in text, "folders with different file counts are an error naming them")
# The .onnx reference path takes another shape; an .om keeps the one atc gave it.
np.save(os.path.join(WORK, "big.npy"), np.ones((2, 4, 8, 8), np.float32))
code, text = run("msame", "--model", "m.onnx", "--input_shape", "x:2,4,8,8", "--input", "big.npy", "--output", "big", "--outfmt", "NPY")
out = os.path.join(WORK, "big", "m_output_0.npy")
check(code == 0 and os.path.exists(out) and np.load(out).shape == (2, 4, 8, 8), "msame x.onnx --input_shape runs at the new shape")
code, text = run("msame", "--model", "m.om", "--input_shape", "x:2,4,8,8")
check(code == 1 and "--input_shape" in text, "--input_shape on an .om is refused, naming the flag")

# msaccucmp -cf: the fused model's dump against the same model converted with fusion off.
with open(os.path.join(WORK, "all_off.json"), "w") as f:
    json.dump({"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}, f)
for tag, flags in (("fused", []), ("unfused", ["--fusion_switch_file=all_off.json"])):
    assert run("atc", "--framework=5", "--model=other.onnx", f"--output={tag}", "--soc_version=Ascend310P3", *flags)[0] == 0
    assert run("atc", "--mode=1", f"--om={tag}.om", f"--json={tag}.json")[0] == 0
    with open(os.path.join(WORK, f"acl_{tag}.json"), "w") as f:
        json.dump({"dump": {"dump_path": f"dump_{tag}", "dump_list": [], "dump_mode": "output"}}, f)
    assert run("msame", "--model", f"{tag}.om", "--input", "x.npy", "--acl_json_path", f"acl_{tag}.json", "--output", tag)[0] == 0
fused_ops = json.load(open(os.path.join(WORK, "fused.json")))["graph"][0]["op"]
conv = next(o for o in fused_ops if o["name"] == "conv")
absorbed = next(a["value"]["list"]["s"] for a in conv["attr"] if a["key"] == "_datadump_original_op_names")
code, text = run("msaccucmp", "compare", "-m", step("dump_fused"), "-g", step("dump_unfused"), "-f", "fused.json", "-cf", "unfused.json", "-out", "cf")
rows = [r.split(",") for r in open(glob.glob(os.path.join(WORK, "cf", "result_*.csv"))[0]).read().splitlines()[1:]]
conv_row = next(r for r in rows if r[2] == "conv")
check(code == 0 and absorbed == ["conv", "act_a"] and conv_row[5] == "act_a", f"-cf: the fused conv+relu is compared with the unfused relu ({conv_row[:6]})")
check("FAIL 0" in text and "SKIP 0" in text, "-cf: every fused op finds its fusion-off twin and agrees with it")
code, text = run("msaccucmp", "compare", "-m", step("dump_fused"), "-g", step("dump_unfused"), "-cf", "unfused.json", "-out", "cf2")
check(code == 2 and "[-cf]" in text, "-cf without -f is a usage error naming -cf")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print(f"ok   {len(CASES)} convention cases")
