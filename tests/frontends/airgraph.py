"""MindSpore AIR files for tests and fuzz seeds: an encoder of GE IR written with Python protobuf classes
generated from libcore/frontend/ge/ge_ir.proto (not npukit's reader), and two nets (a CNN, a small transformer),
each written as an AIR and as an ONNX twin from one layer list, with numpy versions of both.
    ge = load_pb2(work); cnn(ge, work); transformer(ge, work)   # work/air_cnn.air, work/air_cnn.onnx, ...
"""
import importlib
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
GE_DTYPE = {np.dtype(np.float32): 1, np.dtype(np.float16): 2, np.dtype(np.int8): 3, np.dtype(np.uint8): 4,  # ge.proto.DataType
            np.dtype(np.int32): 7, np.dtype(np.int64): 8, np.dtype(np.uint64): 10, np.dtype(np.bool_): 11}


def set_attr(a, v):
    """A GE AttrDef from a Python value: bytes, bool, int, float, str, an int list or a list of int lists."""
    if isinstance(v, bytes):
        a.bt = v
    elif isinstance(v, bool):
        a.b = v
    elif isinstance(v, int):
        a.i = v
    elif isinstance(v, float):
        a.f = v
    elif isinstance(v, str):
        a.s = v.encode()
    elif v and isinstance(v[0], list):
        for row in v:
            a.list_list_int.list_list_i.add().list_i.extend(row)
    else:
        a.list.i.extend(v)


def load_pb2(work):
    """Compiles npukit's GE IR schema for Python into `work` and imports it."""
    proto_dir = os.path.join(SOURCE, "libcore/frontend/ge")
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={work}", os.path.join(proto_dir, "ge_ir.proto")], check=True)
    sys.path.insert(0, work)
    return importlib.import_module("ge_ir_pb2")


class Twins:
    """One layer list, two files: each step adds a GE op to the AIR's graph and the same computation to an ONNX
    graph. Output shapes come from ONNX shape inference of the twin, so the AIR's descs say what the twin makes."""

    def __init__(self, ge, work, name, inputs):
        self.ge, self.work, self.name, self.inputs = ge, work, name, inputs
        self.steps, self.consts, self.onnx_nodes = [], {}, []

    def const(self, name, array):
        self.consts[name] = np.asarray(array)
        return name

    def op(self, name, ge_type, inputs, ge_attrs, onnx_nodes, outputs=1):
        """onnx_nodes: the ONNX node(s) computing `name` from `inputs` (the last one writes `name`)."""
        self.steps.append((name, ge_type, inputs, ge_attrs, outputs))
        self.onnx_nodes += onnx_nodes
        return name

    def write(self, output):
        inits = [numpy_helper.from_array(a, n) for n, a in self.consts.items()]
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in self.inputs]
        outs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)]
        model = helper.make_model(helper.make_graph(self.onnx_nodes, self.name, ins, outs, inits), opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        shapes = {n: s for n, s in self.inputs}
        shapes.update({n: list(a.shape) for n, a in self.consts.items()})
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
            shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        model.graph.output[0].CopyFrom(helper.make_tensor_value_info(output, TensorProto.FLOAT, shapes[output]))
        onnx.save(model, os.path.join(self.work, self.name + ".onnx"))
        open(os.path.join(self.work, self.name + ".air"), "wb").write(self.model_def(output, shapes).SerializeToString())

    def model_def(self, output, shapes):
        md = self.ge.ModelDef()
        md.name = self.name.encode()
        md.version = 1
        g = md.graph.add()
        g.name = self.name.encode()

        def desc(d, shape, dtype=1):
            d.dtype = dtype
            d.shape.dim.extend(shape)
            d.layout = b"NCHW" if len(shape) == 4 else b"ND"
            d.attr["origin_format"].s = d.layout
            d.attr["origin_shape"].list.i.extend(shape)

        dtypes = {}
        for n, s in self.inputs:
            op = g.op.add(name=n.encode(), type=b"Data")
            desc(op.output_desc.add(), s)
            g.input.append(n.encode())
        for n, a in self.consts.items():
            op = g.op.add(name=n.encode(), type=b"Const")
            t = op.attr["value"].t
            desc(t.desc, list(a.shape), GE_DTYPE[a.dtype])
            t.data = a.tobytes()
            desc(op.output_desc.add(), list(a.shape), GE_DTYPE[a.dtype])
            dtypes[n] = GE_DTYPE[a.dtype]
        for name, ge_type, inputs, attrs, outputs in self.steps:
            op = g.op.add(name=name.encode(), type=ge_type.encode())
            for i in inputs:
                op.input.append(f"{i}:0".encode() if i else b"")
                if i:
                    desc(op.input_desc.add(), shapes[i], dtypes.get(i, 1))
            for k, v in attrs.items():
                set_attr(op.attr[k], v)
            desc(op.output_desc.add(), shapes[name])
            for k in range(1, outputs):  # LayerNorm's mean and variance
                desc(op.output_desc.add(), shapes[name][:-1] + [1])
        out = g.op.add(name=b"Node_Output", type=b"NetOutput")
        out.input.append(f"{output}:0".encode())
        desc(out.input_desc.add(), shapes[output])
        g.output.append(f"{output}:0".encode())
        return md


def single_op(ge, name, ge_type, x, consts, attrs, outputs, order=None):
    """A serialized GE graph: Data `x` (one array), Const inputs, one op of `ge_type` with `attrs` (bool, int,
    float, str, bytes, an int list or a list of int lists), NetOutput of its `outputs` (arrays giving each
    output's shape and dtype). `order` lists the op's inputs by name ("x" or a const's name)."""
    md = ge.ModelDef(name=name.encode(), version=1)
    g = md.graph.add(name=name.encode())

    def desc(d, a):
        d.dtype = GE_DTYPE[a.dtype]
        d.shape.dim.extend(a.shape)
        d.layout = b"NCHW" if a.ndim == 4 else b"ND"
        d.attr["origin_format"].s = d.layout
        d.attr["origin_shape"].list.i.extend(a.shape)

    arrays = {"x": x, **consts}
    desc(g.op.add(name=b"x", type=b"Data").output_desc.add(), x)
    for n, a in consts.items():
        op = g.op.add(name=n.encode(), type=b"Const")
        desc(op.attr["value"].t.desc, a)
        op.attr["value"].t.data = a.tobytes()
        desc(op.output_desc.add(), a)
    op = g.op.add(name=b"op", type=ge_type.encode())
    for i in order or ["x", *consts]:
        op.input.append(f"{i}:0".encode())
        desc(op.input_desc.add(), arrays[i])
    for k, v in attrs.items():
        set_attr(op.attr[k], v)
    out = g.op.add(name=b"Node_Output", type=b"NetOutput")
    for k, y in enumerate(outputs):
        desc(op.output_desc.add(), y)
        out.input.append(f"op:{k}".encode())
        desc(out.input_desc.add(), y)
    return md.SerializeToString()


def node(op, inputs, output, **attrs):
    return helper.make_node(op, inputs, [output], **attrs)


def cnn(ge, work):
    r = np.random.default_rng(3)
    t = Twins(ge, work, "air_cnn", [("x", [1, 3, 16, 16])])
    w1, b1 = t.const("w1", r.standard_normal((8, 3, 3, 3), np.float32) * 0.3), t.const("b1", r.standard_normal(8, np.float32))
    b1r = t.const("b1_r", t.consts["b1"].reshape(8, 1, 1))
    w2, b2 = t.const("w2", r.standard_normal((12, 8, 3, 3), np.float32) * 0.2), t.const("b2", r.standard_normal(12, np.float32) * 0.1)
    flat = t.const("flat_shape", np.array([1, -1], np.int64))
    wf, bf = t.const("wf", r.standard_normal((10, 12 * 4 * 4), np.float32) * 0.1), t.const("bf", r.standard_normal(10, np.float32))
    nchw = {"data_format": "NCHW"}
    t.op("conv1", "Conv2D", ["x", w1], {"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1], "groups": 1, **nchw},
         [node("Conv", ["x", w1], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    t.op("bias1", "BiasAdd", ["conv1", b1], nchw, [node("Add", ["conv1", b1r], "bias1")])
    t.op("relu1", "Relu", ["bias1"], {}, [node("Relu", ["bias1"], "relu1")])
    t.op("pool1", "MaxPool", ["relu1"], {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "VALID", **nchw},
         [node("MaxPool", ["relu1"], "pool1", kernel_shape=[2, 2], strides=[2, 2])])
    # Asymmetric padding: GE's pads are top, bottom, left, right.
    t.op("conv2", "Conv2D", ["pool1", w2, b2], {"strides": [1, 1, 2, 2], "pads": [0, 1, 0, 1], "dilations": [1, 1, 1, 1], "groups": 1, **nchw},
         [node("Conv", ["pool1", w2, b2], "conv2", kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])])
    six_lo, six_hi = t.const("lo", np.array(0, np.float32)), t.const("hi", np.array(6, np.float32))
    t.op("relu2", "Relu6", ["conv2"], {}, [node("Clip", ["conv2", six_lo, six_hi], "relu2")])
    t.op("flat", "Reshape", ["relu2", flat], {}, [node("Reshape", ["relu2", flat], "flat")])
    t.op("fc", "MatMulV2", ["flat", wf, bf], {"transpose_x1": False, "transpose_x2": True}, [node("Gemm", ["flat", wf, bf], "fc", transB=1)])
    t.op("prob", "SoftmaxV2", ["fc"], {"axes": [-1]}, [node("Softmax", ["fc"], "prob", axis=-1)])
    t.write("prob")


def transformer(ge, work):
    r = np.random.default_rng(5)
    d, heads, seq, ff = 16, 2, 8, 32
    t = Twins(ge, work, "air_transformer", [("x", [1, seq, d])])
    w = {k: t.const(k, r.standard_normal(s, np.float32) * 0.25) for k, s in
         (("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)), ("w1", (d, ff)), ("w2", (ff, d)))}
    fb = t.const("fb", r.standard_normal(ff, np.float32) * 0.1)
    gamma, beta = t.const("gamma", 1 + r.standard_normal(d, np.float32) * 0.1), t.const("beta", r.standard_normal(d, np.float32) * 0.1)
    split = t.const("split_shape", np.array([1, seq, heads, d // heads], np.int64))
    merge = t.const("merge_shape", np.array([1, seq, d], np.int64))
    perm = t.const("perm", np.array([0, 2, 1, 3], np.int64))
    scale = t.const("scale", np.array(1 / np.sqrt(d // heads), np.float32))

    def layer_norm(name, x):
        return t.op(name, "LayerNorm", [x, gamma, beta], {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5},
                    [node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=1e-5)], outputs=3)

    def matmul(name, a, b, **ge):
        return t.op(name, "BatchMatMul", [a, b], ge, [node("MatMul", [a, b], name)])

    def heads_of(name, x):
        t.op(name + "_split", "Reshape", [x, split], {}, [node("Reshape", [x, split], name + "_split")])
        return t.op(name, "Transpose", [name + "_split", perm], {}, [node("Transpose", [name + "_split"], name, perm=[0, 2, 1, 3])])

    ln1 = layer_norm("ln1", "x")
    q, k, v = (heads_of(n + "h", matmul(n, ln1, w["w" + n])) for n in "qkv")
    # Q K^T with adj_x2 (npukit puts a Transpose before its MatMul); the twin transposes explicitly.
    t.op("scores", "BatchMatMul", [q, k], {"adj_x1": False, "adj_x2": True},
         [node("Transpose", [k], "kT", perm=[0, 1, 3, 2]), node("MatMul", [q, "kT"], "scores")])
    t.op("scaled", "Mul", ["scores", scale], {}, [node("Mul", ["scores", scale], "scaled")])
    t.op("attn", "SoftmaxV2", ["scaled"], {"axes": [-1]}, [node("Softmax", ["scaled"], "attn", axis=-1)])
    ctx = matmul("ctx", "attn", v)
    t.op("ctx_t", "Transpose", [ctx, perm], {}, [node("Transpose", [ctx], "ctx_t", perm=[0, 2, 1, 3])])
    t.op("ctx_m", "Reshape", ["ctx_t", merge], {}, [node("Reshape", ["ctx_t", merge], "ctx_m")])
    proj = matmul("proj", "ctx_m", w["wo"])
    t.op("res1", "Add", ["x", proj], {}, [node("Add", ["x", proj], "res1")])
    ln2 = layer_norm("ln2", "res1")
    f1 = matmul("f1", ln2, w["w1"])
    t.op("f1b", "Add", [f1, fb], {}, [node("Add", [f1, fb], "f1b")])
    t.op("f1r", "Relu", ["f1b"], {}, [node("Relu", ["f1b"], "f1r")])
    f2 = matmul("f2", "f1r", w["w2"])
    t.op("y", "Add", ["res1", f2], {}, [node("Add", ["res1", f2], "y")])
    t.write("y")


def constants(work, name):
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(os.path.join(work, name + ".onnx")).graph.initializer}


def conv(x, w, b, stride, pads):
    """pads: top, bottom, left, right."""
    x = np.pad(x, ((0, 0), (0, 0), pads[:2], pads[2:]))
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", win, w) + b.reshape(1, -1, 1, 1)


def numpy_cnn(work, x):
    """The CNN's twin in numpy (OpenCV 4.6 reads no opset-11 Clip), from the same constants."""
    c = constants(work, "air_cnn")
    h = np.maximum(conv(x, c["w1"], c["b1"], 1, (1, 1, 1, 1)), 0)
    h = h.reshape(1, 8, 8, 2, 8, 2).max(axis=(3, 5))
    h = np.clip(conv(h, c["w2"], c["b2"], 2, (0, 1, 0, 1)), 0, 6).reshape(1, -1) @ c["wf"].T + c["bf"]
    e = np.exp(h - h.max())
    return e / e.sum()


def numpy_transformer(work, x):
    """The transformer's twin in numpy, from the same constants (read back from the ONNX file)."""
    c = constants(work, "air_transformer")

    def ln(v):
        m = v.mean(-1, keepdims=True)
        return (v - m) / np.sqrt(((v - m) ** 2).mean(-1, keepdims=True) + 1e-5) * c["gamma"] + c["beta"]

    def heads(v):
        return v.reshape(1, 8, 2, 8).transpose(0, 2, 1, 3)

    h = ln(x)
    q, k, v = heads(h @ c["wq"]), heads(h @ c["wk"]), heads(h @ c["wv"])
    s = q @ k.transpose(0, 1, 3, 2) * c["scale"]
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    r1 = x + (p @ v).transpose(0, 2, 1, 3).reshape(1, 8, 16) @ c["wo"]
    return r1 + np.maximum(ln(r1) @ c["w1"] + c["fb"], 0) @ c["w2"]
