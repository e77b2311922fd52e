"""Dump collection end to end: atc -> msame --acl_json_path (dump all) -> msame on the .onnx (golden)
-> msaccucmp compare -f on torchvision resnet18; dump_step/dump_list selection; acl.json errors;
overflow records; long op names through mapping.csv.
Usage: test_dump_e2e.py SRC_DIR BUILD_DIR WORK_DIR"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
ATC, MSAME, CMP = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame", "tools/msaccucmp/msaccucmp"))
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
checks = T.Checks()
check, failures = checks.check, checks.failures




def run(*args, expect=0):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if p.returncode != expect:
        check(False, f"exit {p.returncode} != {expect}: {' '.join(args)}\n{p.stdout}{p.stderr}")
    return p


def acl(name, dump):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(dump if isinstance(dump, str) else json.dumps({"dump": dump}))
    return path


def step_dirs(root, model):
    return sorted(glob.glob(f"{root}/*/0/{model}/1/*"))


# ---- resnet18: every op compared, fp32 cosine >= 0.9999 ---------------------------------------------
subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/e2e/export_models.py"), WORK, "resnet18:13"], check=True)
onnx_path, inp = f"{WORK}/resnet18_op13.onnx", f"{WORK}/resnet18_input.npy"
run(ATC, "--framework=5", f"--model={onnx_path}", f"--output={WORK}/resnet18", "--soc_version=Ascend310",
    "--precision_mode=must_keep_origin_dtype")
run(ATC, "--mode=1", f"--om={WORK}/resnet18.om", f"--json={WORK}/resnet18.json")
cfg = acl("acl_all.json", {"dump_path": f"{WORK}/dump", "dump_list": [], "dump_mode": "all"})
run(MSAME, "--model", f"{WORK}/resnet18.om", "--input", inp, "--acl_json_path", cfg)
run(MSAME, "--model", onnx_path, "--input", inp, "--acl_json_path", cfg)
(npu_dir,) = step_dirs(f"{WORK}/dump", "resnet18")
(gold_dir,) = step_dirs(f"{WORK}/dump", "resnet18_op13")
run(CMP, "compare", "-m", npu_dir, "-g", gold_dir, "-f", f"{WORK}/resnet18.json", "-out", f"{WORK}/cmp")
(result,) = glob.glob(f"{WORK}/cmp/result_*.csv")
rows = list(csv.reader(open(result)))
header, rows = rows[0], rows[1:]
col = {h: i for i, h in enumerate(header) if h not in col} if False else {}
for i, h in enumerate(header):
    col.setdefault(h, i)
ops = [o["name"] for o in T.model_ops(f"{WORK}/resnet18.json")]  # the ops with tasks (no Data, Const, NetOutput)
seen = {r[col["NPUDump"]] for r in rows}
check(set(ops) <= seen, f"every op of resnet18 has rows ({len(set(ops) - seen)} missing)")
# Outputs of the layout changes atc inserted have no framework op (their inputs compare like any other).
inserted = [r for r in rows if r[col["OpType"]] == "TransData" and ":output:" in r[col["TensorIndex"]]]
cos = [float(r[col["CosineSimilarity"]]) for r in rows if r not in inserted]
check(len(cos) > len(ops) - len(inserted) and min(cos) >= 0.9999, f"fp32 cosine >= 0.9999 for all {len(cos)} framework rows (min {min(cos)})")
check(all(r[col["Verdict"]] == "PASS" for r in rows if r not in inserted), "every row of a framework op PASSes")
check(all(r[col["Verdict"]] == "SKIP" and r[col["CompareFailReason"]] == "no golden data" for r in inserted),
      f"the {len(inserted)} inserted TransData outputs are SKIP: no golden data")
dumps = [f for f in os.listdir(npu_dir)]
check(all(len(f.split(".")) == 5 for f in dumps), "dump names are {type}.{name}.{task}.{stream}.{time}")

# ---- dump_step / dump_list / dump_mode selection --------------------------------------------------
first = ops[0]
cfg = acl("acl_sel.json", {"dump_path": f"{WORK}/sel", "dump_list": [{"model_name": "resnet18", "layer": [first]}],
                           "dump_mode": "input", "dump_step": "1|3"})
run(MSAME, "--model", f"{WORK}/resnet18.om", "--input", inp, "--acl_json_path", cfg, "--loop", "4")
steps = step_dirs(f"{WORK}/sel", "resnet18")
check([os.path.basename(s) for s in steps] == ["1", "3"], f"dump_step 1|3 -> steps {steps}")
for s in steps:
    files = os.listdir(s)
    check(len(files) == 1, f"dump_list layer selects one op per step ({files})")
run(CMP, "convert", "-d", steps[0], "-out", f"{WORK}/sel_conv")
check(len(glob.glob(f"{WORK}/sel_conv/*.input.*.npy")) == 3 and not glob.glob(f"{WORK}/sel_conv/*.output.*"),
      "dump_mode input writes inputs only (data, weight, bias)")
x = np.load(glob.glob(f"{WORK}/sel_conv/*.input.0.npy")[0])
check(np.array_equal(x, np.load(inp)), "the dumped input equals the model input")

# ---- acl.json mistakes: clear EC0013 errors, nothing written ----------------------------------------
bad = {
    "mode": {"dump_path": f"{WORK}/bad", "dump_list": [], "dump_mode": "everything"},
    "step": {"dump_path": f"{WORK}/bad", "dump_list": [], "dump_step": "5-1"},
    "both": {"dump_path": f"{WORK}/bad", "dump_list": [], "dump_debug": "on"},
    "no_path": {"dump_list": []},
    "layer": {"dump_path": f"{WORK}/bad", "dump_list": [{"model_name": "m", "layer": "conv1"}]},
}
for name, d in bad.items():
    p = run(MSAME, "--model", f"{WORK}/resnet18.om", "--input", inp, "--acl_json_path", acl(f"bad_{name}.json", d), expect=1)
    check("EC0013" in p.stdout, f"acl.json {name}: EC0013 ({p.stdout.strip()})")
p = run(MSAME, "--model", f"{WORK}/resnet18.om", "--acl_json_path", acl("bad_json.json", "{\"dump\": {"), expect=1)
check("EC0013" in p.stdout, "malformed acl.json")
check(not os.path.exists(f"{WORK}/bad"), "no dump folder after a config error")

# ---- overflow records, and a 300-character op name through mapping.csv -----------------------------
long_name = "n" * 300
graph = helper.make_graph(
    [helper.make_node("Mul", ["x", "x"], ["y"], name=long_name), helper.make_node("Relu", ["y"], ["z"], name="relu")],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])], [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, f"{WORK}/sq.onnx")
np.save(f"{WORK}/sq_in.npy", np.array([1, 2, 1e30, 3], np.float32))
run(ATC, "--framework=5", f"--model={WORK}/sq.onnx", f"--output={WORK}/sq", "--soc_version=Ascend310",
    "--precision_mode=must_keep_origin_dtype")
cfg = acl("acl_dbg.json", {"dump_path": f"{WORK}/ovf", "dump_debug": "on"})
p = run(MSAME, "--model", f"{WORK}/sq.om", "--input", f"{WORK}/sq_in.npy", "--acl_json_path", cfg)
check("1 overflow(s)" in p.stdout, "msame counts one overflow (Mul; Relu only passes the Inf on)")
(ovf_dir,) = step_dirs(f"{WORK}/ovf", "sq")
check(len(glob.glob(f"{ovf_dir}/Opdebug.Node_OpDebug.*")) == 1, "one Opdebug record")
check(os.path.exists(f"{ovf_dir}/mapping.csv"), "the long dump name is hashed into mapping.csv")
p = run(CMP, "overflow", "-d", f"{WORK}/ovf", "-out", f"{WORK}/ovf_out")
check("Overflow records: 1" in p.stdout and "Inf/NaN elements 1" in p.stdout and "Mul" in p.stdout, "overflow summary:\n" + p.stdout)
run(CMP, "convert", "-d", ovf_dir, "-out", f"{WORK}/ovf_conv")
(rec,) = glob.glob(f"{WORK}/ovf_conv/Opdebug*.json")
check(json.load(open(rec))["non_finite"] == 1, "convert decodes the overflow record to JSON")
cfg = acl("acl_sq.json", {"dump_path": f"{WORK}/sq_dump", "dump_list": []})
np.save(f"{WORK}/sq_ok.npy", np.array([1, 2, -3, 4], np.float32))
shutil.copy(f"{WORK}/sq.onnx", f"{WORK}/sq_ref.onnx")
run(MSAME, "--model", f"{WORK}/sq.om", "--input", f"{WORK}/sq_ok.npy", "--acl_json_path", cfg)
run(MSAME, "--model", f"{WORK}/sq_ref.onnx", "--input", f"{WORK}/sq_ok.npy", "--acl_json_path", cfg)
(n_dir,) = step_dirs(f"{WORK}/sq_dump", "sq")
(g_dir,) = step_dirs(f"{WORK}/sq_dump", "sq_ref")
check(len(glob.glob(f"{g_dir}/*.npy")) == 3 and os.path.exists(f"{g_dir}/mapping.csv"), "golden: input, Mul (hashed) and Relu")
p = run(CMP, "compare", "-m", n_dir, "-g", g_dir, "-out", f"{WORK}/sq_cmp")
text = open(glob.glob(f"{WORK}/sq_cmp/result_*.csv")[0]).read()
check(long_name in text and ",PASS," in text.split("\n")[1], "the hashed long names are matched through mapping.csv:\n" + text)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
