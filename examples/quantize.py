#!/usr/bin/python3
"""Post-training INT8 quantization of a float ONNX model, in the two forms atc takes:
  PREFIX_deploy.onnx  AMCT's deploy layout: <layer>.quant (AscendQuant) -> the layer on int8 weights with an int32
                      bias -> <layer>.dequant (AscendDequant, uint64 deq_scale per output channel)
  PREFIX_qdq.onnx     the same factors as ONNX QuantizeLinear / DequantizeLinear (what TensorRT and ONNX Runtime take)
  PREFIX_quant_record.json  the quantization record msaccucmp compare -q reads
Calibration runs the float model on --calib random inputs with npukit's msame (its fp32 reference path) and takes
each quantized layer's input range: activations per tensor (scale = max|x| / 127), weights per output channel
(max|w| / 127), zero points 0, as AMCT's default does. Conv, Gemm and MatMul with constant weights are quantized;
--skip NAME (repeatable) keeps a layer in float. AscendQuant multiplies by 1/scale in fp16: where that passes fp16's
range (activations below about 2e-3) it is written as sqrt(1/scale) with sqrt_mode, as AMCT does, and a layer whose
activations are too small even for that stays float (it is named).

usage: quantize.py MODEL.onnx PREFIX [--msame PATH] [--calib N] [--skip NAME ...]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANTIZED = ("Conv", "Gemm", "MatMul")
HALF_MAX = np.float32(65504.0)


def quant_scale(s_x):
    """AscendQuant's (scale, sqrt_mode) for activation scale s_x (float32 steps, as atc's QDQ rewrite computes them);
    None when even sqrt(1/s_x) is past fp16's range."""
    inv = np.float32(np.float32(1.0) / s_x)
    if inv <= HALF_MAX:
        return float(inv), 0
    root = np.sqrt(inv, dtype=np.float32)
    return (float(root), 1) if root <= HALF_MAX else None


def constant(model, name):
    """The array behind `name`: an initializer, or one passed through Identity nodes (torch shares equal biases)."""
    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    for n in model.graph.node:
        if n.op_type == "Identity" and n.output[0] == name:
            return constant(model, n.input[0])
    return None


def layers(model, skip):
    """The nodes to quantize: (node, weight initializer) for Conv/Gemm/MatMul with a constant 2-D+ weight."""
    inits = {i.name: i for i in model.graph.initializer}
    out = []
    for n in model.graph.node:
        if n.op_type not in QUANTIZED or n.name in skip or len(n.input) < 2 or n.input[1] not in inits:
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        if w.dtype != np.float32 or (n.op_type == "MatMul" and w.ndim != 2):
            continue
        if n.op_type == "Gemm" and any(a.name == "transA" and a.i for a in n.attribute):
            continue
        out.append((n, w))
    return out


def random_input(rng, elem_type, shape, name=""):
    """Synthetic calibration data: normal floats; for an integer input token ids in [0, 100), ones for a mask,
    zeros for token type ids (BERT's segment vocabulary is 2)."""
    if elem_type in (TensorProto.INT64, TensorProto.INT32) and ("mask" in name or "type" in name):
        return (np.ones if "mask" in name else np.zeros)(shape, np.int64 if elem_type == TensorProto.INT64 else np.int32)
    if elem_type in (TensorProto.INT64, TensorProto.INT32):
        return rng.integers(0, 100, shape).astype(np.int64 if elem_type == TensorProto.INT64 else np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def input_ranges(model_path, model, targets, msame, count, seed=0):
    """max |x| of each target tensor over `count` random inputs, from msame's fp32 reference path."""
    work = tempfile.mkdtemp(prefix="npukit-quant-")
    try:
        m = onnx.ModelProto()
        m.CopyFrom(model)
        known = {o.name for o in m.graph.output}
        for t in targets:
            if t not in known:
                m.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
        probe = os.path.join(work, "probe.onnx")
        onnx.save(m, probe)
        names = [o.name for o in m.graph.output]
        inputs = [i for i in m.graph.input if i.name not in {x.name for x in m.graph.initializer}]
        rng = np.random.default_rng(seed)
        peak = {t: 0.0 for t in targets}
        for k in range(count):
            files = []
            for i in inputs:
                shape = [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
                f = os.path.join(work, f"in{k}_{len(files)}.npy")
                np.save(f, random_input(rng, i.type.tensor_type.elem_type, shape, i.name))
                files.append(f)
            out = os.path.join(work, f"out{k}")
            r = subprocess.run([msame, "--model", probe, "--input", ",".join(files), "--output", out, "--outfmt", "NPY"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"quantize.py: msame failed on the calibration model:\n{r.stdout}{r.stderr}")
            for j, name in enumerate(names):
                if name in peak:
                    (f,) = glob.glob(os.path.join(out, f"*_output_{j}.npy"))
                    peak[name] = max(peak[name], float(np.abs(np.load(f)).max()))
        return peak
    finally:
        shutil.rmtree(work, ignore_errors=True)


def weight_scales(node, w):
    """Per output channel: Conv's axis 0, Gemm's 0 with transB else 1, MatMul's last."""
    trans_b = any(a.name == "transB" and a.i for a in node.attribute)
    axis = 0 if node.op_type == "Conv" or (node.op_type == "Gemm" and trans_b) else w.ndim - 1
    reduce = tuple(d for d in range(w.ndim) if d != axis)
    s = np.abs(w).max(axis=reduce) / 127.0
    s[s == 0] = 1.0
    return s.astype(np.float32), axis


def record(deploy):
    """AMCT's quantization record for msaccucmp -q: the deploy model's ops in GE's JSON layout, each naming the op
    of the float model it stands for (a layer's .dequant stands for the layer; a .quant for none)."""
    dtypes = {"AscendQuant": "DT_INT8", "AscendDequant": None}
    ops = []
    for n in deploy.graph.node:
        layer = n.name.rsplit(".", 1)[0] if n.name.endswith((".quant", ".dequant")) else n.name
        names = [] if n.name.endswith(".quant") else [layer]
        dtype = dtypes.get(n.op_type, "DT_FLOAT")
        if n.op_type == "AscendDequant":
            dtype = "DT_FLOAT16" if any(a.name == "dtype" and a.i == 1 for a in n.attribute) else "DT_FLOAT"
        if n.op_type in QUANTIZED and any(i.endswith(".quant_out") for i in n.input):
            dtype = "DT_INT32"
        ops.append({"name": n.name, "type": n.op_type, "input": list(n.input),
                    "attr": [{"key": "_datadump_original_op_names", "value": {"list": {"s": names}}}],
                    "output_desc": [{"dtype": dtype} for _ in n.output]})
    return {"name": deploy.graph.name, "graph": [{"name": deploy.graph.name, "op": ops}]}


def quantize(model_path, prefix, msame, calib, skip):
    model = onnx.load(model_path)
    todo = layers(model, set(skip))
    if not todo:
        sys.exit("quantize.py: no Conv, Gemm or MatMul with constant weights to quantize")
    peak = input_ranges(model_path, model, sorted({n.input[0] for n, _ in todo}), msame, calib)
    act_scale = lambda n: np.float32(max(peak[n.input[0]], 1e-8) / 127.0)
    for n, _ in todo:
        if quant_scale(act_scale(n)) is None:
            print(f"quantize.py: {n.name} stays float: its inputs (max |x| {peak[n.input[0]]:.3g}) are too small for an fp16 quantization scale")
    todo = [(n, w) for n, w in todo if quant_scale(act_scale(n)) is not None]
    deploy, qdq = onnx.ModelProto(), onnx.ModelProto()
    deploy.CopyFrom(model)
    qdq.CopyFrom(model)
    for form, m in (("deploy", deploy), ("qdq", qdq)):
        nodes = {n.name: n for n in m.graph.node}
        inits = {i.name: i for i in m.graph.initializer}
        new_nodes = []
        for node in list(m.graph.node):
            match = next(((n, w) for n, w in todo if n.name == node.name), None)
            if not match:
                new_nodes.append(node)
                continue
            _, w = match
            s_x = act_scale(node)
            s_w, axis = weight_scales(node, w)
            shape = [1] * w.ndim
            shape[axis] = -1
            wq = np.clip(np.rint(w / s_w.reshape(shape)), -127, 127).astype(np.int8)
            deq = (s_x * s_w).astype(np.float32)
            name, x, y = node.name, node.input[0], node.output[0]
            wname = name + ".weight_int8"
            m.graph.initializer.append(numpy_helper.from_array(wq, wname))
            bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
            if form == "deploy":
                scale, sqrt_mode = quant_scale(s_x)
                new_nodes.append(helper.make_node("AscendQuant", [x], [name + ".quant_out"], name=name + ".quant", scale=scale, offset=0.0,
                                                  sqrt_mode=sqrt_mode, dst_type="INT8"))
                ins = [name + ".quant_out", wname]
                if bias:
                    b = constant(m, bias).astype(np.float64)
                    m.graph.initializer.append(numpy_helper.from_array(np.rint(b / deq).astype(np.int32), name + ".bias_int32"))
                    ins.append(name + ".bias_int32")
                node.ClearField("input")
                node.input.extend(ins)
                node.output[0] = name + ".int32_out"
                new_nodes.append(node)
                m.graph.initializer.append(numpy_helper.from_array(deq.view(np.uint32).astype(np.uint64), name + ".dequant.param"))
                # fp16 inside the network, as Ascend runs it (AMCT writes the graph's data type); fp32 at an output
                dtype = 0 if y in {o.name for o in m.graph.output} else 1
                new_nodes.append(helper.make_node("AscendDequant", [name + ".int32_out", name + ".dequant.param"], [y], name=name + ".dequant", dtype=dtype))
            else:
                m.graph.initializer.extend([numpy_helper.from_array(np.array(s_x, np.float32), name + ".sx"),
                                            numpy_helper.from_array(np.array(0, np.int8), name + ".zx"),
                                            numpy_helper.from_array(s_w, name + ".sw"),
                                            numpy_helper.from_array(np.zeros(len(s_w), np.int8), name + ".zw")])
                new_nodes += [helper.make_node("QuantizeLinear", [x, name + ".sx", name + ".zx"], [name + ".xq"], name=name + ".q"),
                              helper.make_node("DequantizeLinear", [name + ".xq", name + ".sx", name + ".zx"], [name + ".xf"], name=name + ".dq"),
                              helper.make_node("DequantizeLinear", [wname, name + ".sw", name + ".zw"], [name + ".wf"], name=name + ".wdq", axis=axis)]
                node.input[0], node.input[1] = name + ".xf", name + ".wf"
                new_nodes.append(node)
        m.graph.ClearField("node")
        m.graph.node.extend(new_nodes)
        used = {i for n in m.graph.node for i in n.input}
        kept = [i for i in m.graph.initializer if i.name in used]
        m.graph.ClearField("initializer")
        m.graph.initializer.extend(kept)
        onnx.save(m, f"{prefix}_{form}.onnx")
        if form == "deploy":
            with open(f"{prefix}_quant_record.json", "w") as f:
                json.dump(record(m), f, indent=1)
    print(f"quantized {len(todo)} layer(s): {prefix}_deploy.onnx (AMCT deploy layout), {prefix}_qdq.onnx (QDQ), "
          f"{prefix}_quant_record.json (for msaccucmp compare -q)")


def find_msame():
    """msame on PATH (an installed prefix, or build/bin), else the build beside this script's repository."""
    found = shutil.which("msame")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    for build in sorted(glob.glob(os.path.join(here, "..", "build*", "tools", "msame", "msame"))):
        return build
    return None


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("prefix")
    ap.add_argument("--msame", default=None, help="the msame to calibrate with (default: msame on PATH, else the "
                    "repository's build)")
    ap.add_argument("--calib", type=int, default=8, help="random calibration inputs (default 8)")
    ap.add_argument("--skip", action="append", default=[], help="a layer (node name) to keep in float")
    a = ap.parse_args()
    msame = a.msame or find_msame()
    if not msame or not os.access(msame, os.X_OK):
        sys.exit(f"quantize.py: cannot run msame ({msame or 'not on PATH'}): put npukit's bin folder on PATH "
                 "(export PATH=$PWD/build/bin:$PATH in the repository) or pass --msame PATH")
    quantize(a.model, a.prefix, msame, a.calib, a.skip)
