#!/usr/bin/python3
"""Recomputes every dumped op of a small fp16 CNN (force_fp16, Ascend310P3) in numpy from its own dumped inputs:
elementwise ops must be within 1 ulp of numpy's correctly rounded result, transcendental ones within 4, and
Conv2D/MatMulV2 within fp32-accumulation error. Dumps are read back through `msaccucmp convert` without -f, so
tensors stay in their device formats (NC1HWC0, FRACTAL_Z, FRACTAL_NZ); this test undoes them with its own numpy
code, checks that the padding is zero, and that every TransData moved its input unchanged.
usage: test_recompute_dumps.py BUILD_DIR WORK_DIR"""
import glob
import json
import os
import re
import shutil
import sys
from collections import defaultdict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = sys.argv[1:3]
ATC, MSAME, CMP = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame", "tools/msaccucmp/msaccucmp"))
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
rng = np.random.default_rng(0)


def sh(*args):
    return T.call(args).stdout


inits = {"w": (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32), "b": rng.standard_normal(8).astype(np.float32),
         "three": np.array(3, np.float32), "fc_w": (rng.standard_normal((10, 128)) * 0.1).astype(np.float32),
         "fc_b": rng.standard_normal(10).astype(np.float32)}
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
         helper.make_node("Mul", ["r", "s"], ["m"], name="swish"),  # torch's SiLU: stays Sigmoid and Mul, as in CANN
         helper.make_node("MaxPool", ["m"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Exp", ["p"], ["e"], name="exp"),
         helper.make_node("Add", ["e", "three"], ["a"], name="add"),
         helper.make_node("Sqrt", ["a"], ["q"], name="sqrt"),
         helper.make_node("Div", ["p", "q"], ["d"], name="div"),
         helper.make_node("Sigmoid", ["d"], ["gs"], name="gate_sigmoid"),  # gates another tensor
         helper.make_node("Mul", ["q", "gs"], ["gm"], name="gate_mul"),
         helper.make_node("Flatten", ["gm"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1)]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(v, k) for k, v in inits.items()])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{WORK}/cnn.onnx")
np.save(f"{WORK}/x.npy", rng.standard_normal((1, 4, 8, 8)).astype(np.float32))
sh(ATC, "--framework=5", f"--model={WORK}/cnn.onnx", f"--output={WORK}/cnn", "--soc_version=Ascend310P3")
json.dump({"dump": {"dump_path": f"{WORK}/dump", "dump_list": [], "dump_mode": "all"}}, open(f"{WORK}/acl.json", "w"))
sh(MSAME, "--model", f"{WORK}/cnn.om", "--input", f"{WORK}/x.npy", "--acl_json_path", f"{WORK}/acl.json")
(step,) = glob.glob(f"{WORK}/dump/*/0/cnn/1/0")
sh(CMP, "convert", "-d", step, "-out", f"{WORK}/npy")
sh(ATC, "--mode=1", f"--om={WORK}/cnn.om", f"--json={WORK}/cnn.json")
graph = json.load(open(f"{WORK}/cnn.json"))["graph"][0]
descs = {re.sub(r"\W", "_", op["name"]): op for op in graph["op"]}


def origin_shape(desc):
    (attr,) = [a for a in desc["attr"] if a["key"] == "origin_shape"]
    return attr["value"]["list"].get("i", [])  # a scalar's origin shape is an empty list


def to_origin(a, desc):
    """The device layout `desc` names, undone: NC1HWC0 and FRACTAL_Z -> NCHW, FRACTAL_NZ -> ND. Padding must be 0."""
    fmt, shape = desc["layout"], origin_shape(desc)
    assert list(a.shape) == desc.get("shape", {}).get("dim", []), (desc["name"], a.shape)
    if fmt == "NC1HWC0":
        n, c1, h, w, c0 = a.shape
        full = a.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)
        out = full[:, :shape[1]]
        pad = full[:, shape[1]:]
    elif fmt == "FRACTAL_Z":
        n, c, h, w = shape
        c1hw, n1, n0, c0 = a.shape
        full = a.reshape(c1hw // (h * w), h, w, n1 * n0, c0).transpose(3, 0, 4, 1, 2).reshape(n1 * n0, -1, h, w)
        out, pad = full[:n, :c], np.concatenate([full[n:].ravel(), full[:n, c:].ravel()])
    elif fmt == "FRACTAL_NZ":
        *batch, c1, r1, r0, c0 = a.shape
        full = np.moveaxis(a, -4, -2).reshape(*batch, r1 * r0, c1 * c0)  # (..., r1, r0, c1, c0)
        rows, cols = (shape[-2] if len(shape) > 1 else 1), shape[-1]
        out = full[..., :rows, :cols].reshape(shape)
        pad = np.concatenate([full[..., rows:, :].ravel(), full[..., :rows, cols:].ravel()])
    else:
        return a
    assert not np.any(pad), f"{desc['name']}: {fmt} padding is not zero"
    formats_seen.add(fmt)
    return np.ascontiguousarray(out)


formats_seen = set()

ops = defaultdict(lambda: {"input": {}, "output": {}})
for f in glob.glob(f"{WORK}/npy/*.npy"):
    m = re.match(r"(\w+)\.(.+)\.\d+\.\d+\.\d+\.(input|output)\.(\d+)\.npy$", os.path.basename(f))
    op = descs[m[2]]
    ops[(m[1], m[2])][m[3]][int(m[4])] = to_origin(np.load(f), op[f"{m[3]}_desc"][int(m[4])])


def ulps(a, b):
    """Distance in fp16 units in the last place (sign-magnitude order)."""
    def key(x):
        i = x.astype(np.float16).view(np.int16).astype(np.int32)
        return np.where(i < 0, -(i & 0x7FFF), i)
    return int(np.abs(key(a) - key(b)).max())


def conv(x, w, b):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], axis=2)  # n,c,9,h,w
    return np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, 9)) + b[None, :, None, None]


elementwise = {"Mul": (lambda i: i[0] * i[1], 1), "Add": (lambda i: i[0] + i[1], 1), "RealDiv": (lambda i: i[0] / i[1], 1),
               "Sqrt": (lambda i: np.sqrt(i[0]), 1), "Sigmoid": (lambda i: 1 / (1 + np.exp(-i[0])), 4),
               "Exp": (lambda i: np.exp(i[0]), 4),
               "MaxPoolV3": (lambda i: i[0].reshape(1, 8, 4, 2, 4, 2).max(axis=(3, 5)), 0)}
checked = set()
for (kind, name), t in sorted(ops.items()):
    raw = [t["input"][k] for k in sorted(t["input"])]
    ins = [r.astype(np.float64) for r in raw]
    out = t["output"][0]
    if kind not in ("Cast", "TransData", "Flatten"):
        assert all(r.dtype == np.float16 for r in raw), f"{name}: the dump holds real fp16 inputs (weights included)"
    if kind == "Cast":
        want = ins[0].astype(out.dtype)
        assert np.array_equal(want, out), name
    elif kind == "Flatten":
        assert np.array_equal(raw[0].reshape(out.shape), out), name
    elif kind == "TransData":
        assert raw[0].dtype == out.dtype and np.array_equal(raw[0], out), f"{name}: TransData changed values"
    elif kind == "MatMulV2":
        exact = ins[0] @ ins[1].T + ins[2]  # Gemm transB=1
        bound = np.abs(ins[0]) @ np.abs(ins[1]).T * 2 ** -20 + np.abs(exact) * 2 ** -11 + np.abs(ins[2]) * 2 ** -11
        assert out.dtype == np.float16 and np.all(np.abs(out.astype(np.float64) - exact) <= bound), f"{name}: {np.abs(out - exact).max()}"
    elif kind == "Conv2D":
        assert out.dtype == np.float16
        exact = np.maximum(conv(*ins), 0)  # Relu runs inside the conv (UB fusion)
        bound = np.abs(conv(np.abs(ins[0]), np.abs(ins[1]), np.abs(ins[2]))) * 2 ** -20 + np.abs(exact) * 2 ** -11
        assert np.all(np.abs(out.astype(np.float64) - exact) <= bound), f"{name}: {np.abs(out - exact).max()}"
    else:
        fn, tol = elementwise[kind]
        d = ulps(fn(ins).astype(np.float16), out)
        assert out.dtype == np.float16 and d <= tol, f"{kind} {name}: {d} ulp > {tol}"
    checked.add(kind)
    print(f"ok   {kind:10s} {name}")
assert checked >= {"Cast", "TransData", "Conv2D", "Sigmoid", "Mul", "MaxPoolV3", "Exp", "Add", "Sqrt", "RealDiv", "MatMulV2"}, checked
assert formats_seen == {"NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ"}, formats_seen
print(f"ok   {len(ops)} dumped ops recomputed")
