#!/usr/bin/python3
"""The simulated NPU's numerics end to end: precision modes against PyTorch, mixed-precision lists and their
overrides as the --mode=1 JSON shows them, fusion (BN folding, switch file), fp16 overflow per SoC, and the
bad-input contract of every precision flag.  usage: test_precision.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402
from testlib import run  # noqa: E402  (one helper for every test: tests/testlib.py)

SRC, BUILD, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
ATC, MSAME, CMP = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame", "tools/msaccucmp/msaccucmp"))



def atc(model, out, soc="Ascend310P3", *flags):
    return run(ATC, "--framework=5", f"--model={model}", f"--output={out}", f"--soc_version={soc}", *flags)


def infer(om, inp, out_dir):
    r = run(MSAME, "--model", om, "--input", inp, "--output", out_dir, "--outfmt", "NPY")
    assert r.returncode == 0, r.stdout + r.stderr
    (f,) = glob.glob(os.path.join(out_dir, "*_output_0.npy"))
    return np.load(f).astype(np.float64).ravel()


def model_json(om):
    path = om[:-3] + ".json"
    r = run(ATC, "--mode=1", f"--om={om}", f"--json={path}")
    assert r.returncode == 0, r.stdout
    return T.model_ops(path)


def attr(op, key):
    v = T.attr(op, key)
    if v is None:
        return None
    return v.get("list", {}).get("s", []) if "list" in v or not v else v.get("s", v.get("i"))


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def save_model(nodes, inputs, outputs, inits, path):
    g = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def export_encoder(work):
    """A 2-layer encoder-only transformer (gelu; LayerNorm, Softmax, MatMul+bias) with random weights."""
    base = os.path.join(work, "encoder")
    if os.path.exists(base + "_torch.npy"):
        return base
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, activation="gelu", batch_first=True)
    m = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = torch.randn(1, 16, 64)
    torch.onnx.export(m, x, base + ".onnx", opset_version=13, input_names=["input"], output_names=["output"])
    with torch.no_grad():
        np.save(base + "_torch.npy", m(x).numpy())
    np.save(base + "_input.npy", x.numpy())
    return base


class PrecisionModesVsPyTorch(unittest.TestCase):
    """Must-show 1: force_fp16 is close but not equal to fp32; must_keep_origin_dtype is fp32; force_fp32 between."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        specs = [s for s in ("resnet18:13", "mobilenet_v2:13") if not os.path.exists(os.path.join(WORK, s.replace(":", "_op") + "_torch.npy"))]
        if specs:
            subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/e2e/export_models.py"), WORK] + specs, check=True)
        cls.models = {m: (os.path.join(WORK, f"{m}_op13"), os.path.join(WORK, f"{m}_input.npy")) for m in ("resnet18", "mobilenet_v2")}
        enc = export_encoder(WORK)
        cls.models["encoder"] = (enc, enc + "_input.npy")

    def outputs(self, name, mode):
        base, inp = self.models[name]
        om = f"{base}_{mode}"
        r = atc(base + ".onnx", om, "Ascend310P3", f"--precision_mode={mode}", f"--explain-precision={om}_explain.json")
        self.assertEqual(r.returncode, 0, r.stdout)
        return infer(om + ".om", inp, om + "_out"), json.load(open(om + "_explain.json"))["op"]

    def test_modes(self):
        for name, (base, _) in self.models.items():
            with self.subTest(model=name):
                ref = np.load(base + "_torch.npy").astype(np.float64).ravel()
                fp16, ops16 = self.outputs(name, "force_fp16")
                origin, ops32 = self.outputs(name, "must_keep_origin_dtype")
                mixed, _ = self.outputs(name, "force_fp32")
                err = lambda y: float(np.abs(y - ref).max())
                self.assertGreaterEqual(cosine(fp16, ref), 0.999)
                self.assertLessEqual(err(origin), 1e-4)
                self.assertGreater(err(fp16), 10 * err(origin), "force_fp16 must differ from the fp32 result")
                # force_fp32 (fp16 in, fp32 out) drops the rounding of each cube result to fp16 but keeps fp16
                # inputs. Judged by the RMS error over all outputs: one output's max error is noise at this scale.
                rms = lambda y: float(np.sqrt(((y - ref) ** 2).mean()))
                if name == "mobilenet_v2":
                    # Its error comes from the fp16 inputs: both modes measure the same within 2% RMS (0.00195 vs
                    # 0.00197 with oneDNN's convolutions, 0.00196 vs 0.00193 with the im2col path).
                    self.assertLess(rms(mixed), 1.02 * rms(fp16), "force_fp32 is no worse than force_fp16")
                else:
                    self.assertLess(rms(mixed), rms(fp16), "force_fp32 lands between")
                self.assertGreater(err(mixed), err(origin))
                cube16 = [o for o in ops16 if o["type"] in ("Conv2D", "MatMulV2", "BatchMatMulV2")]
                self.assertTrue(cube16 and all(o["outputs"][0]["dtype"] == "float16" for o in cube16))
                # The 310P3 cube has no fp32: must_keep_origin_dtype runs cube ops as fp32 AI CPU tasks.
                cube32 = [o for o in ops32 if o["type"] in ("Conv2D", "MatMulV2", "BatchMatMulV2")]
                self.assertTrue(all(o["engine"] == "AiCpu" and o["inputs"][0]["dtype"] == "float32" for o in cube32))
                self.assertFalse(any(o["type"] == "Cast" for o in ops32))

    def test_origin_keeps_the_cube_on_910b(self):
        base, _ = self.models["resnet18"]
        r = atc(base + ".onnx", os.path.join(WORK, "r18_910b"), "Ascend910B1", "--precision_mode_v2=origin",
                f"--explain-precision={WORK}/r18_910b.json")
        self.assertEqual(r.returncode, 0, r.stdout)
        convs = [o for o in json.load(open(f"{WORK}/r18_910b.json"))["op"] if o["type"] == "Conv2D"]
        self.assertTrue(convs and all(o["engine"] == "AiCore" for o in convs))


class MixedPrecisionLists(unittest.TestCase):
    """Must-show 4: the lists and every override change exactly what they name."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        rng = np.random.default_rng(0)
        cls.onnx = os.path.join(WORK, "mix.onnx")
        save_model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                    helper.make_node("Exp", ["c"], ["e"], name="exp"),
                    helper.make_node("Relu", ["e"], ["r"], name="relu"),
                    helper.make_node("ReduceSum", ["r", "axes"], ["s"], name="sum"),
                    helper.make_node("Log", ["s"], ["y"], name="log")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                   {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.1, "axes": np.array([1], np.int64)}, cls.onnx)

    def dtypes(self, tag, *flags, soc="Ascend910A"):
        om = os.path.join(WORK, f"mix_{tag}")
        r = atc(self.onnx, om, soc, "--precision_mode=allow_mix_precision", *flags)
        self.assertEqual(r.returncode, 0, r.stdout)
        return {op["name"]: T.dtype_of(op["output_desc"][0]) for op in model_json(om + ".om") if op["type"] not in ("Cast", "TransData")}, r.stdout

    def write(self, name, text):
        path = os.path.join(WORK, name)
        open(path, "w").write(text)
        return path

    def test_builtin_lists(self):
        d, _ = self.dtypes("base")
        # ascend910: Conv2D white; Exp, Relu gray (follow their fp16 producer); ReduceSum, Log black.
        self.assertEqual(d, {"conv": "float16", "relu": "float16", "exp": "float16", "sum": "float32", "log": "float32"})

    def test_modify_mixlist(self):
        f = self.write("mixlist.json", json.dumps({"black-list": {"to-add": ["Relu"]}, "white-list": {"to-remove": []}}))
        d, _ = self.dtypes("modify", f"--modify_mixlist={f}")
        self.assertEqual(d, {"conv": "float16", "exp": "float16", "relu": "float32", "sum": "float32", "log": "float32"})
        f = self.write("mixlist2.json", json.dumps({"white-list": {"to-remove": ["Conv2D"]}}))
        d, _ = self.dtypes("modify2", f"--modify_mixlist={f}")
        self.assertEqual(set(d.values()), {"float32"}, "Conv2D in gray with an fp32 input keeps fp32, and so does the rest")

    def test_keep_dtype(self):
        f = self.write("keep.txt", "exp\n")
        d, out = self.dtypes("keep", f"--keep_dtype={f}")
        self.assertEqual(d, {"conv": "float16", "exp": "float32", "relu": "float32", "sum": "float32", "log": "float32"})
        f = self.write("keep2.txt", "OpType::Relu\nno_such_op\n")
        d, out = self.dtypes("keep2", f"--keep_dtype={f}")
        self.assertEqual((d["exp"], d["relu"]), ("float16", "float32"))
        self.assertIn("'no_such_op' matches no op", out)

    def test_customize_dtypes(self):
        f = self.write("custom.txt", "conv::InputDtype:float16,float16,OutputDtype:float32\n")
        d, _ = self.dtypes("custom", f"--customize_dtypes={f}")
        self.assertEqual(d["conv"], "float32")
        self.assertEqual(d["exp"], "float32", "gray Exp follows its now-fp32 producer")

    def test_reasons_in_the_model(self):
        om = os.path.join(WORK, "mix_base.om")
        reasons = {op["name"]: attr(op, "_precision_reason") for op in model_json(om)}
        self.assertIn("white", reasons["conv"])
        self.assertIn("follows producer conv", reasons["exp"])
        self.assertIn("black", reasons["sum"])


class Fusion(unittest.TestCase):
    """Must-show 5: BatchNorm exported with TrainingMode.PRESERVE folds into its conv; the switch file keeps it."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                  torch.nn.Conv2d(8, 4, 1), torch.nn.BatchNorm2d(4))
        for m in net:
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1), m.running_var.uniform_(0.5, 2), m.weight.data.uniform_(0.5, 1.5)
        net.eval()
        x = torch.randn(1, 3, 12, 12)
        cls.onnx = os.path.join(WORK, "convbn.onnx")
        torch.onnx.export(net, x, cls.onnx, opset_version=13, training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False, input_names=["x"], output_names=["y"])
        cls.input = os.path.join(WORK, "convbn_x.npy")
        np.save(cls.input, x.numpy())
        with torch.no_grad():
            cls.want = net(x).numpy().ravel()
        cls.bn_names = [n.name for n in onnx.load(cls.onnx).graph.node if n.op_type == "BatchNormalization"]

    def convert(self, tag, *flags):
        om = os.path.join(WORK, f"convbn_{tag}")
        r = atc(self.onnx, om, "Ascend310P3", "--precision_mode=must_keep_origin_dtype", *flags)
        self.assertEqual(r.returncode, 0, r.stdout)
        return om + ".om", r.stdout

    def test_bn_folds_into_conv(self):
        self.assertEqual(len(self.bn_names), 2)
        om, _ = self.convert("fused")
        ops = model_json(om)
        self.assertEqual([o["type"] for o in ops], ["Conv2D", "Conv2D"], "BN folded, ReLU fused into the first conv")
        self.assertIn(self.bn_names[0], attr(ops[0], "_datadump_original_op_names"))
        self.assertIn(self.bn_names[1], attr(ops[1], "_datadump_original_op_names"))
        np.testing.assert_allclose(infer(om, self.input, os.path.join(WORK, "convbn_fused_out")), self.want, atol=1e-4)

    def test_switch_file_keeps_bn(self):
        for text in ("ConvBatchnormFusionPass:off\nNoSuchPass:off\n",
                     json.dumps({"Switch": {"GraphFusion": {"ConvBatchnormFusionPass": "off", "NoSuchPass": "off"}, "UBFusion": {}}})):
            f = os.path.join(WORK, "switch.cfg")
            open(f, "w").write(text)
            om, out = self.convert("switch", f"--fusion_switch_file={f}")
            self.assertIn("unknown pass 'NoSuchPass'", out)
            self.assertIn("ConvBatchnormFusionPass", out, "the warning lists the known passes")
            self.assertEqual([o["type"] for o in model_json(om)].count("BNInference"), 2)
            np.testing.assert_allclose(infer(om, self.input, os.path.join(WORK, "convbn_switch_out")), self.want, atol=1e-4)

    def test_compare_has_rows_for_every_original_op(self):
        om, _ = self.convert("cmp")
        jpath = om[:-3] + ".json"
        run(ATC, "--mode=1", f"--om={om}", f"--json={jpath}")
        cfg = os.path.join(WORK, "acl_fuse.json")
        json.dump({"dump": {"dump_path": os.path.join(WORK, "fdump"), "dump_list": [], "dump_mode": "all"}}, open(cfg, "w"))
        for m in (om, self.onnx):
            r = run(MSAME, "--model", m, "--input", self.input, "--acl_json_path", cfg)
            self.assertEqual(r.returncode, 0, r.stdout)
        npu = sorted(glob.glob(os.path.join(WORK, "fdump/*/0/convbn_cmp/1/0")))[-1]
        gold = sorted(glob.glob(os.path.join(WORK, "fdump/*/0/convbn/1/0")))[-1]
        shutil.rmtree(os.path.join(WORK, "fcmp"), ignore_errors=True)
        r = run(CMP, "compare", "-m", npu, "-g", gold, "-f", jpath, "-out", os.path.join(WORK, "fcmp"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        (csv,) = glob.glob(os.path.join(WORK, "fcmp/result_*.csv"))
        text = open(csv).read()
        for n in onnx.load(self.onnx).graph.node:
            self.assertIn(n.name, text)


class Overflow(unittest.TestCase):
    """Must-show 3: x*300*300 on ones saturates to 65504 on Ascend910A and is inf on Ascend910B1; the record
    names the second multiply."""

    def test_second_multiply_overflows(self):
        os.makedirs(WORK, exist_ok=True)
        path = os.path.join(WORK, "m300.onnx")
        save_model([helper.make_node("Mul", ["x", "k"], ["a"], name="mul_first"), helper.make_node("Mul", ["a", "k"], ["y"], name="mul_second")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                   {"k": np.array(300, np.float32)}, path)
        inp = os.path.join(WORK, "ones.npy")
        np.save(inp, np.ones((2, 3), np.float32))
        for soc, want in (("Ascend910A", 65504.0), ("Ascend910B1", np.inf)):
            om = os.path.join(WORK, f"m300_{soc}")
            self.assertEqual(atc(path, om, soc).returncode, 0)
            cfg = os.path.join(WORK, f"dbg_{soc}.json")
            shutil.rmtree(os.path.join(WORK, f"ovf_{soc}"), ignore_errors=True)
            json.dump({"dump": {"dump_path": os.path.join(WORK, f"ovf_{soc}"), "dump_debug": "on"}}, open(cfg, "w"))
            r = run(MSAME, "--model", om + ".om", "--input", inp, "--output", om + "_out", "--outfmt", "NPY", "--acl_json_path", cfg)
            self.assertIn("1 overflow(s)", r.stdout)
            np.testing.assert_array_equal(np.load(glob.glob(om + "_out/*.npy")[0]), np.full((2, 3), want, np.float32))
            (rec,) = glob.glob(os.path.join(WORK, f"ovf_{soc}/*/0/*/1/0/Opdebug.Node_OpDebug.*"))
            r = run(CMP, "overflow", "-d", os.path.dirname(rec), "-out", os.path.join(WORK, f"ovf_{soc}_report"))
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertIn("Mul mul_second", r.stdout)
            self.assertNotIn("mul_first", r.stdout)
            self.assertIn("value before saturation 90000", r.stdout)


class BadInput(unittest.TestCase):
    """Must-show 8: coded error, exit 1, no .om."""

    def expect(self, code, *flags, soc="Ascend310P3"):
        os.makedirs(WORK, exist_ok=True)
        model = os.path.join(WORK, "bad_in.onnx")
        save_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], {}, model)
        out = os.path.join(WORK, "bad_out")
        if os.path.exists(out + ".om"):
            os.remove(out + ".om")
        r = atc(model, out, soc, *flags)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn(code, r.stdout)
        self.assertFalse(os.path.exists(out + ".om"))
        return r.stdout

    def file(self, name, text):
        path = os.path.join(WORK, name)
        open(path, "w").write(text)
        return path

    def test_bad_precision_input(self):
        self.assertIn("must_keep_origin_dtype", self.expect("E10001", "--precision_mode=fast"))
        self.expect("E10047", "--precision_mode=force_fp16", "--precision_mode_v2=fp16")
        self.assertIn("Ascend310P3", self.expect("E10001", "--precision_mode=allow_mix_precision_bf16"))
        self.expect("E10001", "--precision_mode_v2=mixed_bfloat16", soc="Ascend910A")
        self.expect("E10032", "--precision_mode=allow_mix_precision", f"--modify_mixlist={self.file('bad_mix.json', '{not json')}")
        self.expect("E10001", f"--modify_mixlist={self.file('ok_mix.json', '{}')}")  # force_fp16: no lists apply
        self.expect("E10001", f"--keep_dtype={self.file('bad_keep.txt', 'a b c')}")
        self.expect("E10410", "--keep_dtype=/nonexistent/keep.txt")
        self.expect("E10001", f"--customize_dtypes={self.file('bad_custom.txt', 'relu::InputDtype:float99')}")
        self.expect("E10001", f"--fusion_switch_file={self.file('bad_switch.cfg', 'ConvBatchnormFusionPass=off')}")
        self.expect("E10032", "--fusion_switch_file=" + self.file("bad_switch.json", '{"Switch": '))
        self.expect("E10001", "--op_precision_mode=" + self.file("bad_opm.ini", "[ByOpType]\nRelu=fastest"))
        self.expect("E10001", "--output_type=FP64")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
