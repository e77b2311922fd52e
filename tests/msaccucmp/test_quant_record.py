#!/usr/bin/python3
"""msaccucmp compare -q: a quantized model's NPU dump against the golden data of the model before quantization,
matched through AMCT's quantization record (issue 15).

npukit has no int8 path, so the quantized model is what AMCT's fake-quant model is: the same network with
its weights rounded to the int8 grid, fake-quantize ops on the activations (ONNX spellings `.quant`/`.dequant`)
and ops renamed (Conv_0_q for conv1, ...). The record, which AMCT would write, is the GE JSON of that model whose ops name the ops before
quantization they stand for. The integer filter (ops between a quantize with int8 output and its dequantize)
is checked on a record in CANN's own dtype spelling.
usage: test_quant_record.py BUILD_DIR WORK_DIR"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = map(os.path.abspath, sys.argv[1:3])
TOOL = {t: os.path.join(BUILD, "tools", t, t) for t in ("atc", "msame", "msaccucmp")}
checks = T.Checks()
check, failures = checks.check, checks.failures
SCALE = 0.05  # the activation and weight quantization step


def run(tool, *args):
    r = subprocess.run([TOOL[tool], *map(str, args)], capture_output=True, text=True, cwd=WORK)
    return r.returncode, r.stdout + r.stderr




rng = np.random.default_rng(7)
W1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
W2 = rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3


def model(path, names, weights, fake_quant):
    """conv -> relu -> conv -> sigmoid; with fake_quant, the input is quantized and dequantized first."""
    c1, r1, c2, s = names
    nodes, inits, src = [], [numpy_helper.from_array(weights[0], "w1"), numpy_helper.from_array(weights[1], "w2")], "x"
    if fake_quant:  # AMCT's ONNX spellings: <layer>.quant ... <layer>.dequant
        inits += [numpy_helper.from_array(np.float32(1 / SCALE), "inv_s"), numpy_helper.from_array(np.float32(SCALE), "s"),
                  numpy_helper.from_array(np.float32(-128), "lo"), numpy_helper.from_array(np.float32(127), "hi")]
        nodes += [helper.make_node("Mul", ["x", "inv_s"], ["q0"], name=f"{c1}.quant"),
                  helper.make_node("Round", ["q0"], ["q1"], name=f"{c1}.quant_round"),
                  helper.make_node("Clip", ["q1", "lo", "hi"], ["q2"], name=f"{c1}.quant_clip"),
                  helper.make_node("Mul", ["q2", "s"], ["xq"], name=f"{c1}.dequant")]
        src = "xq"
    nodes += [helper.make_node("Conv", [src, "w1"], ["a"], name=c1, pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["a"], ["b"], name=r1),
              helper.make_node("Conv", ["b", "w2"], ["c"], name=c2),
              helper.make_node("Sigmoid", ["c"], ["y"], name=s)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return nodes


def record(nodes, before):
    """AMCT's record: the quantized model's ops, each naming the op before quantization it stands for."""
    ops = []
    for n in nodes:
        attr = [{"key": "_datadump_original_op_names", "value": {"list": {"s": [before[n.name]] if n.name in before else []}}}]
        ops.append({"name": n.name, "type": n.op_type, "input": list(n.input), "attr": attr,
                    "output_desc": [{"dtype": "DT_FLOAT"} for _ in n.output]})
    return {"name": "quantized", "graph": [{"name": "quantized", "op": ops}]}


ORIGINAL = ("conv1", "relu1", "conv2", "prob")
QUANTIZED = ("Conv_0_q", "Relu_1_q", "Conv_2_q", "Sigmoid_3_q")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
quantize = lambda w: np.clip(np.round(w / SCALE), -128, 127).astype(np.float32) * SCALE
model("orig.onnx", ORIGINAL, (W1, W2), False)
qnodes = model("quant.onnx", QUANTIZED, (quantize(W1), quantize(W2)), True)
json.dump(record(qnodes, dict(zip(QUANTIZED, ORIGINAL))), open("quant_record.json", "w"))
np.save("x.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
with open("all_off.json", "w") as f:
    json.dump({"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}, f)


def dumped(tag, model_file, mode="output"):
    with open(f"acl_{tag}.json", "w") as f:
        json.dump({"dump": {"dump_path": f"dump_{tag}", "dump_list": [], "dump_mode": mode}}, f)
    assert run("msame", "--model", model_file, "--input", "x.npy", "--acl_json_path", f"acl_{tag}.json", "--output", f"out_{tag}")[0] == 0
    return next(os.path.relpath(d, WORK) for d, _, files in os.walk(f"dump_{tag}") if files)


def result_rows(out):
    with open(glob.glob(f"{out}/result_*.csv")[0], newline="") as f:
        return list(csv.DictReader(f))


golden = dumped("golden", "orig.onnx")
for tag, flags in (("q", []), ("q_off", ["--fusion_switch_file=all_off.json"])):
    assert run("atc", "--framework=5", "--model=quant.onnx", f"--output={tag}", "--soc_version=Ascend310P3",
               "--precision_mode=must_keep_origin_dtype", *flags)[0] == 0
    assert run("atc", "--mode=1", f"--om={tag}.om", f"--json={tag}.json")[0] == 0
npu = dumped("q", "q.om")

# Without the record the quantized model's names match nothing of the golden.
code, text = run("msaccucmp", "compare", "-m", npu, "-g", golden, "-f", "q.json", "-out", "plain")
check(code == 2, f"-f alone: the renamed ops find no golden, nothing to compare (exit {code})")

# With it, the fused conv+relu is compared with the original relu1, the last op with prob.
code, text = run("msaccucmp", "compare", "-m", npu, "-g", golden, "-f", "q.json", "-q", "quant_record.json", "-out", "mapped")
rows = result_rows("mapped") if code == 0 else []
by_op = {r["NPUDump"]: r for r in rows}
conv = by_op.get("Conv_0_q", {})
check(code == 0 and conv.get("GroundTruth") == "conv1,relu1", f"-f -q: the fused Conv_0_q stands for conv1,relu1 ({conv.get('GroundTruth')})")
cos = float(conv.get("CosineSimilarity", "nan"))
check(0.99 < cos < 0.999999, f"-f -q: conv1's output differs by the quantization error only (cosine {cos})")
last = rows[-1] if rows else {}
check(last.get("GroundTruth", "").endswith("prob") and float(last.get("CosineSimilarity", "nan")) > 0.99,
      f"-f -q: the last op is compared with prob ({last.get('NPUDump')}: {last.get('GroundTruth')})")
fake = [r for r in rows if r["NPUDump"].startswith("Conv_0_q.")]
check(fake and all(r["GroundTruth"] == "*" for r in fake), "-f -q: the fake-quantize ops, which the model before quantization lacks, have no golden")

# The record alone: the quantized model's own per-op dump (fusion off), named as in the record.
npu_off = dumped("q_off", "q_off.om")
code, text = run("msaccucmp", "compare", "-m", npu_off, "-g", golden, "-q", "quant_record.json", "-out", "record_only")
rows = {r["NPUDump"]: r for r in result_rows("record_only")} if code == 0 else {}
check(code == 0 and all(rows.get(q, {}).get("GroundTruth") == o for q, o in zip(QUANTIZED, ORIGINAL)),
      "-q alone: every quantized op is compared with its op before quantization")

# The integer filter, on CANN's spelling of dtypes: a quantize op with int8 output, the ops reading it, and the
# dequantize with float16 output that ends the pair.
rule = json.load(open("q.json"))
for op in rule["graph"][0]["op"]:
    if op["name"] in ("Conv_0_q.quant", "Conv_0_q.dequant"):
        for d in op["output_desc"]:
            d["dtype"] = "DT_INT8" if op["name"] == "Conv_0_q.quant" else "DT_FLOAT16"
json.dump(rule, open("q_int8.json", "w"))
code, text = run("msaccucmp", "compare", "-m", npu, "-g", golden, "-f", "q_int8.json", "-q", "quant_record.json", "-out", "int8")
names = {r["NPUDump"] for r in result_rows("int8")} if code == 0 else set()
check(code == 0 and not names & {"Conv_0_q.quant", "Conv_0_q.quant_round", "Conv_0_q.quant_clip"} and "Conv_0_q.dequant" in names,
      f"integer ops between quantize and dequantize are not compared; the dequantize is ({sorted(names)})")
check("3 quantize op(s)" in text, "the summary says how many integer ops were left out")

# Misuse names -q.
code, text = run("msaccucmp", "compare", "-m", npu, "-g", npu, "-q", "quant_record.json", "-out", "bad1")
check(code != 0 and "[-q]" in text, "-q against NPU dumps is refused, naming -q")
code, text = run("msaccucmp", "compare", "-m", npu, "-g", golden, "-f", "q.json", "-q", "missing.json", "-out", "bad2")
check(code == 1 and "[-q]" in text, "a missing record names -q")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok   all quantization-record checks")
