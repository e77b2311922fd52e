#!/usr/bin/python3
"""CANN's quantization ops, one at a time, as AMCT's deploy ONNX carries them: each converted by atc for a SoC and
run by msame, bit-exact against a numpy model of the arithmetic kernels/quant.cc documents (fp16 steps for
AscendQuant and AscendAntiQuant; the dequant of each SoC generation). Bad attributes and operands are coded errors.
usage: test_quant_ops.py BUILD_DIR WORK_DIR"""
import functools
import glob
import os
import shutil
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:3])
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
F16 = np.float16
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.uint64): TensorProto.UINT64}


run = functools.partial(T.run, cwd=WORK)  # every command runs in the work folder


def refused(test, name, why):
    """atc refuses name.onnx: exit 1, a coded error naming the node and saying `why`, no .om."""
    r = run(ATC, "--framework=5", f"--model={name}.onnx", f"--output={name}", "--soc_version=Ascend310P3")
    test.assertEqual(r.returncode, 1, r.stdout + r.stderr)
    test.assertRegex(r.stdout + r.stderr, r"E\d{5}")
    test.assertIn(why, r.stdout + r.stderr)
    test.assertFalse(os.path.exists(os.path.join(WORK, name + ".om")))
    return r.stdout + r.stderr


def single_op(name, op, x, out_dtype, consts=(), **attrs):
    """A one-op ONNX model `name`.onnx: input x, the op (named <name>.quant & co. as AMCT names them)."""
    inits = [numpy_helper.from_array(a, n) for n, a in consts]
    node = helper.make_node(op, ["x"] + [n for n, _ in consts], ["y"], name=f"layer.{op}", **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype], list(x.shape))],
                              [helper.make_tensor_value_info("y", ONNX_TYPE[np.dtype(out_dtype)], list(x.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(WORK, name + ".onnx"))


def npu(name, x, soc):
    """Converts name.onnx for `soc`, runs it on x, returns the output."""
    r = run(ATC, "--framework=5", f"--model={name}.onnx", f"--output={name}_{soc}", f"--soc_version={soc}")
    assert r.returncode == 0, r.stdout + r.stderr
    np.save(os.path.join(WORK, name + "_in.npy"), x)
    out = os.path.join(WORK, f"{name}_{soc}_out")
    r = run(MSAME, "--model", f"{name}_{soc}.om", "--input", name + "_in.npy", "--output", out, "--outfmt", "NPY")
    assert r.returncode == 0, r.stdout + r.stderr
    (path,) = glob.glob(os.path.join(out, "*output_0.npy"))
    return np.load(path)


# ---- numpy models of the arithmetic -----------------------------------------------------------------------------

def f16(v):
    with np.errstate(over="ignore"):  # past 65504 is inf in fp16, as on the device
        return np.asarray(v, np.float32).astype(F16).astype(np.float32)


def quant_ref(x, scale, offset, sqrt_mode=False, rnd=np.rint):
    s, o = f16(scale), f16(offset)
    v = f16(f16(x) * s)
    if sqrt_mode:
        v = f16(v * s)
    v = f16(v.astype(np.float64) + o)
    return np.clip(np.nan_to_num(rnd(v), nan=0.0), -128, 127).astype(np.int8)


def scale_bits(scale):
    """AMCT's uint64 deq_scale: the fp32 scale's bits, zero-extended."""
    return np.asarray(scale, np.float32).view(np.uint32).astype(np.uint64)


def channel_view(scale, shape):
    return scale.reshape((1, -1, 1, 1) if len(shape) == 4 else (-1,))


def dequant_ref(x, scale, family, relu=False, sqrt_mode=False, out=F16):
    s = np.asarray(scale, np.float32)
    if family == "v100":  # fp16 steps, saturating (Ascend310 has only the saturation mode)
        sat = lambda v: np.clip(f16(v), -65504, 65504)
        s = channel_view(f16(s), x.shape)
        v = sat(sat(x.astype(np.float32)) * s)
        v = np.maximum(v, 0) if relu else v
        return (sat(v * s) if sqrt_mode else v).astype(out)
    if family == "fixpipe":
        s = (s.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    v = x.astype(np.float32) * channel_view(s, x.shape)
    return (np.maximum(v, 0) if relu else v).astype(out)


class Quant(unittest.TestCase):
    def test_ties_saturation_and_round_modes(self):
        # x * 1 lands on every .5 tie; 1000 and -1000 saturate both ends; NaN becomes 0
        x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 1000, -1000, 126.5, -128.5, np.nan, 0.1, -0.1, 7], np.float32).reshape(1, 16, 1, 1)
        for mode, rnd in (("Round", np.rint), ("Floor", np.floor), ("Ceil", np.ceil), ("Trunc", np.trunc)):
            with self.subTest(mode=mode):
                single_op(f"q_{mode}", "AscendQuant", x, np.int8, scale=1.0, offset=0.0, round_mode=mode, dst_type="INT8")
                np.testing.assert_array_equal(npu(f"q_{mode}", x, "Ascend310P3"), quant_ref(x, 1.0, 0.0, rnd=rnd))
        self.assertEqual(list(quant_ref(x, 1.0, 0.0).reshape(-1)[:6]), [0, 2, 2, 0, -2, -2])  # ties to even

    def test_fp16_steps_offset_and_sqrt_mode(self):
        x = (np.random.default_rng(1).standard_normal((2, 8, 5, 5)) * 3).astype(np.float32)
        for name, scale, offset, sqrt_mode in (("q_plain", 1 / 0.0231, 3.0, 0), ("q_sqrt", 181.3, -2.0, 1)):
            with self.subTest(name=name):
                single_op(name, "AscendQuant", x, np.int8, scale=scale, offset=offset, sqrt_mode=sqrt_mode)
                for soc in ("Ascend310", "Ascend910B1"):
                    np.testing.assert_array_equal(npu(name, x, soc), quant_ref(x, scale, offset, bool(sqrt_mode)))


class Dequant(unittest.TestCase):
    x = np.random.default_rng(2).integers(-40000, 40000, (1, 16, 4, 4)).astype(np.int32)
    scale = (np.random.default_rng(3).random(16) * 1e-3 + 1e-5).astype(np.float32)

    def test_each_soc_generation_per_channel_and_relu(self):
        for relu in (0, 1):
            name = f"dq_u64_relu{relu}"
            single_op(name, "AscendDequant", self.x, np.float16, [("deq_scale", scale_bits(self.scale))], dtype=1, relu_flag=relu)
            for soc, family in (("Ascend310P3", "v200"), ("Ascend910B1", "fixpipe")):
                with self.subTest(soc=soc, relu=relu):
                    got = npu(name, self.x, soc)
                    self.assertEqual(got.dtype, np.float16)
                    np.testing.assert_array_equal(got, dequant_ref(self.x, self.scale, family, bool(relu)))
        # v100 (Ascend310): the fp16 deq_scale form, in fp16 steps: past 2048 an int32 loses bits, past 65504 it overflows
        single_op("dq_f16", "AscendDequant", self.x, np.float16, [("deq_scale", self.scale.astype(F16))], dtype=1, relu_flag=1)
        np.testing.assert_array_equal(npu("dq_f16", self.x, "Ascend310"), dequant_ref(self.x, self.scale, "v100", True))
        # the 19-bit scale of the fixpipe differs from the full fp32 scale somewhere
        self.assertFalse(np.array_equal(dequant_ref(self.x, self.scale, "fixpipe"), dequant_ref(self.x, self.scale, "v200")))

    def test_per_tensor_and_fp32_output(self):
        single_op("dq_scalar", "AscendDequant", self.x, np.float32, [("deq_scale", scale_bits(self.scale[:1]))], dtype=0)
        got = npu("dq_scalar", self.x, "Ascend310P3")
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, dequant_ref(self.x, self.scale[:1], "v200", out=np.float32))


class RequantAndAntiQuant(unittest.TestCase):
    def test_requant(self):
        x = np.random.default_rng(4).integers(-3000, 3000, (1, 8, 3, 3)).astype(np.int32)
        scale = np.full(8, 0.037, np.float32)
        single_op("rq", "AscendRequant", x, np.int8, [("req_scale", scale_bits(scale))], relu_flag=1)
        ref = np.clip(np.rint(np.maximum(x.astype(np.float32) * np.float32(0.037), 0)), -128, 127).astype(np.int8)
        np.testing.assert_array_equal(npu("rq", x, "Ascend310P3"), ref)

    def test_anti_quant(self):
        x = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 4, 4)
        single_op("aq", "AscendAntiQuant", x, np.float16, scale=0.0173, offset=-3.0, dtype=1)
        ref = f16(f16((x.astype(np.float64) + f16(-3.0)).astype(np.float32)) * f16(0.0173)).astype(F16)
        np.testing.assert_array_equal(npu("aq", x, "Ascend310P3"), ref)


    def test_caffe2_int8_ops_as_cann_maps_them(self):
        """Int8Quantize is AscendQuant with scale = Y_scale and offset = Y_zero_point; Int8Dequantize is AscendAntiQuant
        (to fp16) with the zero point added as CANN's plugin does."""
        x = (np.random.default_rng(16).standard_normal((1, 16, 4, 4)) * 8).astype(np.float32)
        single_op("c2q", "Int8Quantize", x, np.int8, Y_scale=6.5, Y_zero_point=3)
        np.testing.assert_array_equal(npu("c2q", x, "Ascend310P3"), quant_ref(x, 6.5, 3.0))
        xi = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 4, 4)
        single_op("c2dq", "Int8Dequantize", xi, np.float16, Y_scale=0.0173, Y_zero_point=2)
        ref = f16(f16((xi.astype(np.float64) + f16(2.0)).astype(np.float32)) * f16(0.0173)).astype(F16)
        np.testing.assert_array_equal(npu("c2dq", xi, "Ascend310P3"), ref)


def amct_conv(name, w_int8, bias_int32, deq_scale, scale_d, stride=1, pad=1, fp16_scale=False, dequant_dtype=1):
    """AMCT's deploy layout of one conv: <layer>.quant -> Conv (int8 weights, int32 bias) -> <layer>.dequant."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, w_int8.shape[1], 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16 if dequant_dtype == 1 else TensorProto.FLOAT, None)
    deq = deq_scale.astype(F16) if fp16_scale else scale_bits(deq_scale)
    inits = [numpy_helper.from_array(w_int8, "conv.weight"), numpy_helper.from_array(bias_int32, "conv.bias"),
             numpy_helper.from_array(deq, "conv.dequant.param")]
    nodes = [helper.make_node("AscendQuant", ["x"], ["xq"], name="conv.quant", scale=1 / scale_d, offset=0.0, dst_type="INT8"),
             helper.make_node("Conv", ["xq", "conv.weight", "conv.bias"], ["acc"], name="conv", kernel_shape=list(w_int8.shape[2:]),
                              strides=[stride, stride], pads=[pad] * 4),
             helper.make_node("AscendDequant", ["acc", "conv.dequant.param"], ["y"], name="conv.dequant", dtype=dequant_dtype)]
    model = helper.make_model(helper.make_graph(nodes, name, [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(WORK, name + ".onnx"))


def conv_int(xq, w, b, stride, pad):
    """int8 conv in exact integers (int64), NCHW."""
    xp = np.pad(xq.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return (np.einsum("nchwij,ocij->nohw", win, w.astype(np.int64)) + b.reshape(1, -1, 1, 1)).astype(np.int32)


class QuantizedConv(unittest.TestCase):
    """The quantized conv as AMCT deploys it: int8 x int8 -> int32 exactly, then each SoC's dequant."""

    def test_amct_deploy_conv_bit_exact(self):
        r = np.random.default_rng(5)
        x = r.standard_normal((1, 24, 8, 8)).astype(np.float32)
        w = r.integers(-127, 128, (32, 24, 3, 3)).astype(np.int8)
        b = r.integers(-20000, 20000, 32).astype(np.int32)
        scale_d = 0.021
        deq = (scale_d * (r.random(32) * 0.01 + 0.001)).astype(np.float32)
        for stride in (1, 2):
            xq = quant_ref(x, np.float32(1 / scale_d), 0.0)
            acc = conv_int(xq, w, b, stride, 1)
            amct_conv(f"qconv{stride}", w, b, deq, scale_d, stride)
            for soc, family in (("Ascend310P3", "v200"), ("Ascend910B1", "fixpipe")):
                with self.subTest(stride=stride, soc=soc):
                    np.testing.assert_array_equal(npu(f"qconv{stride}", x, soc), dequant_ref(acc, deq, family))
        amct_conv("qconv_v100", w, b, deq, scale_d, fp16_scale=True)
        acc = conv_int(quant_ref(x, np.float32(1 / scale_d), 0.0), w, b, 1, 1)
        np.testing.assert_array_equal(npu("qconv_v100", x, "Ascend310"), dequant_ref(acc, deq, "v100"))

    def test_sums_past_2_to_the_24_stay_exact(self):
        """int32 sums past 2^24 (where fp32 stops holding every integer): a 3x3 conv over 128 channels of saturated
        inputs, and a huge int32 bias; equal to the exact integer arithmetic."""
        r = np.random.default_rng(7)
        x = np.abs(r.standard_normal((1, 128, 8, 8))).astype(np.float32) + 10  # quantizes to 127
        w = r.integers(120, 128, (8, 128, 3, 3)).astype(np.int8)
        b = r.integers(-2**30, 2**30, 8).astype(np.int32)
        deq = np.full(8, 1e-6, np.float32)
        amct_conv("qconv_big", w, b, deq, 0.02, dequant_dtype=0)
        acc = conv_int(quant_ref(x, np.float32(50.0), 0.0), w, b, 1, 1)
        self.assertGreater(np.abs(acc.astype(np.int64) - b.reshape(1, -1, 1, 1)).max(), 2**24)
        np.testing.assert_array_equal(npu("qconv_big", x, "Ascend310P3"), dequant_ref(acc, deq, "v200", out=np.float32))

    def test_amct_deploy_gemm_bit_exact(self):
        r = np.random.default_rng(6)
        x = r.standard_normal((4, 64)).astype(np.float32)
        w = r.integers(-127, 128, (10, 64)).astype(np.int8)
        b = r.integers(-5000, 5000, 10).astype(np.int32)
        deq = (0.03 * (r.random(10) * 0.01 + 0.001)).astype(np.float32)
        inits = [numpy_helper.from_array(w, "fc.weight"), numpy_helper.from_array(b, "fc.bias"), numpy_helper.from_array(scale_bits(deq), "fc.dequant.param")]
        nodes = [helper.make_node("AscendQuant", ["x"], ["xq"], name="fc.quant", scale=1 / 0.03, offset=0.0),
                 helper.make_node("Gemm", ["xq", "fc.weight", "fc.bias"], ["acc"], name="fc", transB=1),
                 helper.make_node("AscendDequant", ["acc", "fc.dequant.param"], ["y"], name="fc.dequant", dtype=1)]
        graph = helper.make_graph(nodes, "qfc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, "qfc.onnx"))
        acc = (quant_ref(x, np.float32(1 / 0.03), 0.0).astype(np.int64) @ w.astype(np.int64).T + b).astype(np.int32)
        for soc, family in (("Ascend310P3", "v200"), ("Ascend910B1", "fixpipe")):
            with self.subTest(soc=soc):
                np.testing.assert_array_equal(npu("qfc", x, soc), dequant_ref(acc, deq, family))

    def test_int8_weights_with_a_float_bias_is_refused(self):
        w = np.ones((4, 4, 3, 3), np.int8)
        amct_conv("qconv_badbias", w, np.ones(4, np.int32), np.full(4, 1e-3, np.float32), 0.02)
        m = onnx.load(os.path.join(WORK, "qconv_badbias.onnx"))
        m.graph.initializer[1].CopyFrom(numpy_helper.from_array(np.ones(4, np.float32), "conv.bias"))
        onnx.save(m, os.path.join(WORK, "qconv_badbias.onnx"))
        refused(self, "qconv_badbias", "int8 weights with a float32 bias")


class QuantFusion(unittest.TestCase):
    """TbeConvDequantQuantFusionPass: conv -> dequant -> relu -> quant -> conv ... as one cube task per layer,
    with the same values as the separate tasks, and the int8 cube's time against force_fp16."""

    def chain(self, name, int8):
        r = np.random.default_rng(9)
        nodes, inits, cur = [], [], "x"
        for i in range(3):
            w = r.standard_normal((256, 256, 3, 3)).astype(np.float32) * 0.02
            if int8:
                if i == 0:
                    nodes.append(helper.make_node("AscendQuant", [cur], ["q0"], name="c0.quant", scale=40.0, offset=0.0))
                    cur = "q0"
                inits += [numpy_helper.from_array(np.clip(np.rint(w * 500), -127, 127).astype(np.int8), f"w{i}"),
                          numpy_helper.from_array(r.integers(-500, 500, 256).astype(np.int32), f"b{i}"),
                          numpy_helper.from_array(scale_bits(np.full(256, 1 / 20000, np.float32)), f"d{i}")]
                nodes += [helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"a{i}"], name=f"c{i}", kernel_shape=[3, 3], pads=[1] * 4),
                          helper.make_node("AscendDequant", [f"a{i}", f"d{i}"], [f"f{i}"], name=f"c{i}.dequant", dtype=1),
                          helper.make_node("Relu", [f"f{i}"], [f"r{i}"], name=f"relu{i}")]
                cur = f"r{i}"
                if i < 2:
                    nodes.append(helper.make_node("AscendQuant", [cur], [f"q{i + 1}"], name=f"c{i + 1}.quant", scale=40.0, offset=0.0))
                    cur = f"q{i + 1}"
            else:
                inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(np.zeros(256, np.float32), f"b{i}")]
                nodes += [helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"a{i}"], name=f"c{i}", kernel_shape=[3, 3], pads=[1] * 4),
                          helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}")]
                cur = f"r{i}"
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 28, 28])],
                                  [helper.make_tensor_value_info(cur, TensorProto.FLOAT16 if int8 else TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, name + ".onnx"))

    def test_fused_equals_separate_and_is_faster(self):
        self.chain("qchain", True)
        self.chain("fchain", False)
        x = np.random.default_rng(10).standard_normal((1, 256, 28, 28)).astype(np.float32)
        json_off = os.path.join(WORK, "quant_fusion_off.json")
        with open(json_off, "w") as f:
            f.write('{"Switch": {"UBFusion": {"TbeConvDequantQuantFusionPass": "off"}}}')
        fused = npu("qchain", x, "Ascend310P3")
        r = run(ATC, "--framework=5", "--model=qchain.onnx", "--output=qchain_off", "--soc_version=Ascend310P3", f"--fusion_switch_file={json_off}")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        np.save(os.path.join(WORK, "qchain_off_in.npy"), x)
        r = run(MSAME, "--model", "qchain_off.om", "--input", "qchain_off_in.npy", "--output", "qchain_off_out", "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        (sep,) = glob.glob(os.path.join(WORK, "qchain_off_out", "*output_0.npy"))
        np.testing.assert_array_equal(fused, np.load(sep))
        shown = {m: run(ATC, "--mode=6", f"--om={m}.om").stdout for m in ("qchain_Ascend310P3", "qchain_off", "fchain_Ascend310P3")}
        self.assertEqual(shown["qchain_Ascend310P3"].count("AscendDequant"), 0)
        self.assertEqual(shown["qchain_off"].count("AscendDequant"), 3)
        npu("fchain", x, "Ascend310P3")
        shown["fchain_Ascend310P3"] = run(ATC, "--mode=6", "--om=fchain_Ascend310P3.om").stdout
        ms = {m: float(t.split("Simulated NPU time: ")[1].split(" ms")[0]) for m, t in shown.items()}
        # Ascend310P3's cube does twice the int8 MACs of fp16 per cycle (its spec's cube_k rows): fused int8 layers
        # must take visibly less than fp16 ones, and fusing must save the separate dequant/quant tasks.
        print(f"simulated: int8 fused {ms['qchain_Ascend310P3']:.4f} ms, int8 separate {ms['qchain_off']:.4f} ms, fp16 {ms['fchain_Ascend310P3']:.4f} ms")
        self.assertLess(ms["qchain_Ascend310P3"], 0.8 * ms["fchain_Ascend310P3"])
        self.assertLess(ms["qchain_Ascend310P3"], ms["qchain_off"])
        # profparse's op summary shows the int8 ops with their dtypes
        with open(os.path.join(WORK, "qprof.json"), "w") as f:
            f.write('{"profiler": {"switch": "on", "output": "%s", "task_time": "on"}}' % os.path.join(WORK, "qprof"))
        r = run(MSAME, "--model", "qchain_Ascend310P3.om", "--input", "qchain_in.npy", "--acl_json_path", "qprof.json", "--output", "qprof_out")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run(os.path.join(BUILD, "tools/profparse/profparse"), "--export", "on", "--output", os.path.join(WORK, "qprof"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        import csv
        (summary,) = glob.glob(os.path.join(WORK, "qprof/**/op_summary*.csv"), recursive=True)
        with open(summary) as f:
            rows = {r["Op Name"]: r for r in csv.DictReader(f)}
        # msprof writes the lists inside literal quotes (its readers strip the first and last character)
        self.assertEqual(rows["c0.quant"]["Output Data Types"], '"INT8"')
        self.assertEqual(rows["c1"]["Input Data Types"], '"INT8;INT8;INT32"')
        self.assertEqual(rows["c1"]["Output Data Types"], '"INT8"')  # dequant, relu and the next quant fused in


class DualOutputFusion(unittest.TestCase):
    """TbeConvDequantVaddReluQuantFusionPass: a residual block whose output is read in float (the skip path) and
    by the next layers' AscendQuants: the conv that ends the block writes both, bit for bit what the separate
    tasks give and what numpy gives, and the simulated time drops by the quant tasks it saves."""

    def block(self, r):
        f = numpy_helper.from_array
        inits, nodes = [], [helper.make_node("AscendQuant", ["x"], ["q0"], name="c0.quant", scale=40.0, offset=0.0)]
        params = {}
        for i in range(4):
            w = r.integers(-60, 61, (32, 32, 3, 3)).astype(np.int8)
            b = r.integers(-300, 300, 32).astype(np.int32)
            d = (r.random(32) * 2e-4 + 1e-4).astype(np.float32)
            params[i] = (w, b, d)
            inits += [f(w, f"w{i}"), f(b, f"b{i}"), f(scale_bits(d), f"d{i}")]
        conv = lambda i, src: [helper.make_node("Conv", [src, f"w{i}", f"b{i}"], [f"a{i}"], name=f"c{i}", kernel_shape=[3, 3], pads=[1] * 4),
                               helper.make_node("AscendDequant", [f"a{i}", f"d{i}"], [f"f{i}"], name=f"c{i}.dequant", dtype=1)]
        nodes += conv(0, "q0") + [helper.make_node("Relu", ["f0"], ["r0"], name="relu0"),
                                  helper.make_node("AscendQuant", ["r0"], ["q1"], name="c1.quant", scale=40.0, offset=0.0)]
        nodes += conv(1, "q1") + [helper.make_node("Add", ["f1", "r0"], ["s1"], name="add1"), helper.make_node("Relu", ["s1"], ["r1"], name="relu1"),
                                  helper.make_node("AscendQuant", ["r1"], ["q2"], name="c2.quant", scale=40.0, offset=0.0),
                                  helper.make_node("AscendQuant", ["r1"], ["q3"], name="c3.quant", scale=40.0, offset=0.0)]
        nodes += conv(2, "q2") + conv(3, "q3")
        out = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT16, None)
        graph = helper.make_graph(nodes, "qblock", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])],
                                  [out("r1"), out("f2"), out("f3")], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, "qblock.onnx"))
        return params

    def run_block(self, om, x, *flags):
        r = run(ATC, "--framework=5", "--model=qblock.onnx", f"--output={om}", "--soc_version=Ascend310P3", *flags)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        np.save(os.path.join(WORK, "qblock_in.npy"), x)
        r = run(MSAME, "--model", f"{om}.om", "--input", "qblock_in.npy", "--output", f"{om}_out", "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        outs = [np.load(os.path.join(WORK, f"{om}_out", f"{om}_output_{i}.npy")) for i in range(3)]
        shown = run(ATC, "--mode=6", f"--om={om}.om").stdout
        return outs, shown, float(shown.split("Simulated NPU time: ")[1].split(" ms")[0])

    def test_block_output_in_float_and_int8(self):
        rng = np.random.default_rng(21)
        w, x = self.block(rng), rng.standard_normal((1, 32, 8, 8)).astype(np.float32)
        off = os.path.join(WORK, "dual_off.json")
        with open(off, "w") as f:
            f.write('{"Switch": {"UBFusion": {"TbeConvDequantVaddReluQuantFusionPass": "off"}}}')
        fused, shown, fused_ms = self.run_block("qblock", x)
        separate, shown_off, separate_ms = self.run_block("qblock_off", x, f"--fusion_switch_file={off}")
        # numpy, Ascend310P3 (v200 deq_cast): the residual added in fp16, the next quant reading the fp16 result
        layer = lambda i, q: dequant_ref(conv_int(q, w[i][0], w[i][1], 1, 1), w[i][2], "v200")
        r0 = np.maximum(layer(0, quant_ref(x, 40.0, 0.0)), 0)
        r1 = np.maximum(f16(layer(1, quant_ref(r0, 40.0, 0.0)).astype(np.float32) + r0.astype(np.float32)), 0).astype(F16)
        q2 = quant_ref(r1, 40.0, 0.0)
        for got in (fused, separate):
            np.testing.assert_array_equal(got[0], r1)
            np.testing.assert_array_equal(got[1], layer(2, q2))
            np.testing.assert_array_equal(got[2], layer(3, q2))
        # one AscendQuant task left (the input's); c0 and c1 write their results twice, the twin quant is merged
        self.assertEqual(shown.count("AscendQuant"), 1, shown)
        self.assertEqual(shown_off.count("AscendQuant"), 4, shown_off)
        print(f"simulated: dual output {fused_ms:.4f} ms, separate quant tasks {separate_ms:.4f} ms")
        self.assertLess(fused_ms, separate_ms)


class ActivationBetweenLayers(unittest.TestCase):
    """A Relu6 (Clip) between two quantized convs, as MobileNet has: the Clip runs after the first conv's fused dequant
    on its channels-last result, then the next quant reads it; bit-exact against numpy."""

    def test_relu6_between_int8_convs(self):
        r = np.random.default_rng(22)
        f = numpy_helper.from_array
        params = [(r.integers(-60, 61, (16, 16, 3, 3)).astype(np.int8), r.integers(-300, 300, 16).astype(np.int32),
                   (r.random(16) * 2e-3 + 1e-3).astype(np.float32)) for _ in range(2)]
        inits = [f(np.array(0, np.float32), "lo"), f(np.array(6, np.float32), "hi")]
        for i, (w, b, d) in enumerate(params):
            inits += [f(w, f"w{i}"), f(b, f"b{i}"), f(scale_bits(d), f"d{i}")]
        nodes = [helper.make_node("AscendQuant", ["x"], ["q0"], name="c0.quant", scale=20.0, offset=0.0),
                 helper.make_node("Conv", ["q0", "w0", "b0"], ["a0"], name="c0", kernel_shape=[3, 3], pads=[1] * 4),
                 helper.make_node("AscendDequant", ["a0", "d0"], ["f0"], name="c0.dequant", dtype=1),
                 helper.make_node("Clip", ["f0", "lo", "hi"], ["r0"], name="relu6"),
                 helper.make_node("AscendQuant", ["r0"], ["q1"], name="c1.quant", scale=20.0, offset=0.0),
                 helper.make_node("Conv", ["q1", "w1", "b1"], ["a1"], name="c1", kernel_shape=[3, 3], pads=[1] * 4),
                 helper.make_node("AscendDequant", ["a1", "d1"], ["y"], name="c1.dequant", dtype=1)]
        graph = helper.make_graph(nodes, "qrelu6", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, "qrelu6.onnx"))
        x = r.standard_normal((1, 16, 8, 8)).astype(np.float32) * 3
        layer = lambda i, q: dequant_ref(conv_int(q, params[i][0], params[i][1], 1, 1), params[i][2], "v200")
        r0 = np.clip(layer(0, quant_ref(x, 20.0, 0.0)), 0, 6)
        np.testing.assert_array_equal(npu("qrelu6", x, "Ascend310P3"), layer(1, quant_ref(r0, 20.0, 0.0)))


def qdq_conv(name, s_x, w_int8, s_w, bias, s_y=None):
    """The same conv as ONNX QDQ: Q/DQ on the activation, DQ on int8 weights (per output channel), a float bias;
    with s_y, a Q/DQ pair on the output too (what the next layer or an Add would read)."""
    f = lambda a, n: numpy_helper.from_array(a, n)
    inits = [f(np.array(s_x, np.float32), "sx"), f(np.array(0, np.int8), "zx"), f(w_int8, "wq"), f(s_w.astype(np.float32), "sw"),
             f(np.zeros(len(s_w), np.int8), "zw"), f(bias.astype(np.float32), "b")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="q_x"),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wf"], name="dq_w", axis=0),
             helper.make_node("Conv", ["xf", "wf", "b"], ["y" if s_y is None else "c"], name="conv", kernel_shape=list(w_int8.shape[2:]), pads=[1] * 4)]
    if s_y is not None:
        inits += [f(np.array(s_y, np.float32), "sy"), f(np.array(0, np.int8), "zy")]
        nodes += [helper.make_node("QuantizeLinear", ["c", "sy", "zy"], ["cq"], name="q_y"),
                  helper.make_node("DequantizeLinear", ["cq", "sy", "zy"], ["y"], name="dq_y")]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, w_int8.shape[1], 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(WORK, name + ".onnx"))


class Qdq(unittest.TestCase):
    """ONNX QDQ models become CANN's quant ops (passes/qdq.h): the same outputs as the AMCT deploy form."""

    def setUp(self):
        r = np.random.default_rng(12)
        self.x = r.standard_normal((1, 16, 8, 8)).astype(np.float32)
        self.w = r.integers(-127, 128, (24, 16, 3, 3)).astype(np.int8)
        self.s_x, self.s_w = np.float32(0.025), (r.random(24) * 0.004 + 0.001).astype(np.float32)
        self.b = r.standard_normal(24).astype(np.float32)

    def test_qdq_equals_amct_deploy(self):
        qdq_conv("qdq1", self.s_x, self.w, self.s_w, self.b)
        deq = (self.s_x * self.s_w).astype(np.float32)
        b32 = np.rint(self.b.astype(np.float64) / deq).astype(np.int32)
        amct_conv("amct1", self.w, b32, deq, float(self.s_x), dequant_dtype=0)
        got_qdq, got_amct = npu("qdq1", self.x, "Ascend310P3"), npu("amct1", self.x, "Ascend310P3")
        np.testing.assert_array_equal(got_qdq, got_amct)
        acc = conv_int(quant_ref(self.x, np.float32(1 / self.s_x), 0.0), self.w, b32, 1, 1)
        np.testing.assert_array_equal(got_qdq, dequant_ref(acc, deq, "v200", out=np.float32))
        shown = run(ATC, "--mode=6", "--om=qdq1_Ascend310P3.om").stdout
        self.assertNotIn("DequantizeLinear", shown)
        # msame's reference path keeps ONNX's semantics (divide, round, dequantize in fp32): close, not equal
        np.save(os.path.join(WORK, "qdq1_ref_in.npy"), self.x)
        r = run(MSAME, "--model", "qdq1.onnx", "--input", "qdq1_ref_in.npy", "--output", "qdq1_ref", "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        (ref,) = glob.glob(os.path.join(WORK, "qdq1_ref", "*output_0.npy"))
        np.testing.assert_allclose(np.load(ref), got_qdq, atol=0.05)

    def test_output_pair_becomes_quant_antiquant(self):
        qdq_conv("qdq2", self.s_x, self.w, self.s_w, self.b, s_y=0.05)
        got = npu("qdq2", self.x, "Ascend310P3")
        shown = run(ATC, "--mode=6", "--om=qdq2_Ascend310P3.om").stdout
        self.assertIn("AscendAntiQuant", shown)
        self.assertEqual(got.shape, (1, 24, 8, 8))

    def test_qdq_matmul(self):
        """A transformer's projection: [1, 8, 64] x int8 [64, 32] per output column, as QDQ."""
        r = np.random.default_rng(13)
        x = r.standard_normal((1, 8, 64)).astype(np.float32)
        w = r.integers(-127, 128, (64, 32)).astype(np.int8)
        s_w = (r.random(32) * 0.004 + 0.001).astype(np.float32)
        f = lambda a, n: numpy_helper.from_array(a, n)
        inits = [f(np.array(self.s_x, np.float32), "sx"), f(np.array(0, np.int8), "zx"), f(w, "wq"), f(s_w, "sw"), f(np.zeros(32, np.int8), "zw")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="q_x"),
                 helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"], name="dq_x"),
                 helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wf"], name="dq_w", axis=1),
                 helper.make_node("MatMul", ["xf", "wf"], ["y"], name="proj")]
        graph = helper.make_graph(nodes, "qdq_mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, "qdq_mm.onnx"))
        acc = (quant_ref(x, np.float32(1 / self.s_x), 0.0).astype(np.int64) @ w.astype(np.int64)).astype(np.int32)
        deq = (self.s_x * s_w).astype(np.float32)
        np.testing.assert_array_equal(npu("qdq_mm", x, "Ascend310P3"), dequant_ref(acc, deq, "v200", out=np.float32))

    def qdq_conv_transpose(self, name, x_scale, w, s_w):
        """x (1, 16, 8, 8) -> Q/DQ -> ConvTranspose (stride 2, pads 1, output_padding 1) with per-channel DQ'd weights."""
        f = lambda a, n: numpy_helper.from_array(a, n)
        x_scale = np.asarray(x_scale, np.float32)
        inits = [f(x_scale, "sx"), f(np.zeros(x_scale.shape, np.int8), "zx"), f(w, "wq"), f(s_w, "sw"), f(np.zeros(len(s_w), np.int8), "zw"),
                 f(self.b, "b")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="q_x", axis=1),
                 helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"], name="dq_x", axis=1),
                 helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wf"], name="dq_w", axis=1),
                 helper.make_node("ConvTranspose", ["xf", "wf", "b"], ["y"], name="up", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4,
                                  output_padding=[1, 1])]
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, name + ".onnx"))

    def test_qdq_conv_transpose_bit_exact(self):
        w = np.random.default_rng(14).integers(-127, 128, (16, 24, 3, 3)).astype(np.int8)  # (C_in, M, kh, kw)
        self.qdq_conv_transpose("qdq_up", self.s_x, w, self.s_w)
        deq = (self.s_x * self.s_w).astype(np.float32)
        b32 = np.rint(self.b.astype(np.float64) / deq).astype(np.int32)
        xq = quant_ref(self.x, np.float32(1 / self.s_x), 0.0).astype(np.int64)
        full = np.zeros((1, 24, 7 * 2 + 3 + 1, 7 * 2 + 3 + 1), np.int64)  # before cropping the pads; + output_padding
        for kh in range(3):
            for kw in range(3):
                full[:, :, kh:kh + 15:2, kw:kw + 15:2] += np.einsum("nchw,cm->nmhw", xq, w[:, :, kh, kw].astype(np.int64))
        acc = (full[:, :, 1:17, 1:17] + b32.reshape(1, -1, 1, 1)).astype(np.int32)
        for soc, family in (("Ascend310P3", "v200"), ("Ascend910B1", "fixpipe")):
            with self.subTest(soc=soc):
                np.testing.assert_array_equal(npu("qdq_up", self.x, soc), dequant_ref(acc, deq, family, out=np.float32))

    def test_unquantizable_layer_is_an_error_or_stays_float(self):
        """Per-channel activation scales cannot be quantized on Ascend: an error naming the layer, or with
        --qdq_fallback=float a warning, and the layer computes in float on the dequantized weights."""
        w = np.random.default_rng(15).integers(-127, 128, (16, 24, 3, 3)).astype(np.int8)
        self.qdq_conv_transpose("qdq_perchan", np.full(16, self.s_x, np.float32), w, self.s_w)
        self.assertIn("up", refused(self, "qdq_perchan", "--qdq_fallback=float"))
        r = run(ATC, "--framework=5", "--model=qdq_perchan.onnx", "--output=qdq_perchan_f", "--soc_version=Ascend310P3", "--qdq_fallback=float")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("node 'up' stays float", r.stdout + r.stderr)
        np.save(os.path.join(WORK, "qdq_perchan_in.npy"), self.x)
        r = run(MSAME, "--model", "qdq_perchan_f.om", "--input", "qdq_perchan_in.npy", "--output", "qdq_perchan_out", "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        wf = w.astype(np.float64) * self.s_w.reshape(1, -1, 1, 1)
        full = np.zeros((1, 24, 18, 18))
        for kh in range(3):
            for kw in range(3):
                full[:, :, kh:kh + 15:2, kw:kw + 15:2] += np.einsum("nchw,cm->nmhw", self.x.astype(np.float64), wf[:, :, kh, kw])
        ref = full[:, :, 1:17, 1:17] + self.b.reshape(1, -1, 1, 1)
        (got,) = glob.glob(os.path.join(WORK, "qdq_perchan_out", "*output_0.npy"))
        np.testing.assert_allclose(np.load(got), ref, rtol=0.02, atol=0.02 * np.abs(ref).max())

    def test_tiny_activation_scale_takes_sqrt_mode(self):
        """1/s_x past fp16's range: AscendQuant gets sqrt(1/s_x) with sqrt_mode, as AMCT writes it; past that even, the
        layer cannot be quantized."""
        x = self.x * 1e-4
        s_x = np.float32(2e-6)
        qdq_conv("qdq_tiny", s_x, self.w, self.s_w, self.b)
        deq = (s_x * self.s_w).astype(np.float32)
        b32 = np.rint(self.b.astype(np.float64) / deq).astype(np.int32)
        root = np.sqrt(np.float32(1) / s_x, dtype=np.float32)
        acc = conv_int(quant_ref(x, root, 0.0, sqrt_mode=True), self.w, b32, 1, 1)
        np.testing.assert_array_equal(npu("qdq_tiny", x, "Ascend310P3"), dequant_ref(acc, deq, "v200", out=np.float32))
        qdq_conv("qdq_tinier", np.float32(1e-10), self.w, self.s_w, self.b)
        self.assertIn("conv", refused(self, "qdq_tinier", "even with sqrt_mode"))

    def test_bad_placements(self):
        qdq_conv("qdq_bad", self.s_x, self.w, self.s_w, self.b)
        m = onnx.load(os.path.join(WORK, "qdq_bad.onnx"))
        m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array(0.0, np.float32), "sx"))
        onnx.save(m, os.path.join(WORK, "qdq_bad.onnx"))
        refused(self, "qdq_bad", "not a finite non-zero number")
        qdq_conv("qdq_pair", self.s_x, self.w, self.s_w, self.b)
        m = onnx.load(os.path.join(WORK, "qdq_pair.onnx"))
        m.graph.node[1].input[1] = "sw_x"
        m.graph.initializer.append(numpy_helper.from_array(np.array(0.03, np.float32), "sw_x"))
        onnx.save(m, os.path.join(WORK, "qdq_pair.onnx"))
        self.assertIn("dq_x", refused(self, "qdq_pair", "must share scale and zero point"))


class BadInput(unittest.TestCase):
    def expect(self, name, why):
        self.assertIn("layer.", refused(self, name, why))  # the node is named

    def test_bad_scales_and_operands(self):
        x = np.zeros((1, 4, 2, 2), np.float32)
        single_op("bad_zero", "AscendQuant", x, np.int8, scale=0.0, offset=0.0)
        self.expect("bad_zero", "not a finite non-zero number")
        single_op("bad_nan", "AscendQuant", x, np.int8, scale=float("nan"), offset=0.0)
        self.expect("bad_nan", "not a finite non-zero number")
        xi = np.zeros((1, 4, 2, 2), np.int32)
        single_op("bad_len", "AscendDequant", xi, np.float16, [("deq_scale", scale_bits(np.ones(3, np.float32)))], dtype=1)
        self.expect("bad_len", "3 values")
        single_op("bad_dtype", "AscendDequant", xi, np.float16, [("deq_scale", np.ones(4, np.float32))], dtype=1)
        self.expect("bad_dtype", "must be uint64")

    def test_quant_feeding_an_op_without_int8(self):
        nodes = [helper.make_node("AscendQuant", ["x"], ["q"], name="layer.quant", scale=10.0, offset=0.0),
                 helper.make_node("Flatten", ["q"], ["qf"], name="layer.flatten"),
                 helper.make_node("Relu", ["qf"], ["y"], name="layer.relu")]
        graph = helper.make_graph(nodes, "quant_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 2, 2])],
                                  [helper.make_tensor_value_info("y", TensorProto.INT8, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(WORK, "quant_relu.onnx"))
        self.assertIn("'layer.relu' (Relu)", refused(self, "quant_relu", "cannot compute on int8"))


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    unittest.main(argv=sys.argv[:1], verbosity=2)
