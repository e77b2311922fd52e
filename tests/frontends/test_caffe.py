#!/usr/bin/python3
"""atc --framework=0 and msame's .prototxt reference path, against OpenCV DNN's Caffe importer (Debian's
python3-opencv, an implementation independent of npukit's): the real corpora and one generated net per layer
type, written with Python protobuf classes from libcore/frontend/caffe/caffe_net.proto.
usage: test_caffe.py BUILD_DIR WORK_DIR"""
import functools
import glob
import importlib
import json
import os
import shutil
import subprocess
import sys
import unittest

import cv2
import numpy as np
from google.protobuf import json_format, text_format
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
ATC, MSAME = (os.path.join(BUILD, f"tools/{t}/{t}") for t in ("atc", "msame"))
CAFFE = os.path.join(T.DATA, "caffe")
RTOL = 1e-4
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
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))


def outputs(folder):
    files = glob.glob(os.path.join(folder, "**/*_output_*.npy"), recursive=True)
    return [np.load(f) for f in sorted(files, key=lambda p: int(p.rsplit("_", 1)[1][:-4]))]


def npukit_run(prototxt, caffemodel, x, tag, om=False):
    np.save(os.path.join(WORK, f"{tag}_in.npy"), x)
    out = os.path.join(WORK, f"{tag}_out")
    shutil.rmtree(out, ignore_errors=True)
    model = prototxt
    if om:
        must(ATC, "--framework=0", f"--model={prototxt}", f"--weight={caffemodel}", f"--output={tag}", "--soc_version=Ascend310P3",
             "--precision_mode=must_keep_origin_dtype")
        model = os.path.join(WORK, tag + ".om")
        must(MSAME, "--model", model, "--input", f"{tag}_in.npy", "--output", out, "--outfmt", "NPY")
    else:
        must(MSAME, "--model", model, "--weight", caffemodel, "--input", f"{tag}_in.npy", "--output", out, "--outfmt", "NPY")
    return outputs(out)


def opencv_run(prototxt, caffemodel, x):
    net = cv2.dnn.readNetFromCaffe(prototxt, caffemodel)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setInput(x)
    names = net.getUnconnectedOutLayersNames()
    return list(net.forward(names)), names


class Net:
    """A net with one input `data`: layers added with their params and blobs; writes .prototxt + .caffemodel."""

    def __init__(self, shape):
        self.shape = shape
        self.proto = pb2.NetParameter(name="t", input=["data"], input_dim=list(shape))
        self.model = pb2.NetParameter(name="t")

    def layer(self, name, type_, bottoms, tops, blobs=(), **params):
        for net in (self.proto, self.model):
            l = net.layer.add(name=name, type=type_, bottom=bottoms, top=tops)
            for key, value in params.items():
                json_format.ParseDict(value, getattr(l, key))
            if net is self.model:
                for b in blobs:
                    bp = l.blobs.add()
                    bp.shape.dim.extend(b.shape)
                    bp.data.extend(b.astype(np.float32).ravel().tolist())
        return tops[0] if tops else None

    def save(self, tag):
        proto, model = os.path.join(WORK, tag + ".prototxt"), os.path.join(WORK, tag + ".caffemodel")
        open(proto, "w").write(text_format.MessageToString(self.proto))
        open(model, "wb").write(self.model.SerializeToString())
        return proto, model


def blob(net, layer, k):
    l = next(l for l in net.model.layer if l.name == layer)
    return np.array(l.blobs[k].data, np.float32).reshape(list(l.blobs[k].shape.dim))


def layer_cases(rng):
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    pos = lambda *s: (rng.random(s) + 0.5).astype(np.float32)  # noqa: E731
    cases = []

    def case(name, build, shape=(2, 4, 9, 11), ref=None):
        """ref(x, net) -> outputs: numpy, for what OpenCV 4.6 does not run as Caffe defines it."""
        cases.append((name, shape, build, ref))

    case("Convolution_group_dilation_padhw", lambda n: n.layer("conv", "Convolution", ["data"], ["y"], [f(6, 2, 3, 2), f(6)], convolution_param=dict(
        num_output=6, group=2, kernel_h=3, kernel_w=2, pad_h=2, pad_w=1, stride_h=2, stride_w=1, dilation=[2])))
    case("Convolution_nobias", lambda n: n.layer("conv", "Convolution", ["data"], ["y"], [f(3, 4, 1, 1)], convolution_param=dict(
        num_output=3, kernel_size=[1], bias_term=False)))
    case("Deconvolution", lambda n: n.layer("deconv", "Deconvolution", ["data"], ["y"], [f(4, 3, 3, 3), f(3)], convolution_param=dict(
        num_output=3, kernel_size=[3], stride=[2], pad=[1])))
    case("InnerProduct", lambda n: n.layer("ip", "InnerProduct", ["data"], ["y"], [f(5, 4 * 9 * 11), f(5)], inner_product_param=dict(num_output=5)))
    case("InnerProduct_transpose", lambda n: n.layer("ip", "InnerProduct", ["data"], ["y"], [f(4 * 9 * 11, 5), f(5)],
                                                     inner_product_param=dict(num_output=5, transpose=True)),
         ref=lambda x, n: [x.reshape(2, -1) @ blob(n, "ip", 0) + blob(n, "ip", 1)])  # OpenCV ignores transpose
    for pool in ("MAX", "AVE"):
        case(f"Pooling_{pool}_ceil", lambda n, pool=pool: n.layer("pool", "Pooling", ["data"], ["y"], pooling_param=dict(
            pool=pool, kernel_size=3, stride=2)))
        case(f"Pooling_{pool}_pad", lambda n, pool=pool: n.layer("pool", "Pooling", ["data"], ["y"], pooling_param=dict(
            pool=pool, kernel_size=3, stride=2, pad=1)))
        case(f"Pooling_{pool}_global", lambda n, pool=pool: n.layer("pool", "Pooling", ["data"], ["y"], pooling_param=dict(pool=pool, global_pooling=True)))
    case("ReLU_inplace", lambda n: (n.layer("conv", "Convolution", ["data"], ["c"], [f(3, 4, 1, 1), f(3)], convolution_param=dict(num_output=3, kernel_size=[1])),
                                    n.layer("relu", "ReLU", ["c"], ["c"])))
    case("ReLU_slope", lambda n: n.layer("relu", "ReLU", ["data"], ["y"], relu_param=dict(negative_slope=0.1)))
    case("PReLU", lambda n: n.layer("prelu", "PReLU", ["data"], ["y"], [f(4)]))
    case("PReLU_shared", lambda n: n.layer("prelu", "PReLU", ["data"], ["y"], [f(1)], prelu_param=dict(channel_shared=True)))
    for t in ("Sigmoid", "TanH", "AbsVal"):
        case(t, lambda n, t=t: n.layer("act", t, ["data"], ["y"]))
    case("ELU", lambda n: n.layer("elu", "ELU", ["data"], ["y"], elu_param=dict(alpha=0.7)))
    case("Softmax", lambda n: n.layer("sm", "Softmax", ["data"], ["y"]))
    case("BatchNorm_Scale", lambda n: (n.layer("bn", "BatchNorm", ["data"], ["data_bn"], [f(4), pos(4) * 3, np.array([2.0], np.float32)]),
                                       n.layer("scale", "Scale", ["data_bn"], ["data_bn"], [f(4), f(4)], scale_param=dict(bias_term=True))))
    case("BatchNorm_alone", lambda n: n.layer("bn", "BatchNorm", ["data"], ["y"], [f(4), pos(4), np.array([1.0], np.float32)],
                                              batch_norm_param=dict(eps=1e-3)))
    case("Scale", lambda n: n.layer("scale", "Scale", ["data"], ["y"], [f(4)]))
    case("Bias", lambda n: n.layer("bias", "Bias", ["data"], ["y"], [f(4)]), ref=lambda x, n: [x + blob(n, "bias", 0).reshape(4, 1, 1)])  # OpenCV has no Bias
    for op, coeff in (("SUM", [0.5, -2.0]), ("PROD", []), ("MAX", [])):
        case(f"Eltwise_{op}", lambda n, op=op, coeff=coeff: (n.layer("e", "Exp", ["data"], ["ex"]), n.layer("elt", "Eltwise", ["data", "ex"], ["y"],
                                                                                                           eltwise_param=dict(operation=op, coeff=coeff))))
    case("Concat", lambda n: (n.layer("ab", "AbsVal", ["data"], ["a"]), n.layer("cat", "Concat", ["data", "a"], ["y"], concat_param=dict(axis=1))))
    case("Slice", lambda n: n.layer("sl", "Slice", ["data"], ["s1", "s2", "s3"], slice_param=dict(axis=1, slice_point=[1, 3])),
         ref=lambda x, n: [x[:, :1], x[:, 1:3], x[:, 3:]])  # OpenCV's forward() gives one top per layer
    case("Split", lambda n: (n.layer("sp", "Split", ["data"], ["p1", "p2"]), n.layer("ab", "AbsVal", ["p1"], ["a"]),
                             n.layer("e", "Eltwise", ["a", "p2"], ["y"], eltwise_param=dict(operation="SUM"))))
    case("Flatten", lambda n: n.layer("fl", "Flatten", ["data"], ["y"]))
    case("Reshape", lambda n: n.layer("rs", "Reshape", ["data"], ["y"], reshape_param=dict(shape=dict(dim=[0, -1, 11]))))
    case("Permute", lambda n: n.layer("pm", "Permute", ["data"], ["y"], permute_param=dict(order=[0, 2, 3, 1])))
    case("Dropout", lambda n: (n.layer("dr", "Dropout", ["data"], ["data"], dropout_param=dict(dropout_ratio=0.3)), n.layer("ab", "AbsVal", ["data"], ["y"])))
    case("LRN", lambda n: n.layer("lrn", "LRN", ["data"], ["y"], lrn_param=dict(local_size=3, alpha=0.5, beta=0.6, k=2.0)),
         ref=lambda x, n: [x / (2.0 + 0.5 / 3 * sum(np.pad(x * x, [(0, 0), (1, 1), (0, 0), (0, 0)])[:, i:i + 4] for i in range(3))) ** 0.6])  # OpenCV ignores k
    case("Power", lambda n: (n.layer("ab", "AbsVal", ["data"], ["a"]), n.layer("pw", "Power", ["a"], ["y"], power_param=dict(power=1.5, scale=2.0, shift=0.5))))
    case("Exp", lambda n: n.layer("ex", "Exp", ["data"], ["y"], exp_param=dict(base=2.0, scale=0.5, shift=0.1)))
    case("Log", lambda n: (n.layer("ab", "AbsVal", ["data"], ["a"]), n.layer("lg", "Log", ["a"], ["y"], log_param=dict(base=10.0, scale=2.0, shift=1.0))),
         ref=lambda x, n: [np.log10(1.0 + 2.0 * np.abs(x))])  # OpenCV ignores base, scale and shift
    case("Crop", lambda n: (n.layer("pool", "Pooling", ["data"], ["small"], pooling_param=dict(pool="MAX", kernel_size=2, stride=2)),
                            n.layer("crop", "Crop", ["data", "small"], ["y"], crop_param=dict(axis=2, offset=[1, 2]))))
    case("ArgMax", lambda n: n.layer("am", "ArgMax", ["data"], ["y"], argmax_param=dict(axis=1)),
         ref=lambda x, n: [np.argmax(x, axis=1)[:, None].astype(np.float32)])
    for op, fn in (("SUM", lambda v: v.sum(-1)), ("ASUM", lambda v: np.abs(v).sum(-1)), ("SUMSQ", lambda v: (v * v).sum(-1)), ("MEAN", lambda v: v.mean(-1))):
        case(f"Reduction_{op}", lambda n, op=op: n.layer("rd", "Reduction", ["data"], ["y"], reduction_param=dict(operation=op, axis=2, coeff=0.5)),
             ref=lambda x, n, fn=fn: [0.5 * fn(x.reshape(2, 4, -1))])
    case("Threshold", lambda n: n.layer("th", "Threshold", ["data"], ["y"], threshold_param=dict(threshold=0.3)),
         ref=lambda x, n: [(x > 0.3).astype(np.float32)])
    case("Tile", lambda n: n.layer("tl", "Tile", ["data"], ["y"], tile_param=dict(axis=2, tiles=3)), ref=lambda x, n: [np.tile(x, (1, 1, 3, 1))])
    return cases


class Corpora(unittest.TestCase):
    def test_real_nets_match_opencv(self):
        rng = np.random.default_rng(1)
        for name, shape in (("lenet", (64, 1, 28, 28)), ("mtcnn_det1", (1, 3, 12, 12))):
            proto, model = os.path.join(CAFFE, name + ".prototxt"), os.path.join(CAFFE, name + ".caffemodel")
            x = rng.random(shape).astype(np.float32)
            refs, names = opencv_run(proto, model, x)
            for om in (False, True):
                with self.subTest(net=name, om=om):
                    got = npukit_run(proto, model, x, name + ("_om" if om else ""), om)
                    self.assertEqual(len(got), len(refs))
                    for g, r, n in zip(got, refs, names):
                        self.assertLess(rel_err(g, r), RTOL, n)

    def test_ascend_types_and_names(self):
        must(ATC, "--framework=0", f"--model={CAFFE}/lenet.prototxt", f"--weight={CAFFE}/lenet.caffemodel", "--output=lenet310", "--soc_version=Ascend310")
        must(ATC, "--mode=1", "--om=lenet310.om", "--json=lenet310.json")
        ops = json.load(open(os.path.join(WORK, "lenet310.json")))["graph"][0]["op"]
        types = [o["type"] for o in ops]
        for t in ("Conv2D", "Pooling", "FullyConnection", "SoftmaxV2"):
            self.assertIn(t, types)
        self.assertIn("conv1", [o["name"] for o in ops])


class PerLayer(unittest.TestCase):
    def test_layers_against_opencv(self):
        for name, shape, build, numpy_ref in layer_cases(np.random.default_rng(2)):
            with self.subTest(layer=name):
                net = Net(shape)
                build(net)
                proto, model = net.save("layer_" + name)
                x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
                refs, names = (numpy_ref(x, net), "numpy") if numpy_ref else opencv_run(proto, model, x)
                for om in (False, True):
                    got = npukit_run(proto, model, x, f"layer_{name}" + ("_om" if om else ""), om)
                    self.assertEqual(len(got), len(refs), names)
                    for g, r in zip(got, refs):
                        self.assertLess(rel_err(g, r), RTOL, f"{name} om={om}")

    def test_batchnorm_takes_in_its_scale_on_both_paths(self):
        """BatchNorm -> Scale is one BNInference on the reference path (its golden tensor under the Scale layer's name,
        as msaccucmp pairs a fused op with its last original op) and in the .om; values match OpenCV DNN."""
        rng = np.random.default_rng(5)
        net = Net((1, 4, 5, 6))
        net.layer("bn", "BatchNorm", ["data"], ["bn_out"], [rng.standard_normal(4).astype(np.float32), (rng.random(4) + 0.5).astype(np.float32),
                                                           np.array([1.0], np.float32)])
        net.layer("scale", "Scale", ["bn_out"], ["y"], [rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)],
                  scale_param=dict(bias_term=True))
        proto, model = net.save("bn_scale")
        x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
        (ref,), _ = opencv_run(proto, model, x)
        np.save(os.path.join(WORK, "bn_scale_in.npy"), x)
        json.dump({"dump": {"dump_path": "bn_golden", "dump_list": [], "dump_mode": "output"}}, open(os.path.join(WORK, "bn.json"), "w"))
        shutil.rmtree(os.path.join(WORK, "bn_golden"), ignore_errors=True)
        must(MSAME, "--model", proto, "--weight", model, "--input", "bn_scale_in.npy", "--acl_json_path", "bn.json", "--output", "bn_out", "--outfmt", "NPY")
        self.assertLess(rel_err(outputs(os.path.join(WORK, "bn_out"))[0], ref), RTOL)
        dumped = {os.path.basename(f).split(".")[0] for f in glob.glob(os.path.join(WORK, "bn_golden/**/*.npy"), recursive=True)} - {"data"}
        self.assertEqual(dumped, {"scale"}, "one fused op, under the Scale layer's name")
        self.assertLess(rel_err(npukit_run(proto, model, x, "bn_scale_om", True)[0], ref), RTOL)
        must(ATC, "--mode=1", "--om=bn_scale_om.om", "--json=bn_scale.json")
        types = [o["type"] for o in json.load(open(os.path.join(WORK, "bn_scale.json")))["graph"][0]["op"]]
        self.assertEqual([t for t in types if t not in ("Data", "Const", "NetOutput", "TransData")], ["BNInference"])

    def test_v1_layers_form(self):
        """The deprecated `layers` form (enum types, other field numbers) is upgraded as Caffe does."""
        rng = np.random.default_rng(4)
        w, b = rng.standard_normal((3, 2, 3, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
        proto, model = pb2.NetParameter(name="v1", input=["data"], input_dim=[1, 2, 8, 8]), pb2.NetParameter(name="v1")
        for net in (proto, model):
            conv = net.layers.add(name="conv", type=pb2.V1LayerParameter.CONVOLUTION, bottom=["data"], top=["conv"])
            conv.convolution_param.num_output, conv.convolution_param.kernel_size[:] = 3, [3]
            if net is model:
                for arr in (w, b):
                    blob = conv.blobs.add()
                    blob.num, blob.channels, blob.height, blob.width = (list(arr.shape) + [1, 1, 1])[:4] if arr.ndim == 4 else (1, 1, 1, arr.size)
                    blob.data.extend(arr.ravel().tolist())
            net.layers.add(name="relu", type=pb2.V1LayerParameter.RELU, bottom=["conv"], top=["conv"])
            pool = net.layers.add(name="pool", type=pb2.V1LayerParameter.POOLING, bottom=["conv"], top=["pool"])
            pool.pooling_param.kernel_size, pool.pooling_param.stride = 2, 2
        p, m = os.path.join(WORK, "v1.prototxt"), os.path.join(WORK, "v1.caffemodel")
        open(p, "w").write(text_format.MessageToString(proto))
        open(m, "wb").write(model.SerializeToString())
        x = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
        refs, _ = opencv_run(p, m, x)
        (got,) = npukit_run(p, m, x, "v1")
        self.assertLess(rel_err(got, refs[0]), RTOL)


class BadInput(unittest.TestCase):
    def expect_error(self, code, *flags, proto=None, model=None, exit_code=1):
        proto = proto or f"{CAFFE}/lenet.prototxt"
        args = [ATC, "--framework=0", f"--model={proto}", "--output=bad", "--soc_version=Ascend310P3", *flags]
        if model:
            args.append(f"--weight={model}")
        r = run(*args)
        self.assertEqual(r.returncode, exit_code, r.stdout + r.stderr)
        self.assertIn(code, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(WORK, "bad.om")))
        return r.stdout + r.stderr

    def test_missing_weight(self):
        self.expect_error("E10004", exit_code=2)  # a missing flag is a usage error

    def test_prototxt_syntax_names_the_line(self):
        p = os.path.join(WORK, "broken.prototxt")
        lines = open(f"{CAFFE}/lenet.prototxt").read().splitlines()
        at = next(i for i, line in enumerate(lines) if "num_output: 20" in line)
        lines[at] = lines[at].replace("num_output: 20", "num_output: twenty")
        open(p, "w").write("\n".join(lines))
        self.assertIn(f"line {at + 1}", self.expect_error("E11001", proto=p, model=f"{CAFFE}/lenet.caffemodel"))

    def test_caffemodel_layers_the_prototxt_lacks_are_ignored_as_caffe_ignores_them(self):
        # A deploy prototxt over a fuller caffemodel (MTCNN RNet's landmark head is the case met in the field): LeNet
        # cut after relu1, against the whole LeNet caffemodel. Caffe, OpenCV and ATC load it; so must atc and msame.
        text = open(f"{CAFFE}/lenet.prototxt").read()
        cut = text[:text.index('layer { name: "ip2"')]
        proto = os.path.join(WORK, "lenet_cut.prototxt")
        with open(proto, "w") as f:
            f.write(cut)
        r = run(ATC, "--framework=0", f"--model={proto}", f"--weight={CAFFE}/lenet.caffemodel", "--output=lenet_cut",
                "--soc_version=Ascend310P3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ignoring source layer 'ip2'", r.stdout)
        x = np.random.default_rng(7).random((64, 1, 28, 28), dtype=np.float32)
        (got,) = npukit_run(proto, f"{CAFFE}/lenet.caffemodel", x, "lenet_cut")
        (ref,), _ = opencv_run(proto, f"{CAFFE}/lenet.caffemodel", x)
        self.assertLess(rel_err(got, ref), RTOL)

    def test_weights_mismatch(self):
        # LeNet's prototxt against PNet's weights: conv1 has a blob of another shape; ip1 has none at all
        out = self.expect_error("E11003", model=f"{CAFFE}/mtcnn_det1.caffemodel")
        self.assertIn("layer '", out)
        truncated = os.path.join(WORK, "trunc.caffemodel")
        data = open(f"{CAFFE}/lenet.caffemodel", "rb").read()
        open(truncated, "wb").write(data[:len(data) // 3])
        self.expect_error("E11002", model=truncated)

    def test_unknown_layer_and_bottom(self):
        text = open(f"{CAFFE}/lenet.prototxt").read()
        p = os.path.join(WORK, "unknown.prototxt")
        open(p, "w").write(text.replace('type: "ReLU"', 'type: "Frobnicate"'))
        self.assertIn("relu1 (type Frobnicate)", self.expect_error("E13010", proto=p, model=f"{CAFFE}/lenet.caffemodel"))
        p = os.path.join(WORK, "nobottom.prototxt")
        open(p, "w").write(text.replace('bottom: "pool1"', 'bottom: "pool9"'))
        self.assertIn("'pool9'", self.expect_error("E11005", proto=p, model=f"{CAFFE}/lenet.caffemodel"))


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    proto_dir = os.path.join(SOURCE, "libcore/frontend/caffe")
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={WORK}", os.path.join(proto_dir, "caffe_net.proto")], check=True)
    sys.path.insert(0, WORK)
    pb2 = importlib.import_module("caffe_net_pb2")
    unittest.main(argv=sys.argv[:1], verbosity=2)
