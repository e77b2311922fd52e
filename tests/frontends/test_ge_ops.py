#!/usr/bin/python3
"""The GE op types ATC leaves in .om files beyond the first ~55 (the *D constant-attribute forms and their plain
twins, Caffe's Pooling/FullyConnection/Deconvolution, TF's Conv2DBackpropInput, AMCT's quantize ops): each in a
one-op GE graph written with the Python protobuf classes of libcore/frontend/ge/ge_ir.proto (the independent
encoder test_air.py uses), run by msame on the reference path and, converted by atc, on the simulated device,
against a numpy implementation of the op written here (must_keep_origin_dtype: the 910B's cube computes fp32).
usage: test_ge_ops.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import functools
import glob
import os
import shutil
import sys
import unittest

import numpy as np

import airgraph
import tfgraph
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SOURCE, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
must = functools.partial(T.must, cwd=WORK)
ge = None
tf = None
RNG = np.random.default_rng(11)


def write_air(name, ge_type, x, consts, attrs, outputs, order=None):
    """A one-op GE graph (airgraph.single_op) as WORK/<name>.air, and its input as WORK/<name>_x.npy."""
    path = os.path.join(WORK, name + ".air")
    with open(path, "wb") as f:
        f.write(airgraph.single_op(ge, name, ge_type, x, consts, attrs, outputs, order))
    np.save(os.path.join(WORK, name + "_x.npy"), x)
    return path


def outputs(model, x_npy, folder):
    shutil.rmtree(os.path.join(WORK, folder), ignore_errors=True)
    must(MSAME, "--model", model, "--input", x_npy, "--output", folder, "--outfmt", "NPY")
    files = sorted(glob.glob(os.path.join(WORK, folder, "**", "*_output_*.npy"), recursive=True),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    return [np.load(f) for f in files]


class GeOps(unittest.TestCase):
    def check(self, name, ge_type, x, consts, attrs, want, order=None, device=True, atol=1e-5):
        """The op must compute `want` (a list of arrays) on msame's reference path and, converted by atc, on the
        simulated device."""
        with self.subTest(op=name, ge_type=ge_type):
            air = write_air(name, ge_type, x, consts, attrs, want, order)
            got = outputs(air, name + "_x.npy", name + "_ref")
            self.assertEqual(len(got), len(want))
            for g, w in zip(got, want):
                self.assertEqual(g.shape, w.shape)
                np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=atol)
            if device:
                must(ATC, "--framework=1", f"--model={air}", f"--output={name}", "--soc_version=Ascend910B1", "--precision_mode=must_keep_origin_dtype")
                for g, w in zip(outputs(name + ".om", name + "_x.npy", name + "_dev"), want):
                    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=atol)

    def test_pad(self):
        x = RNG.standard_normal((1, 2, 3, 4), np.float32)
        p = [[0, 0], [1, 0], [2, 1], [0, 3]]
        self.check("padd", "PadD", x, {}, {"paddings": p}, [np.pad(x, p)])
        self.check("pad", "Pad", x, {"paddings": np.array(p, np.int32)}, {}, [np.pad(x, p)])
        self.check("padv3d_reflect", "PadV3D", x, {}, {"paddings": p, "mode": "reflect"}, [np.pad(x, p, mode="reflect")])
        self.check("padv3d_value", "PadV3D", x, {}, {"paddings": p, "constant_values": 2.5}, [np.pad(x, p, constant_values=2.5)])

    def test_split(self):
        x = RNG.standard_normal((2, 6, 4), np.float32)
        self.check("splitd", "SplitD", x, {}, {"split_dim": 1, "num_split": 3}, np.split(x, 3, axis=1))
        self.check("splitvd", "SplitVD", x, {}, {"size_splits": [1, -1], "split_dim": -1, "num_split": 2}, np.split(x, [1], axis=2))
        self.check("splitv", "SplitV", x, {"sizes": np.array([4, 2], np.int32), "dim": np.array(1, np.int32)}, {"num_split": 2},
                   np.split(x, [4], axis=1))

    def test_tile(self):
        x = RNG.standard_normal((2, 1, 3), np.float32)
        self.check("tiled", "TileD", x, {}, {"multiples": [1, 4, 2]}, [np.tile(x, (1, 4, 2))])
        self.check("tile", "Tile", x, {"m": np.array([3, 2, 1], np.int32)}, {}, [np.tile(x, (3, 2, 1))])

    def test_strided_slice(self):
        x = RNG.standard_normal((4, 6, 5), np.float32)
        # x[1:, ::2, 3]: begin_mask on dim 1, shrink on dim 2
        attrs = {"begin": [1, 0, 3], "end": [4, 6, 4], "strides": [1, 2, 1], "begin_mask": 2, "shrink_axis_mask": 4}
        self.check("ssd", "StridedSliceD", x, {}, attrs, [x[1:, ::2, 3]])
        # x[::-1, 5:0:-2, None, :]: end_mask on dim 0, new axis, backward steps
        consts = {"b": np.array([0, 5, 0, 0], np.int32), "e": np.array([0, 0, 0, 0], np.int32), "s": np.array([-1, -2, 1, 1], np.int32)}
        self.check("ss", "StridedSlice", x, consts, {"begin_mask": 9, "end_mask": 9, "new_axis_mask": 4}, [x[::-1, 5:0:-2, None, :]])

    def test_gather(self):
        x = RNG.standard_normal((5, 4, 3), np.float32)
        idx = np.array([4, 0, 2, 2], np.int32)
        self.check("gatherv2d", "GatherV2D", x, {"idx": np.array([3, 0, 1, 1], np.int32)}, {"axis": 1}, [np.take(x, [3, 0, 1, 1], axis=1)])
        self.check("gatherv2", "GatherV2", x, {"idx": idx, "axis": np.array(0, np.int32)}, {}, [np.take(x, idx, axis=0)])
        self.check("gather", "Gather", x, {"idx": idx.reshape(2, 2)}, {}, [np.take(x, idx.reshape(2, 2), axis=0)])

    def test_resize(self):
        x = RNG.standard_normal((1, 2, 5, 7), np.float32)
        for bilinear in (False, True):
            for mode in ("asymmetric", "align_corners", "half_pixel"):
                flags = {"align_corners": mode == "align_corners", "half_pixel_centers": mode == "half_pixel"}
                want = tf_resize(x, (8, 4), bilinear, mode)
                kind = "ResizeBilinearV2" if bilinear else "ResizeNearestNeighborV2"
                self.check(f"{kind}_{mode}", kind + "D", x, {}, {"size": [8, 4], **flags}, [want])
        self.check("resize_plain", "ResizeBilinearV2", x, {"size": np.array([3, 9], np.int32)}, {}, [tf_resize(x, (3, 9), True, "asymmetric")])

    def test_reduce(self):
        x = RNG.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
        self.check("reducemind", "ReduceMinD", x, {}, {"axes": [1], "keep_dims": True}, [x.min(axis=1, keepdims=True)])
        self.check("reduceprodd", "ReduceProdD", x, {}, {"axes": [0, 2], "keep_dims": False}, [x.prod(axis=(0, 2))])
        self.check("reducemax", "ReduceMax", x, {"axes": np.array([-1], np.int32)}, {"keep_dims": False}, [x.max(axis=-1)])

    def test_caffe_pooling(self):
        x = RNG.standard_normal((1, 3, 6, 6), np.float32)
        # max 3x3 stride 2, no pad: Caffe rounds up, so a third, partial window per dim
        self.check("pool_max", "Pooling", x, {}, {"mode": 0, "window": [3, 3], "stride": [2, 2], "pad": [0, 0, 0, 0]}, [caffe_pool(x, 3, 2, 0, True)])
        x7 = RNG.standard_normal((1, 3, 7, 7), np.float32)
        self.check("pool_avg", "Pooling", x7, {}, {"mode": 1, "window": [3, 3], "stride": [2, 2], "pad": [1, 1, 1, 1]}, [caffe_pool(x7, 3, 2, 1, False)])
        self.check("pool_global", "Pooling", x, {}, {"mode": 1, "global_pooling": True}, [x.mean(axis=(2, 3), keepdims=True)])

    def test_fully_connection(self):
        x = RNG.standard_normal((2, 3, 2, 2), np.float32)
        w, b = RNG.standard_normal((5, 3, 2, 2), np.float32), RNG.standard_normal(5, np.float32)
        self.check("fc_caffe", "FullyConnection", x, {"w": w, "b": b}, {"num_output": 5}, [x.reshape(2, -1) @ w.reshape(5, -1).T + b])
        x1 = RNG.standard_normal((2, 6, 1, 1), np.float32)
        hwcn = RNG.standard_normal((1, 1, 6, 4), np.float32)
        self.check("fc_hwcn", "FullyConnection", x1, {"w": hwcn}, {"num_output": 4}, [(x1.reshape(2, 6) @ hwcn.reshape(6, 4)).reshape(2, 4, 1, 1)])

    def test_transposed_convolutions(self):
        dy = RNG.standard_normal((1, 4, 5, 5), np.float32)
        w = RNG.standard_normal((4, 3, 3, 3), np.float32)
        want = conv_transpose(dy, w, 2, (1, 1), 10)
        attrs = {"input_size": [1, 3, 10, 10], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1], "data_format": "NCHW"}
        self.check("backprop_d", "Conv2DBackpropInputD", dy, {"w": w}, attrs, [want], order=["w", "x"], atol=1e-4)
        plain = {k: v for k, v in attrs.items() if k != "input_size"}
        self.check("backprop", "Conv2DBackpropInput", dy, {"size": np.array([1, 3, 10, 10], np.int32), "w": w}, plain, [want],
                   order=["size", "w", "x"], atol=1e-4)
        b = RNG.standard_normal(3, np.float32)
        self.check("deconv", "Deconvolution", dy, {"w": w, "b": b},
                   {"strides": [2, 2], "pads": [0, 0, 0, 0], "dilations": [1, 1], "groups": 1},
                   [conv_transpose(dy, w, 2, (0, 0), 11) + b.reshape(1, 3, 1, 1)], atol=1e-4)

    def test_ascend_quant_ops(self):
        x = RNG.standard_normal((1, 4, 3, 3), np.float32) * 3
        self.check("quant", "AscendQuant", x, {}, {"scale": 20.0, "offset": 0.0, "sqrt_mode": False, "round_mode": "Round"},
                   [np.clip(np.rint(x * np.float32(20.0)), -128, 127).astype(np.int8)], device=False, atol=0)
        q = RNG.integers(-128, 128, (1, 4, 3, 3)).astype(np.int8)
        self.check("antiquant", "AscendAntiQuant", q, {}, {"scale": 0.05, "offset": 3.0, "sqrt_mode": False},
                   [((q.astype(np.float32) + 3) * np.float32(0.05))], device=False)
        acc = RNG.integers(-5000, 5000, (1, 4, 3, 3)).astype(np.int32)
        scale = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
        deq = scale.view(np.uint32).astype(np.uint64)  # GE's deq_scale: the fp32 scale in the low 32 bits
        self.check("dequant", "AscendDequant", acc, {"deq": deq}, {"sqrt_mode": False, "relu_flag": False},
                   [acc.astype(np.float32) * scale.reshape(1, 4, 1, 1)], device=False)

    def test_one_hot(self):
        idx = np.array([[0, 3, -1], [2, 1, 4]], np.int32)  # TF: -1 and 4 (past depth 4) are all off
        on, off = np.array(5.0, np.float32), np.array(-1.0, np.float32)
        hot = np.where(idx[..., None] == np.arange(4), 5.0, -1.0).astype(np.float32)
        self.check("onehotd", "OneHotD", idx, {"on": on, "off": off}, {"depth": 4, "axis": -1}, [hot])
        self.check("onehot", "OneHot", idx, {"depth": np.array(4, np.int32), "on": on, "off": off}, {"axis": 0}, [np.moveaxis(hot, -1, 0)])

    def test_batch_multi_class_nms(self):
        """Per image and class: boxes above score_threshold, greedily kept unless they overlap a kept one by more
        than iou_threshold (OpenCV's cv2.dnn.NMSBoxes is the reference for that part), at most max_size_per_class;
        then all classes by score, the first max_total_size, zero-padded, with the count."""
        import cv2
        b, n, classes = 2, 40, 3
        y1, x1 = RNG.uniform(0, 0.7, (b, n)), RNG.uniform(0, 0.7, (b, n))
        h, w = RNG.uniform(0.1, 0.3, (b, n)), RNG.uniform(0.1, 0.3, (b, n))
        boxes = np.stack([y1, x1, y1 + h, x1 + w], -1).astype(np.float32)[:, :, None, :]  # q = 1: shared by the classes
        scores = RNG.uniform(0, 1, (b, n, classes)).astype(np.float32)
        attrs = {"score_threshold": 0.3, "iou_threshold": 0.4, "max_size_per_class": 6, "max_total_size": 10}
        want = [np.zeros((b, 10, 4), np.float32), np.zeros((b, 10), np.float32), np.zeros((b, 10), np.float32), np.zeros(b, np.int32)]
        for i in range(b):
            dets = []
            rects = [[float(x), float(y), float(ww), float(hh)] for y, x, hh, ww in zip(y1[i], x1[i], h[i], w[i])]
            for cls in range(classes):
                kept = cv2.dnn.NMSBoxes(rects, scores[i, :, cls].tolist(), 0.3, 0.4)
                dets += [(scores[i, a, cls], cls, a) for a in np.array(kept).reshape(-1)[:6]]
            dets.sort(key=lambda d: -d[0])
            for k, (sc, cls, a) in enumerate(dets[:10]):
                want[0][i, k], want[1][i, k], want[2][i, k] = boxes[i, a, 0], sc, cls
            want[3][i] = min(len(dets), 10)
        self.check("nms", "BatchMultiClassNonMaxSuppression", boxes, {"scores": scores}, attrs, want, atol=1e-6)

    def test_elementwise_and_logic(self):
        x = RNG.uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
        y = RNG.uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
        sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        for ge_type, want in (("Square", x * x), ("Sin", np.sin(x)), ("Cos", np.cos(x)), ("Ceil", np.ceil(x * 3)),
                              ("Round", np.round(x * 3)), ("Sign", np.sign(x - 1)), ("Softplus", np.log1p(np.exp(x))),
                              ("Softsign", x / (1 + abs(x))), ("HardSwish", x * np.clip(x + 3, 0, 6) / 6)):
            arg = x * 3 if ge_type in ("Ceil", "Round") else x - 1 if ge_type == "Sign" else x
            self.check(f"unary_{ge_type}", ge_type, arg.astype(np.float32), {}, {}, [want.astype(np.float32)], atol=1e-5)
        self.check("swish", "Swish", x, {}, {"scale": 1.5}, [x * sig(1.5 * x)])
        self.check("pow", "Pow", x, {"y": y}, {}, [x ** y])
        self.check("clip", "ClipByValue", x, {"lo": np.array(0.8, np.float32), "hi": np.array(1.5, np.float32)}, {}, [np.clip(x, 0.8, 1.5)])
        self.check("addn", "AddN", x, {"y": y, "z": y * 2}, {"N": 3}, [x + y + y * 2])
        for ge_type, fn in (("Less", np.less), ("LessEqual", np.less_equal), ("Greater", np.greater),
                            ("GreaterEqual", np.greater_equal), ("Equal", np.equal)):
            self.check(f"cmp_{ge_type}", ge_type, x, {"y": np.round(y * 2) / 2}, {}, [fn(x, np.round(y * 2) / 2)])
        a, b = x > 1, y > 1
        self.check("and", "LogicalAnd", a, {"b": b}, {}, [a & b])
        self.check("or", "LogicalOr", a, {"b": b}, {}, [a | b])
        self.check("not", "LogicalNot", a, {}, {}, [~a])
        self.check("select", "SelectV2", a, {"t": x, "e": y}, {}, [np.where(a, x, y)])

    def test_prelu_batchnorm_depthwise(self):
        x = RNG.standard_normal((1, 3, 5, 5), np.float32)
        slope = np.array([0.1, 0.2, 0.3], np.float32)
        self.check("prelu", "PRelu", x, {"w": slope}, {}, [np.where(x > 0, x, x * slope.reshape(1, 3, 1, 1))])
        scale, offset = RNG.uniform(0.5, 1.5, 3).astype(np.float32), RNG.standard_normal(3, np.float32)
        mean, var = RNG.standard_normal(3, np.float32), RNG.uniform(0.5, 2, 3).astype(np.float32)
        r = lambda v: v.reshape(1, 3, 1, 1)  # noqa: E731
        want = (x - r(mean)) / np.sqrt(r(var) + 1e-3) * r(scale) + r(offset)
        self.check("batchnorm", "BatchNorm", x, {"scale": scale, "offset": offset, "mean": mean, "var": var},
                   {"epsilon": 1e-3, "is_training": False, "data_format": "NCHW"}, [want], atol=1e-5)
        w = RNG.standard_normal((6, 1, 3, 3), np.float32)  # multiplier 2
        want = np.zeros((1, 6, 3, 3), np.float32)
        for o in range(6):
            for i in range(3):
                for j in range(3):
                    want[0, o, i, j] = (x[0, o // 2, i:i + 3, j:j + 3] * w[o, 0]).sum()
        self.check("depthwise", "DepthwiseConv2D", x, {"w": w}, {"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1, 1, 1],
                                                                  "data_format": "NCHW"}, [want], atol=1e-4)

    def test_framework_op(self):
        """A FrameworkOp: TF's RandomStandardNormal (its NodeDef serialized in node_def) runs as the TF importer runs
        it: seeded by seed/seed2, the same values on every run and on the device, normally distributed."""
        nd = tf.NodeDef(name=b"noise", op=b"RandomStandardNormal")
        for key, value in ((b"dtype", tf.AttrValue(type=1)), (b"seed", tf.AttrValue(i=5)), (b"seed2", tf.AttrValue(i=7))):
            nd.attr.add(key=key, value=value)
        x = np.zeros(1, np.float32)
        shape = np.array([200, 100], np.int32)
        attrs = {"original_type": "RandomStandardNormal", "node_def": nd.SerializeToString(), "framework_type": 3}
        air = write_air("fwk", "FrameworkOp", x, {"shape": shape}, attrs, [np.zeros((200, 100), np.float32)], order=["shape"])
        (a,), (b,) = outputs(air, "fwk_x.npy", "fwk_1"), outputs(air, "fwk_x.npy", "fwk_2")
        self.assertEqual(a.shape, (200, 100))
        np.testing.assert_array_equal(a, b)
        self.assertLess(abs(a.mean()), 0.03)
        self.assertLess(abs(a.std() - 1), 0.03)
        must(ATC, "--framework=1", f"--model={air}", "--output=fwk", "--soc_version=Ascend910B1", "--precision_mode=must_keep_origin_dtype")
        np.testing.assert_array_equal(outputs("fwk.om", "fwk_x.npy", "fwk_dev")[0], a)
        # A FrameworkOp of a TF type npukit has no kernel for is named in the one coded error, with its TF type.
        nd.op = b"NpukitUnknownTfOp"
        attrs = {"original_type": "NpukitUnknownTfOp", "node_def": nd.SerializeToString()}
        air = write_air("fwk_unknown", "FrameworkOp", x, {"shape": shape}, attrs, [np.zeros((200, 100), np.float32)], order=["shape"])
        r = T.run(MSAME, "--model", air, "--input", "fwk_unknown_x.npy", "--output", "fwk_u", cwd=WORK)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("E13010", r.stdout + r.stderr)
        self.assertIn("FrameworkOp NpukitUnknownTfOp", r.stdout + r.stderr)


def tf_resize(x, size, bilinear, mode):
    """TF's resize_nearest_neighbor / resize_bilinear (align_corners, half_pixel_centers) in numpy, NCHW."""
    out = x
    for axis, n_out in ((2, size[0]), (3, size[1])):
        n_in = out.shape[axis]
        i = np.arange(n_out, dtype=np.float64)
        scale = (n_in - 1) / (n_out - 1) if mode == "align_corners" and n_out > 1 else n_in / n_out
        if not bilinear:
            if mode == "align_corners":
                src = np.floor(i * scale + 0.5)
            elif mode == "half_pixel":
                src = np.floor((i + 0.5) * scale)
            else:
                src = np.floor(i * scale)
            out = np.take(out, np.minimum(src, n_in - 1).astype(int), axis=axis)
            continue
        src = (i + 0.5) * scale - 0.5 if mode == "half_pixel" else i * scale
        src = np.maximum(src, 0)
        lo = np.minimum(np.floor(src).astype(int), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = (src - lo).reshape([-1 if a == axis else 1 for a in range(4)])
        out = np.take(out, lo, axis=axis) * (1 - frac) + np.take(out, hi, axis=axis) * frac
    return out.astype(np.float32)


def caffe_pool(x, k, s, p, is_max):
    """Caffe's pooling: output size rounded up; an average divides by the window clipped to the padded input."""
    n, c, h, w = x.shape
    oh, ow = -(-(h + 2 * p - k) // s) + 1, -(-(w + 2 * p - k) // s) + 1
    y = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s - p, j * s - p
            h1, w1 = min(h0 + k, h + p), min(w0 + k, w + p)
            win = x[:, :, max(h0, 0):min(h1, h), max(w0, 0):min(w1, w)]
            y[:, :, i, j] = win.max(axis=(2, 3)) if is_max else win.sum(axis=(2, 3)) / ((h1 - h0) * (w1 - w0))
    return y


def conv_transpose(dy, w, s, pads, size):
    """The gradient of a conv by its input: every dy pixel scatters its filter, then the padding is cropped."""
    n, _, h, wd = dy.shape
    c, k = w.shape[1], w.shape[2]
    full = np.zeros((n, c, (h - 1) * s + k, (wd - 1) * s + k), np.float64)
    for i in range(k):
        for j in range(k):
            full[:, :, i:i + (h - 1) * s + 1:s, j:j + (wd - 1) * s + 1:s] += np.einsum("nohw,oc->nchw", dy, w[:, :, i, j])
    full = np.pad(full, ((0, 0), (0, 0), (0, size), (0, size)))
    return full[:, :, pads[0]:pads[0] + size, pads[1]:pads[1] + size].astype(np.float32)


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ge = airgraph.load_pb2(WORK)
    tf = tfgraph.load_pb2(WORK)
    unittest.main(argv=sys.argv[:1], verbosity=2)
