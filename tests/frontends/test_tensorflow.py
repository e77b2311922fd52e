#!/usr/bin/python3
"""atc --framework=3 and msame's .pb reference path, against independent references: OpenCV DNN on the real
corpora it runs, tfgraph.py's numpy evaluator on the rest and on one hand-made GraphDef per op.
usage: test_tensorflow.py BUILD_DIR WORK_DIR"""
import functools
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfgraph  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ATC, MSAME, CMP = (os.path.join(BUILD, f"tools/{t}/{t}") for t in ("atc", "msame", "msaccucmp"))
CORPORA = T.DATA
TF = os.path.join(CORPORA, "tf")
RTOL = 1e-4  # fp32 paths: max |ours - reference| relative to max |reference|
pb2 = None


run = functools.partial(T.run, cwd=WORK)  # every command runs in the work folder


def must(*args):
    r = run(*args)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, f"shape {got.shape} != reference {ref.shape}"
    scale = max(np.abs(ref).max(), 1e-30) if ref.size else 1.0
    return float(np.abs(got - ref).max() / scale) if ref.size else 0.0


def reference_run(model, feeds, tag):
    """msame's fp32 reference path on a .pb: the outputs, in the model's output order."""
    ins = []
    for k, (name, x) in enumerate(feeds.items()):
        ins.append(os.path.join(WORK, f"{tag}_in{k}.npy"))
        np.save(ins[-1], x)
    out = os.path.join(WORK, f"{tag}_ref")
    shutil.rmtree(out, ignore_errors=True)
    must(MSAME, "--model", model, "--input", ",".join(ins), "--output", out, "--outfmt", "NPY")
    return [np.load(f) for f in sorted(glob.glob(os.path.join(out, "**/*_output_*.npy"), recursive=True), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))]


def outputs_of(folder):
    return [np.load(f) for f in sorted(glob.glob(os.path.join(folder, "**/*_output_*.npy"), recursive=True), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))]


def om_run(model, feeds, tag, *flags):
    """atc (fp32: must_keep_origin_dtype) then msame on the .om."""
    spec = ";".join(f"{n}:{','.join(map(str, x.shape))}" for n, x in feeds.items())
    must(ATC, "--framework=3", f"--model={model}", f"--output={os.path.join(WORK, tag)}", "--soc_version=Ascend310P3",
         "--precision_mode=must_keep_origin_dtype", f"--input_shape={spec}", *flags)
    ins = []
    for k, x in enumerate(feeds.values()):
        ins.append(os.path.join(WORK, f"{tag}_in{k}.npy"))
        np.save(ins[-1], x)
    out = os.path.join(WORK, f"{tag}_om")
    shutil.rmtree(out, ignore_errors=True)
    must(MSAME, "--model", os.path.join(WORK, tag + ".om"), "--input", ",".join(ins), "--output", out, "--outfmt", "NPY")
    return [np.load(f) for f in sorted(glob.glob(os.path.join(out, "**/*_output_*.npy"), recursive=True), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))]


def om_ops(om):
    """(type, name) of every op with a task of an npukit .om (not Data, Const, NetOutput), from atc --mode=1."""
    js = os.path.join(WORK, os.path.basename(om) + ".json")
    must(ATC, "--mode=1", f"--om={om}", f"--json={js}")
    return [(op["type"], op["name"]) for op in T.model_ops(js)]


def golden_run(model, x, tag):
    """msame's reference path on `model` with a golden dump of every op's output: the output and the dumped names."""
    np.save(os.path.join(WORK, f"{tag}_in.npy"), x)
    with open(os.path.join(WORK, f"{tag}.json"), "w") as f:
        json.dump({"dump": {"dump_path": f"{tag}_golden", "dump_list": [], "dump_mode": "output"}}, f)
    shutil.rmtree(os.path.join(WORK, f"{tag}_golden"), ignore_errors=True)
    must(MSAME, "--model", model, "--input", f"{tag}_in.npy", "--acl_json_path", f"{tag}.json", "--output", f"{tag}_out", "--outfmt", "NPY")
    dumped = {os.path.basename(f).split(".")[0] for f in glob.glob(os.path.join(WORK, f"{tag}_golden/**/*.npy"), recursive=True)}
    return outputs_of(os.path.join(WORK, f"{tag}_out"))[0], dumped


# ---- a protobuf wire reader for the real .om (ge_formats.md: header, partition table, ModelDef) ----------------

def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def _fields(b):
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, v


def real_om_op_types(path):
    data = open(path, "rb").read()
    assert data[:4] == b"IMOD"
    headsize, version = struct.unpack_from("<II", data, 4)
    count = struct.unpack_from("<I", data, headsize)[0]
    if version == 0x10000000:  # v1: the 12-byte table
        table = [struct.unpack_from("<III", data, headsize + 4 + 12 * k) for k in range(count)]
        base = headsize + 4 + 12 * count
    else:
        table = [struct.unpack_from("<IxxxxQQ", data, headsize + 8 + 24 * k) for k in range(count)]
        base = headsize + 8 + 24 * count
    (kind, off, size), = [t for t in table if t[0] == 0]  # MODEL_DEF
    model = data[base + off:base + off + size]
    types = []
    for f, graph in _fields(model):
        if f == 7:  # ModelDef.graph
            for g, op in _fields(graph):
                if g == 6:  # GraphDef.op
                    types.append(next(v for k, v in _fields(op) if k == 2).decode())  # OpDef.type
    return types


class Corpora(unittest.TestCase):
    """Every real frozen graph converts and runs; OpenCV DNN or the numpy evaluator agrees within 1e-4."""

    def test_opencv_models(self):
        import cv2
        rng = np.random.default_rng(1)
        cases = [("a3c_pong_model", "s", (1, 42, 42, 1), "W_0/actor/ap/Softmax", "W_0/actor/ap/Softmax:0"),
                 ("tf2onnx_fc-layers", "X", (3, 784), "model/pred/MatMul", "output:0"),
                 ("tf2onnx_ae0", "X", (3, 784), "decode/dense_1/Sigmoid", None),
                 ("tf2onnx_regression", "X", (3, 5), "Add", None)]
        for name, inp, shape, cv_out, out_node in cases:
            with self.subTest(model=name):
                x = rng.standard_normal(shape).astype(np.float32)
                net = cv2.dnn.readNetFromTensorflow(os.path.join(TF, name + ".pb"))
                net.setInput(x.transpose(0, 3, 1, 2) if x.ndim == 4 else x)
                ref = net.forward(cv_out)
                flags = [f"--out_nodes={out_node}"] if out_node else []
                (got,) = om_run(os.path.join(TF, name + ".pb"), {inp: x}, name, *flags)
                self.assertLess(rel_err(got, ref), RTOL)
                (got,) = reference_run(os.path.join(TF, name + ".pb"), {inp: x}, name) if not out_node else (got,)
                self.assertLess(rel_err(got, ref), RTOL)

    def test_numpy_models(self):
        rng = np.random.default_rng(2)
        cases = [("tf2onnx_ae0", {}), ("tf2onnx_regression", {}), ("tf2onnx_lstm", {"keep_prob": np.float32(1)}),
                 ("tf2onnx_gru", {"keep_prob": np.float32(1)})]
        for name, extra in cases:
            with self.subTest(model=name):
                g = pb2.GraphDef()
                g.ParseFromString(open(os.path.join(TF, name + ".pb"), "rb").read())
                feeds = {}
                for n in g.node:
                    if n.op != b"Placeholder":
                        continue
                    pname = n.name.decode()
                    shape = [d.size for e in n.attr if e.key == b"shape" for d in e.value.shape.dim] or [-1, 784]  # the RNNs' X has no shape attr
                    feeds[pname] = extra.get(pname, rng.standard_normal([2 if d < 0 else d for d in shape]).astype(np.float32))
                    feeds[pname] = np.asarray(feeds[pname], np.float32)
                outs = reference_run(os.path.join(TF, name + ".pb"), feeds, name)
                consumed = {i.decode().lstrip("^").split(":")[0] for n in g.node for i in n.input}
                sinks = [n.name.decode() for n in g.node if n.name.decode() not in consumed and n.op not in (b"NoOp", b"Const", b"Placeholder")]
                refs = tfgraph.evaluate(g, feeds, sinks)
                self.assertEqual(len(outs), len(refs))
                for got, ref in zip(outs, refs):
                    self.assertLess(rel_err(got, ref), RTOL)
                got_om = om_run(os.path.join(TF, name + ".pb"), feeds, name + "_om")
                for got, ref in zip(got_om, refs):
                    self.assertLess(rel_err(got, ref), RTOL)

    def test_a3c_matches_the_real_om(self):
        """The op types of npukit's .om in order, as CANN's (both drop the flattening Reshape: a shape-only op)."""
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=a3c310", "--soc_version=Ascend310",
             "--input_shape=s:1,42,42,1", "--input_format=NHWC")
        ignore = {"Const", "Data", "NetOutput"}
        real = [t for t in real_om_op_types(os.path.join(CORPORA, "om/a3c_pong_model.om")) if t not in ignore]
        ours = [t for t, _ in om_ops(os.path.join(WORK, "a3c310.om")) if t not in ignore]
        self.assertEqual(real, ["Cast", "TransData", "Conv2D", "Conv2D", "Conv2D", "TransData", "TransData", "MatMulV2", "MatMulV2",
                                "SoftmaxV2", "TransData", "ArgMaxD"])
        self.assertEqual(ours, real)

    def test_unsupported_ops_listed_at_once(self):
        """The RNN corpora are supported; a graph of control flow and a function library lists every op in one run."""
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [2])
        p = b.placeholder("p", np.bool_, [])
        b.node("Switch", "sw", [x, p], T=np.float32)
        b.node("Merge", "mg", ["sw", "sw:1"], T=np.float32, N=2)
        b.node("Enter", "en", ["mg"], T=np.float32)
        b.graph.library.function.add().signature.name = b"my_fn"
        b.node("my_fn", "call", ["en"])  # a Defun call: the function and the call are both reported
        model = b.save(os.path.join(WORK, "control_flow.pb"))
        r = run(ATC, "--framework=3", f"--model={model}", "--output=cf", "--soc_version=Ascend310P3")
        self.assertEqual(r.returncode, 1, r.stdout)
        out = r.stdout + r.stderr
        self.assertIn("E13010", out)
        self.assertIn("5 node(s) are not supported", out)
        for name in ("sw (type Switch)", "mg (type Merge)", "en (type Enter)", "my_fn (type FunctionDef)", "call (type my_fn)", "E12013"):
            self.assertIn(name, out)
        self.assertFalse(os.path.exists(os.path.join(WORK, "cf.om")))
        # With --out_nodes, only what the outputs need must convert: the control flow beside them does not matter.
        b.op("Relu", "r", [x])
        b.save(model)
        r = run(ATC, "--framework=3", f"--model={model}", "--output=cf_out", "--soc_version=Ascend310P3", "--out_nodes=r:0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run(ATC, "--mode=3", "--framework=3", f"--model={model}", "--soc_version=Ascend310P3", "--check_report=cf_report.json")
        report = json.load(open(os.path.join(WORK, "cf_report.json")))
        self.assertIn("Switch", json.dumps(report))


def _conv_cases(rng):
    x = rng.standard_normal((2, 9, 10, 4)).astype(np.float32)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        xf = x if fmt == "NHWC" else x.transpose(0, 3, 1, 2).copy()

        def s(v, fmt=fmt):  # a per-dim list in the data format
            return [1, v[0], v[1], 1] if fmt == "NHWC" else [1, 1, v[0], v[1]]
        for pad in ("SAME", "VALID"):
            cases.append((f"Conv2D_{fmt}_{pad}", xf, lambda b, i, fmt=fmt, pad=pad, s=s: b.op(
                "Conv2D", "y", [i, b.const("w", rng.standard_normal((3, 2, 4, 5)).astype(np.float32))], strides=s((2, 1)), padding=pad,
                data_format=fmt, dilations=s((1, 2)))))
            cases.append((f"Depthwise_{fmt}_{pad}", xf, lambda b, i, fmt=fmt, pad=pad, s=s: b.op(
                "DepthwiseConv2dNative", "y", [i, b.const("w", rng.standard_normal((3, 3, 4, 2)).astype(np.float32))], strides=s((1, 2)),
                padding=pad, data_format=fmt)))
            for pool in ("MaxPool", "AvgPool"):
                cases.append((f"{pool}_{fmt}_{pad}", xf, lambda b, i, fmt=fmt, pad=pad, pool=pool, s=s: b.op(
                    pool, "y", [i], ksize=s((3, 2)), strides=s((2, 2)), padding=pad, data_format=fmt)))
        cases.append((f"Conv2D_{fmt}_EXPLICIT_bias_relu", xf, lambda b, i, fmt=fmt, s=s: b.op("Relu", "y", [b.op(
            "BiasAdd", "ba", [b.op("Conv2D", "c", [i, b.const("w", rng.standard_normal((2, 2, 4, 3)).astype(np.float32))], strides=s((1, 1)),
                                   padding="EXPLICIT", explicit_paddings=[0, 0, 1, 0, 2, 1, 0, 0] if fmt == "NHWC" else [0, 0, 0, 0, 1, 0, 2, 1],
                                   data_format=fmt),
                           b.const("bias", rng.standard_normal(3).astype(np.float32))], data_format=fmt)])))
        cases.append((f"FusedBatchNormV3_{fmt}", xf, lambda b, i, fmt=fmt: b.op(
            "FusedBatchNormV3", "y", [i] + [b.const(n, (rng.random(4) + 0.5).astype(np.float32)) for n in ("sc", "of", "mu", "var")],
            epsilon=0.001, is_training=False, data_format=fmt, U=np.float32)))
        sizes = np.array([2, 18, 21, 4] if fmt == "NHWC" else [2, 4, 18, 21], np.int32)
        cases.append((f"Conv2DBackpropInput_{fmt}", rng.standard_normal((2, 9, 11, 3) if fmt == "NHWC" else (2, 3, 9, 11)).astype(np.float32),
                      lambda b, i, fmt=fmt, s=s, sizes=sizes: b.op(
                          "Conv2DBackpropInput", "y", [b.const("sizes", sizes), b.const("w", rng.standard_normal((3, 3, 4, 3)).astype(np.float32)), i],
                          strides=s((2, 2)), padding="SAME", data_format=fmt)))
    cases.append(("Pad_then_Conv2D", x, lambda b, i: b.op("Conv2D", "y", [b.op("Pad", "pad", [i, b.const("p", np.array(
        [[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))]), b.const("w", rng.standard_normal((3, 3, 4, 2)).astype(np.float32))],
        strides=[1, 1, 1, 1], padding="VALID")))
    for op, shape in (("Conv2D", (3, 3, 4, 5)), ("DepthwiseConv2dNative", (3, 3, 4, 1))):  # TF 1's atrous convolution, rate 2
        cases.append((f"Atrous_{op}", x, lambda b, i, op=op, shape=shape: b.op("BatchToSpaceND", "y", [b.op(op, "c", [b.op(
            "SpaceToBatchND", "stb", [i, b.const("blk", np.array([2, 2], np.int32)), b.const("pad", np.array([[2, 3], [2, 2]], np.int32))]),
            b.const("w", rng.standard_normal(shape).astype(np.float32))], strides=[1, 1, 1, 1], padding="VALID"),
            b.const("blk2", np.array([2, 2], np.int32)), b.const("crops", np.array([[0, 1], [0, 0]], np.int32))])))
    cases.append(("SpaceToBatchND_alone", x, lambda b, i: b.op("SpaceToBatchND", "y", [
        i, b.const("blk", np.array([2, 3], np.int32)), b.const("pad", np.array([[1, 0], [1, 1]], np.int32))])))
    cases.append(("BatchToSpaceND_alone", x, lambda b, i: b.op("BatchToSpaceND", "y", [
        i, b.const("blk", np.array([1, 2], np.int32)), b.const("crops", np.array([[1, 2], [0, 3]], np.int32))])))
    x5 = rng.standard_normal((1, 5, 6, 7, 2)).astype(np.float32)
    cases.append(("Conv3D_NDHWC", x5, lambda b, i: b.op("Conv3D", "y", [i, b.const("w", rng.standard_normal((2, 3, 2, 2, 3)).astype(np.float32))],
                                                        strides=[1, 1, 2, 1, 1], padding="SAME", data_format="NDHWC")))
    for mode in ({}, {"align_corners": True}, {"half_pixel_centers": True}):
        tag = "_".join(mode) or "asymmetric"
        for op in ("ResizeBilinear", "ResizeNearestNeighbor"):
            cases.append((f"{op}_{tag}", x, lambda b, i, op=op, mode=mode: b.op(op, "y", [i, b.const("size", np.array([13, 7], np.int32))], **mode)))
    return cases


def _op_cases(rng):
    m = rng.standard_normal((3, 4, 5)).astype(np.float32)
    pos = (rng.random((3, 4, 5)) + 0.5).astype(np.float32)
    cases = []
    for op in ("Relu", "Relu6", "Elu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Abs", "Neg", "Square", "Floor"):
        cases.append((op, m * 4, lambda b, i, op=op: b.op(op, "y", [i])))
    for op in ("Log", "Sqrt", "Rsqrt"):
        cases.append((op, pos, lambda b, i, op=op: b.op(op, "y", [i])))
    cases.append(("LeakyRelu", m, lambda b, i: b.op("LeakyRelu", "y", [i], alpha=0.3)))
    for op in ("Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference"):
        cases.append((op, m, lambda b, i, op=op: b.op(op, "y", [i, b.const("c", (rng.random((4, 1)) + 0.5).astype(np.float32))])))
    cases.append(("Pow", pos, lambda b, i: b.op("Pow", "y", [i, b.const("c", np.float32(1.7))])))
    for op in ("Mean", "Sum", "Max", "Min", "Prod"):
        for keep in (False, True):
            cases.append((f"{op}_keep{keep}", m, lambda b, i, op=op, keep=keep: b.node(
                op, "y", [i, b.const("ax", np.array([0, -1], np.int32))], T=np.float32, keep_dims=keep, Tidx=np.int32)))
    for op in ("ArgMax", "ArgMin"):
        cases.append((op, m, lambda b, i, op=op: b.node(op, "y", [i, b.const("d", np.int32(1))], T=np.float32, output_type=np.int32)))
    cases.append(("MatMul_transposed", rng.standard_normal((6, 4)).astype(np.float32), lambda b, i: b.op(
        "MatMul", "y", [i, b.const("w", rng.standard_normal((5, 6)).astype(np.float32))], transpose_a=True, transpose_b=True)))
    cases.append(("MatMul_BiasAdd", rng.standard_normal((3, 6)).astype(np.float32), lambda b, i: b.op("BiasAdd", "y", [b.op(
        "MatMul", "mm", [i, b.const("w", rng.standard_normal((6, 4)).astype(np.float32))]), b.const("b", rng.standard_normal(4).astype(np.float32))])))
    for adj in ((False, False), (True, False), (False, True)):
        cases.append((f"BatchMatMulV2_{int(adj[0])}{int(adj[1])}", m, lambda b, i, adj=adj: b.op("BatchMatMulV2", "y", [i, b.const(
            "w", rng.standard_normal((3, 5, 2) if not adj[0] else (3, 4, 2)).astype(np.float32) if not adj[1] else
            rng.standard_normal((3, 2, 5)).astype(np.float32))], adj_x=adj[0], adj_y=adj[1])))
    cases.append(("ConcatV2", m, lambda b, i: b.node("ConcatV2", "y", [i, b.op("Neg", "n", [i]), b.const("ax", np.int32(-2))], T=np.float32, N=2)))
    cases.append(("Pack", m, lambda b, i: b.node("Pack", "y", [i, b.op("Exp", "e", [i])], T=np.float32, N=2, axis=1)))
    cases.append(("Unpack", m, lambda b, i: b.node("Unpack", "y", [i], T=np.float32, num=4, axis=1)))
    cases.append(("Split", m, lambda b, i: b.node("Split", "y", [b.const("ax", np.int32(2)), i], T=np.float32, num_split=5)))
    cases.append(("SplitV", m, lambda b, i: b.node("SplitV", "y", [i, b.const("sz", np.array([1, 3], np.int32)), b.const("ax", np.int32(1))],
                                                   T=np.float32, num_split=2)))
    cases.append(("Slice", m, lambda b, i: b.node("Slice", "y", [i, b.const("b", np.array([1, 0, 2], np.int32)), b.const("s", np.array([2, -1, 2], np.int32))],
                                                  T=np.float32)))
    cases.append(("StridedSlice", m, lambda b, i: b.node("StridedSlice", "y", [i, b.const("b", np.array([1, 3, 0], np.int32)), b.const(
        "e", np.array([3, 0, 5], np.int32)), b.const("s", np.array([1, -1, 2], np.int32))], T=np.float32, begin_mask=0, end_mask=4, shrink_axis_mask=1)))
    cases.append(("Reshape", m, lambda b, i: b.node("Reshape", "y", [i, b.const("s", np.array([-1, 10], np.int32))], T=np.float32)))
    cases.append(("Squeeze", m[:, :1], lambda b, i: b.node("Squeeze", "y", [i], T=np.float32, squeeze_dims=[1])))
    cases.append(("ExpandDims", m, lambda b, i: b.node("ExpandDims", "y", [i, b.const("d", np.int32(-1))], T=np.float32)))
    cases.append(("Transpose", m, lambda b, i: b.node("Transpose", "y", [i, b.const("p", np.array([2, 0, 1], np.int32))], T=np.float32)))
    cases.append(("Pad", m, lambda b, i: b.node("Pad", "y", [i, b.const("p", np.array([[0, 1], [2, 0], [1, 1]], np.int32))], T=np.float32)))
    cases.append(("PadV2", m, lambda b, i: b.node("PadV2", "y", [i, b.const("p", np.array([[0, 1], [2, 0], [1, 1]], np.int32)), b.const(
        "v", np.float32(-3))], T=np.float32)))
    cases.append(("MirrorPad", m, lambda b, i: b.node("MirrorPad", "y", [i, b.const("p", np.array([[0, 1], [2, 0], [1, 1]], np.int32))],
                                                      T=np.float32, mode="REFLECT")))
    cases.append(("Tile", m, lambda b, i: b.node("Tile", "y", [i, b.const("t", np.array([1, 2, 3], np.int32))], T=np.float32)))
    cases.append(("GatherV2", m, lambda b, i: b.node("GatherV2", "y", [i, b.const("ix", np.array([[3, 0], [1, 1]], np.int32)), b.const(
        "ax", np.int32(1))], Tparams=np.float32)))
    cases.append(("Cast", m * 5, lambda b, i: b.node("Cast", "y", [i], SrcT=np.float32, DstT=np.int32)))
    cases.append(("Range_Cast", m, lambda b, i: b.op("Add", "y", [i, b.node("Cast", "rc", [b.node("Range", "r", [b.const("s", np.int32(1)), b.const(
        "l", np.int32(11)), b.const("d", np.int32(2))], Tidx=np.int32)], SrcT=np.int32, DstT=np.float32)])))
    cases.append(("OneHot", m, lambda b, i: b.op("Add", "y", [i, b.node("OneHot", "oh", [b.const("ix", np.array([[0, 4, 2, 9]] * 3, np.int32)), b.const(
        "dp", np.int32(5)), b.const("on", np.float32(2)), b.const("off", np.float32(-1))], T=np.float32, axis=-1)])))
    cases.append(("Select", m, lambda b, i: b.node("Select", "y", [b.op("Greater", "gt", [i, b.const("z", np.float32(0))]), i, b.op("Neg", "ng", [i])],
                                                   T=np.float32)))
    cases.append(("Shape_Size_Rank_Fill", m, lambda b, i: b.op("Add", "y", [i, b.node("Cast", "cf", [b.node("Fill", "f", [b.node(
        "Shape", "sh", [i], T=np.float32, out_type=np.int32), b.op("Add", "sr", [b.node("Cast", "c1", [b.node("Size", "sz", [i], T=np.float32, out_type=np.int32)],
                                                                                           SrcT=np.int32, DstT=np.float32),
                                                                                    b.node("Cast", "c2", [b.node("Rank", "rk", [i], T=np.float32)], SrcT=np.int32,
                                                                                           DstT=np.float32)])], T=np.float32)], SrcT=np.float32, DstT=np.float32)])))
    cases.append(("AddN", m, lambda b, i: b.node("AddN", "y", [i, b.op("Exp", "e", [i]), b.op("Neg", "n", [i])], T=np.float32, N=3)))
    for op in ("ZerosLike", "OnesLike"):
        cases.append((op, m, lambda b, i, op=op: b.op("Add", "y", [i, b.op(op, "l", [i])])))
    for op in ("FloorDiv", "FloorMod"):
        cases.append((op, m * 5, lambda b, i, op=op: b.op(op, "y", [i, b.const("d", np.array([1.5, -2.0, 0.7, 3.0, -1.1], np.float32))])))
    cases.append(("FloorMod_int", m * 5, lambda b, i: b.node("Cast", "y", [b.node("FloorMod", "fm", [b.node("Cast", "ci", [i], SrcT=np.float32, DstT=np.int32),
                                                                                              b.const("d", np.array([3, -4, 5, 2, -3], np.int32))], T=np.int32)],
                                                           SrcT=np.int32, DstT=np.float32)))
    cases.append(("ClipByValue", m, lambda b, i: b.op("ClipByValue", "y", [i, b.const("lo", np.float32(-0.5)), b.const("hi", np.array([0.2, 0.4, 0.6, 0.8, 1.0], np.float32))])))
    for op in ("Selu", "Softsign"):
        cases.append((op, m, lambda b, i, op=op: b.op(op, "y", [i])))
    x4 = rng.standard_normal((2, 6, 4, 8)).astype(np.float32)
    cases.append(("SpaceToDepth", x4, lambda b, i: b.op("SpaceToDepth", "y", [i], block_size=2)))
    cases.append(("DepthToSpace", x4, lambda b, i: b.op("DepthToSpace", "y", [i], block_size=2)))
    cases.append(("LRN", x4, lambda b, i: b.op("LRN", "y", [i], depth_radius=2, bias=1.5, alpha=0.3, beta=0.7)))
    cases.append(("Einsum", m, lambda b, i: b.node("Einsum", "y", [i, b.const("w", rng.standard_normal((5, 3)).astype(np.float32))], T=np.float32,
                                                   equation="abc,cd->abd", N=2)))
    cases.append(("Gather", m, lambda b, i: b.node("Gather", "y", [i, b.const("ix", np.array([2, 0], np.int32))], Tparams=np.float32)))
    cases.append(("TopKV2", m, lambda b, i: b.node("TopKV2", "y", [i, b.const("k", np.int32(3))], T=np.float32, sorted=True)))
    cases.append(("Identity_StopGradient_NoOp", m, lambda b, i: b.op("Identity", "y", [b.op("StopGradient", "sg", [b.op(
        "Relu", "r", [i])]), "^" + b.node("NoOp", "noop")])))
    return cases


class PerOp(unittest.TestCase):
    """One hand-made GraphDef per op (per layout where it has one), reference path and .om path, against numpy."""

    def check_case(self, name, x, build, om=True):
        b = tfgraph.Builder(pb2)
        i = b.placeholder("x", np.float32, list(x.shape))
        build(b, i)
        model = b.save(os.path.join(WORK, f"op_{name}.pb"))
        consumed = {s.decode().lstrip("^").split(":")[0] for n in b.graph.node for s in n.input}
        sinks = [n.name.decode() for n in b.graph.node if n.name.decode() not in consumed and n.op not in (b"Const", b"Placeholder", b"NoOp")]
        y = next(n for n in b.graph.node if n.name == b"y")
        outs_n = [e.value.i for e in y.attr if e.key in (b"num", b"num_split")] or ([2] if y.op == b"TopKV2" else [])
        fetch = [f"y:{k}" for k in range(outs_n[0])] if outs_n else sinks
        refs = tfgraph.evaluate(b.graph, {"x": x}, fetch)
        got = reference_run(model, {"x": x}, f"op_{name}")
        self.assertEqual(len(got), len(refs))
        for g, r in zip(got, refs):
            self.assertEqual(g.dtype, r.dtype, name)
            self.assertLess(rel_err(g, r), RTOL, name)
        if om:
            got = om_run(model, {"x": x}, f"op_{name}")
            for g, r in zip(got, refs):
                self.assertLess(rel_err(g, r), RTOL, name + " (.om)")

    def test_conv_pool_resize(self):
        for name, x, build in _conv_cases(np.random.default_rng(3)):
            with self.subTest(op=name):
                self.check_case(name, x, build)

    def test_other_ops(self):
        for name, x, build in _op_cases(np.random.default_rng(4)):
            with self.subTest(op=name):
                self.check_case(name, x, build)

    def test_random_ops_are_seeded(self):
        """RandomStandardNormal / RandomUniform: deterministic per seed, their distribution's moments."""
        b = tfgraph.Builder(pb2)
        i = b.placeholder("x", np.float32, [1])
        shape = b.const("shape", np.array([200, 50], np.int32))
        b.op("Add", "n", [b.node("RandomStandardNormal", "rn", [shape], dtype=np.float32, seed=7, seed2=3, T=np.int32), i])
        b.op("Add", "u", [b.node("RandomUniform", "ru", [shape], dtype=np.float32, seed=7, seed2=4, T=np.int32), i])
        model = b.save(os.path.join(WORK, "random.pb"))
        zero = np.zeros(1, np.float32)
        first, second = reference_run(model, {"x": zero}, "random1"), reference_run(model, {"x": zero}, "random2")
        for a, c in zip(first, second):
            np.testing.assert_array_equal(a, c)
        normal, uniform = first
        self.assertLess(abs(normal.mean()), 0.05)
        self.assertLess(abs(normal.std() - 1), 0.05)
        self.assertTrue(((uniform >= 0) & (uniform < 1)).all())
        self.assertLess(abs(uniform.mean() - 0.5), 0.02)
        # The ops stay in the .om (AI CPU tasks run every inference), not folded into constants at build time.
        must(ATC, "--framework=3", f"--model={model}", "--output=random", "--soc_version=Ascend310P3")
        types = [t for t, _ in om_ops(os.path.join(WORK, "random.om"))]
        self.assertIn("RandomStandardNormal", types)
        self.assertIn("RandomUniform", types)

    def test_pbtxt(self):
        from google.protobuf import text_format
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [2, 3])
        b.op("Tanh", "y", [b.op("Mul", "m", [x, b.const("c", np.full((3,), 0.5, np.float32), content=False)])])
        path = os.path.join(WORK, "tiny.pbtxt")
        open(path, "w").write(text_format.MessageToString(b.graph))
        x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
        (got,) = reference_run(path, {"x": x}, "pbtxt")
        self.assertLess(rel_err(got, np.tanh(x * 0.5)), RTOL)


class Toolchain(unittest.TestCase):
    def test_input_shape_name_forms_and_out_nodes(self):
        for spec in ("s:1,42,42,1", "s:0:1,42,42,1"):
            must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=a3c_names", "--soc_version=Ascend310P3", f"--input_shape={spec}")
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=a3c_two", "--soc_version=Ascend310P3",
             "--out_nodes=W_0/actor/ap/Softmax:0;out_a:0")
        must(ATC, "--mode=6", "--om=a3c_two.om")
        self.assertEqual([t for t, _ in om_ops(os.path.join(WORK, "a3c_two.om")) if t in ("SoftmaxV2", "ArgMaxD")], ["SoftmaxV2", "ArgMaxD"])
        r = run(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=bad", "--soc_version=Ascend310P3", "--input_shape=nope:1,42,42,1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("E10016", r.stdout + r.stderr)
        self.assertIn("its Placeholders are: s", r.stdout + r.stderr)

    def test_import_fusions_hold_on_both_paths(self):
        """Pad -> Conv2D -> BiasAdd and MatMul -> BiasAdd are one op each, on the reference path (golden dumps) as
        in the .om; a fused op's golden tensor is its last original op's, as msaccucmp pairs them; values match numpy."""
        rng = np.random.default_rng(11)
        b = tfgraph.Builder(pb2)
        i = b.placeholder("x", np.float32, [1, 6, 7, 4])
        pad = b.op("Pad", "pad", [i, b.const("p", np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))])
        conv = b.op("Conv2D", "conv", [pad, b.const("w", rng.standard_normal((3, 3, 4, 5)).astype(np.float32))], strides=[1, 1, 1, 1], padding="VALID")
        ba = b.op("BiasAdd", "conv_bias", [conv, b.const("bias", rng.standard_normal(5).astype(np.float32))])
        flat = b.op("Reshape", "flat", [b.op("Relu", "relu", [ba]), b.const("shape", np.array([1, -1], np.int32))])
        mm = b.op("MatMul", "fc", [flat, b.const("fw", rng.standard_normal((7 * 8 * 5, 3)).astype(np.float32))])
        b.op("BiasAdd", "y", [mm, b.const("fb", rng.standard_normal(3).astype(np.float32))])
        model = b.save(os.path.join(WORK, "import_fusion.pb"))
        x = rng.standard_normal((1, 6, 7, 4)).astype(np.float32)
        (ref,) = tfgraph.evaluate(b.graph, {"x": x}, ["y"])
        y, dumped = golden_run(model, x, "import_fusion")
        self.assertLess(rel_err(y, ref), RTOL)
        self.assertTrue({"conv_bias", "y"} <= dumped, sorted(dumped))
        self.assertFalse({"pad", "conv", "fc"} & dumped, f"the ops fused at import have no tensors of their own: {sorted(dumped)}")
        got = om_run(model, {"x": x}, "import_fusion")
        self.assertLess(rel_err(got[0], ref), RTOL)
        js = os.path.join(WORK, "import_fusion.json")
        must(ATC, "--mode=1", f"--om={os.path.join(WORK, 'import_fusion.om')}", f"--json={js}")
        types = [op["type"] for op in T.model_ops(js)]
        self.assertFalse({"Pad", "PadD", "BiasAdd", "Add"} & set(types), types)
        self.assertEqual(types.count("Conv2D"), 1, types)

    def test_atrous_conv_is_one_dilated_conv(self):
        """SpaceToBatchND -> Conv2D -> BatchToSpaceND is one dilated Conv2D on both paths, named by all three."""
        rng = np.random.default_rng(12)
        b = tfgraph.Builder(pb2)
        i = b.placeholder("x", np.float32, [1, 9, 10, 4])
        stb = b.op("SpaceToBatchND", "stb", [i, b.const("blk", np.array([2, 2], np.int32)), b.const("pad", np.array([[2, 3], [2, 2]], np.int32))])
        conv = b.op("Conv2D", "conv", [stb, b.const("w", rng.standard_normal((3, 3, 4, 5)).astype(np.float32))], strides=[1, 1, 1, 1], padding="VALID")
        b.op("BatchToSpaceND", "y", [conv, b.const("blk2", np.array([2, 2], np.int32)), b.const("crops", np.array([[0, 1], [0, 0]], np.int32))])
        model = b.save(os.path.join(WORK, "atrous.pb"))
        x = rng.standard_normal((1, 9, 10, 4)).astype(np.float32)
        (ref,) = tfgraph.evaluate(b.graph, {"x": x}, ["y"])
        y, dumped = golden_run(model, x, "atrous")
        self.assertLess(rel_err(y, ref), RTOL)
        self.assertFalse({"stb", "conv"} & dumped, sorted(dumped))
        self.assertLess(rel_err(om_run(model, {"x": x}, "atrous")[0], ref), RTOL)
        types = [t for t, _ in om_ops(os.path.join(WORK, "atrous.om"))]
        self.assertFalse({"SpaceToBatchND", "BatchToSpaceND"} & set(types), types)

    def test_mode1_json_of_the_pb(self):
        must(ATC, "--mode=1", "--framework=3", f"--om={TF}/a3c_pong_model.pb", "--json=a3c_pb.json")
        ops = json.load(open(os.path.join(WORK, "a3c_pb.json")))["graph"][0]["op"]
        self.assertIn("W_0/conv1/Conv2D", [o["name"] for o in ops])
        self.assertIn("Conv2D", [o["type"] for o in ops])

    def test_accuracy_walk(self):
        """force_fp16 .om dumps against msame's golden dumps of the .pb: the report names TF node names."""
        x = np.random.default_rng(6).random((1, 42, 42, 1)).astype(np.float32)
        np.save(os.path.join(WORK, "walk_in.npy"), x)
        for name, path in (("npu", "walk_npu"), ("golden", "walk_golden")):
            json.dump({"dump": {"dump_path": path, "dump_list": [], "dump_mode": "all"}}, open(os.path.join(WORK, f"walk_{name}.json"), "w"))
        must(MSAME, "--model", f"{TF}/a3c_pong_model.pb", "--input", "walk_in.npy", "--acl_json_path", "walk_golden.json", "--output", "walk_g")
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=walk", "--soc_version=Ascend310", "--precision_mode=force_fp16")
        must(ATC, "--mode=1", "--om=walk.om", "--json=walk.json")
        must(MSAME, "--model", "walk.om", "--input", "walk_in.npy", "--acl_json_path", "walk_npu.json", "--output", "walk_o")
        (npu,) = glob.glob(os.path.join(WORK, "walk_npu/*/0/walk/1/0"))
        (golden,) = glob.glob(os.path.join(WORK, "walk_golden/*/0/*/1/0"))
        report = must(CMP, "compare", "-m", npu, "-g", golden, "-f", "walk.json", "-out", "walk_cmp")
        csvs = glob.glob(os.path.join(WORK, "walk_cmp/**/*.csv"), recursive=True)
        text = report + "".join(open(c).read() for c in csvs)
        for node in ("W_0/conv1/Conv2D", "W_0/actor/la/MatMul", "W_0/actor/ap/Softmax"):
            self.assertIn(node, text)
        # The device computes the convs channels-first; dumps and golden data both give TF's NHWC tensors, so
        # every row compares (and passes: A3C is fine in fp16), inputs included.
        self.assertIn("FAIL 0", report)
        import csv
        rows = {r["TensorIndex"]: r for c in csvs for r in csv.DictReader(open(c))}
        self.assertEqual(rows["W_0/conv1/Conv2D:output:0"]["Shape"], "[1,20,20,32]")
        self.assertGreater(float(rows["W_0/conv2/Conv2D:input:0"]["CosineSimilarity"]), 0.999)
        golden_conv = glob.glob(os.path.join(golden, "W_0_conv1_Relu.0.*.npy"))
        self.assertEqual(np.load(golden_conv[0]).shape, (1, 20, 20, 32))


class SameToolchain(unittest.TestCase):
    """Precision lists, dynamic shapes, AIPP, aoe and profiling take TF models as they take ONNX ones."""

    def test_keep_dtype_by_tf_name_and_op_type(self):
        open(os.path.join(WORK, "keep.txt"), "w").write("W_0/conv1/Conv2D\nOpType::MatMulV2\n")
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=keep", "--soc_version=Ascend310P3",
             "--precision_mode=force_fp16", "--keep_dtype=keep.txt")
        must(ATC, "--mode=1", "--om=keep.om", "--json=keep.json")
        ops = {o["name"]: o for o in json.load(open(os.path.join(WORK, "keep.json")))["graph"][0]["op"]}
        reason = lambda name: next(a["value"]["s"] for a in ops[name]["attr"] if a["key"] == "_precision_reason")  # noqa: E731
        self.assertIn("keep_dtype W_0/conv1/Conv2D -> float32", reason("W_0/conv1/Conv2D"))
        self.assertNotIn("keep_dtype", reason("W_0/conv2/Conv2D"))
        self.assertIn("keep_dtype OpType::MatMulV2 -> float32", reason("W_0/actor/la/MatMul"))

    def test_dynamic_batch(self):
        must(ATC, "--framework=3", f"--model={TF}/tf2onnx_fc-layers.pb", "--output=dynfc", "--soc_version=Ascend310P3",
             "--input_shape=X:-1,784", "--dynamic_batch_size=1,4", "--precision_mode=must_keep_origin_dtype")
        x = np.random.default_rng(7).standard_normal((4, 784)).astype(np.float32)
        np.save(os.path.join(WORK, "dyn_in.npy"), x)
        shutil.rmtree(os.path.join(WORK, "dyn_out"), ignore_errors=True)
        must(MSAME, "--model", "dynfc.om", "--input", "dyn_in.npy", "--output", "dyn_out", "--outfmt", "NPY")
        (got,) = outputs_of(os.path.join(WORK, "dyn_out"))
        (ref,) = reference_run(f"{TF}/tf2onnx_fc-layers.pb", {"X": x}, "dyn_ref")
        self.assertLess(rel_err(got, ref), RTOL)

    def test_aipp_on_an_nhwc_input(self):
        open(os.path.join(WORK, "aipp.cfg"), "w").write("aipp_op {\n  aipp_mode: static\n  input_format: YUV400_U8\n  src_image_size_w: 42\n"
                                                       "  src_image_size_h: 42\n  var_reci_chn_0: 0.00390625\n}\n")
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=aipp", "--soc_version=Ascend310P3", "--insert_op_conf=aipp.cfg",
             "--precision_mode=must_keep_origin_dtype", "--out_nodes=W_0/actor/ap/Softmax:0")
        types = [t for t, _ in om_ops(os.path.join(WORK, "aipp.om"))]
        self.assertEqual(types[0], "Aipp")
        self.assertNotIn("Transpose", types[:types.index("Conv2D")])  # AIPP's NCHW output meets the conv without a layout transpose
        img = np.random.default_rng(8).integers(0, 256, (1, 42, 42, 1), dtype=np.uint8)
        np.save(os.path.join(WORK, "img.npy"), img)
        shutil.rmtree(os.path.join(WORK, "aipp_out"), ignore_errors=True)
        must(MSAME, "--model", "aipp.om", "--input", "img.npy", "--output", "aipp_out", "--outfmt", "NPY")
        (got,) = outputs_of(os.path.join(WORK, "aipp_out"))
        (ref,) = om_run(f"{TF}/a3c_pong_model.pb", {"s": img.astype(np.float32) / 256}, "aipp_ref", "--out_nodes=W_0/actor/ap/Softmax:0")
        self.assertLess(rel_err(got, ref), RTOL)

    def test_aoe_and_profiling(self):
        bank = os.path.join(WORK, "bank")
        shutil.rmtree(bank, ignore_errors=True)
        os.makedirs(bank)
        env = {**os.environ, "TUNE_BANK_PATH": bank, "ASCEND_WORK_PATH": WORK}
        r = subprocess.run([os.path.join(BUILD, "tools/aoe/aoe"), "--job_type=2", "--framework=3", f"--model={TF}/a3c_pong_model.pb",
                            "--soc_version=Ascend310P3", "--progress_bar=off"], capture_output=True, text=True, env=env, cwd=WORK)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        must(ATC, "--framework=3", f"--model={TF}/a3c_pong_model.pb", "--output=prof", "--soc_version=Ascend310P3")
        prof = {"profiler": {"switch": "on", "output": os.path.join(WORK, "prof"), "task_time": "on"}}
        json.dump(prof, open(os.path.join(WORK, "prof.json"), "w"))
        must(MSAME, "--model", "prof.om", "--acl_json_path", "prof.json", "--output", "prof_out")
        self.assertTrue(glob.glob(os.path.join(WORK, "prof/PROF_*")))


class BadInput(unittest.TestCase):
    def expect_error(self, model, code, *flags):
        out = os.path.join(WORK, "bad_out")
        r = run(ATC, "--framework=3", f"--model={model}", f"--output={out}", "--soc_version=Ascend310P3", *flags)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(code, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(out + ".om"))
        return r.stdout + r.stderr

    def test_bad_files(self):
        data = open(f"{TF}/a3c_pong_model.pb", "rb").read()
        open(os.path.join(WORK, "trunc.pb"), "wb").write(data[:len(data) // 2])
        self.expect_error(os.path.join(WORK, "trunc.pb"), "E10041")
        open(os.path.join(WORK, "notgraph.pb"), "wb").write(b"\x08\x07\x12\x04abcd" * 10)
        self.expect_error(os.path.join(WORK, "notgraph.pb"), "E10041")
        open(os.path.join(WORK, "empty.pb"), "wb").write(b"")
        self.expect_error(os.path.join(WORK, "empty.pb"), "E10041")
        open(os.path.join(WORK, "bad.pbtxt"), "w").write('node { name: "x" op: "Placeholder" ]\n')
        out = self.expect_error(os.path.join(WORK, "bad.pbtxt"), "E10041")
        self.assertIn("line 1, column 36", out)
        self.assertNotIn("libprotobuf", out)  # protobuf's own log stays out of the tool's output

    def test_bad_graphs(self):
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [2])
        b.op("Add", "y", [x, "ghost:0"])
        self.assertIn("'ghost:0'", self.expect_error(b.save(os.path.join(WORK, "missing.pb")), "E12009"))
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [2])
        b.op("Add", "a", [x, "b"])
        b.op("Relu", "b", ["a"])
        self.assertIn("cycle", self.expect_error(b.save(os.path.join(WORK, "cycle.pb")), "E10041"))
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [4])
        c = b.const("c", np.ones(4, np.float32))
        b.graph.node[-1].attr[1].value.tensor.tensor_content = b"\0" * 12
        b.op("Add", "y", [x, c])
        self.assertIn("tensor_content holds 12 bytes", self.expect_error(b.save(os.path.join(WORK, "content.pb")), "E10041"))
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [4])
        b.op("Relu", "x", [x])
        self.expect_error(b.save(os.path.join(WORK, "dup.pb")), "E13009")

    def test_bad_flags(self):
        self.expect_error(f"{TF}/a3c_pong_model.pb", "E10001", "--input_format=NC1HWC0")
        self.expect_error(f"{TF}/a3c_pong_model.pb", "E10001", "--weight=x.caffemodel")


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    pb2 = tfgraph.load_pb2(WORK)
    unittest.main(argv=sys.argv[:1], verbosity=2)
