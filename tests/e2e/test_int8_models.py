#!/usr/bin/python3
"""INT8 end to end: resnet18 and a BERT-style encoder (torch exports, random weights) quantized by
examples/quantize.py into AMCT's deploy layout and into ONNX QDQ, both converted for Ascend310P3 and run by msame:
the two forms give the same outputs, agree with the float model (top-1 >= 95% on 100 random images, cosine >=
0.99), and the int8 resnet18 simulates faster than its force_fp16 build.
usage: test_int8_models.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import glob
import os
import shutil
import sys
import unittest

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SOURCE, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
PY = "/usr/bin/python3"


def must(*args):
    """What a command that must succeed printed on stdout (the warnings on stderr are not part of it)."""
    return T.call(args, cwd=WORK).stdout


def prepare(name, input_shape):
    must(PY, os.path.join(SOURCE, "tests/e2e/export_calibration_models.py"), WORK, name)
    print(must(PY, os.path.join(SOURCE, "examples/quantize.py"), f"{name}.onnx", name, "--msame", MSAME, "--calib", "4").strip())
    for form in ("deploy", "qdq"):
        must(ATC, "--framework=5", f"--model={name}_{form}.onnx", f"--output={name}_{form}", "--soc_version=Ascend310P3", f"--input_shape={input_shape}")
    must(ATC, "--framework=5", f"--model={name}.onnx", f"--output={name}_fp16", "--soc_version=Ascend310P3", f"--input_shape={input_shape}")


def run_all(model, inputs, tag):
    """msame on every input (a list of comma-joined file lists); the flattened outputs, one row per input."""
    rows = []
    for k, files in enumerate(inputs):
        out = os.path.join(WORK, f"{tag}_{k}")
        shutil.rmtree(out, ignore_errors=True)
        must(MSAME, "--model", model, "--input", files, "--output", out, "--outfmt", "NPY")
        rows.append(np.concatenate([np.load(f).reshape(-1) for f in sorted(glob.glob(os.path.join(out, "*.npy")))]).astype(np.float32))
    return np.stack(rows)


def run_folder(model, folder, tag):
    """msame on every file of `folder` in one process; the flattened outputs in file order."""
    out = os.path.join(WORK, tag)
    shutil.rmtree(out, ignore_errors=True)
    must(MSAME, "--model", model, "--input", folder, "--output", out, "--outfmt", "NPY")
    return np.stack([np.load(f).reshape(-1).astype(np.float32) for f in sorted(glob.glob(os.path.join(out, "*_output_0.npy")))])


def cosine(a, b):
    return float(np.mean([np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)) for x, y in zip(a, b)]))


def simulated_ms(om):
    text = must(ATC, "--mode=6", f"--om={om}")
    return float(text.split("Simulated NPU time: ")[1].split(" ms")[0])


class Resnet18(unittest.TestCase):
    def test_amct_and_qdq(self):
        prepare("resnet18", "input:1,3,224,224")
        rng = np.random.default_rng(42)
        images = os.path.join(WORK, "images")
        os.makedirs(images)
        for k in range(100):
            np.save(os.path.join(images, f"img{k:03d}.npy"), rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
        float_out = run_folder("resnet18.onnx", images, "r_float")
        deploy, qdq = run_folder("resnet18_deploy.om", images, "r_deploy"), run_folder("resnet18_qdq.om", images, "r_qdq")
        self.assertEqual(deploy.shape, (100, 1000))
        np.testing.assert_array_equal(deploy, qdq)
        top1 = float(np.mean(deploy.argmax(1) == float_out.argmax(1)))
        cos = cosine(deploy, float_out)
        int8_ms, fp16_ms = simulated_ms("resnet18_deploy.om"), simulated_ms("resnet18_fp16.om")
        print(f"resnet18 int8: top-1 agreement {top1:.2f}, cosine {cos:.5f}; simulated {int8_ms:.4f} ms vs force_fp16 {fp16_ms:.4f} ms")
        self.assertGreaterEqual(top1, 0.95)
        self.assertGreaterEqual(cos, 0.99)
        self.assertLess(int8_ms, fp16_ms)
        self.compare_with_the_float_model(os.path.join(images, "img000.npy"))

    def compare_with_the_float_model(self, image):
        """msaccucmp -f -q on the real int8 run: every float boundary compared with the float model's golden data,
        the integer ops in between skipped and counted."""
        import json
        for tag, model in (("golden", "resnet18.onnx"), ("npu", "resnet18_deploy.om")):
            json.dump({"dump": {"dump_path": f"d_{tag}", "dump_list": [], "dump_mode": "all"}}, open(os.path.join(WORK, f"{tag}.json"), "w"))
            must(MSAME, "--model", model, "--input", image, "--acl_json_path", f"{tag}.json", "--output", f"o_{tag}")
        must(ATC, "--mode=1", "--om=resnet18_deploy.om", "--json=resnet18_deploy.json")
        (npu,) = glob.glob(os.path.join(WORK, "d_npu/*/0/*/1/0"))
        (golden,) = glob.glob(os.path.join(WORK, "d_golden/*/0/*/1/0"))
        report = must(os.path.join(BUILD, "tools/msaccucmp/msaccucmp"), "compare", "-m", npu, "-g", golden, "-f", "resnet18_deploy.json",
                      "-q", "resnet18_quant_record.json", "-out", "cmp_q")
        self.assertIn("FAIL 0", report)
        self.assertRegex(report, r"\d+ quantize op\(s\)")
        import csv
        rows = [r for c in glob.glob(os.path.join(WORK, "cmp_q/*.csv")) for r in csv.DictReader(open(c))]
        compared = [r for r in rows if r["CosineSimilarity"] not in ("NaN", "")]
        self.assertGreater(len(compared), 10)
        self.assertTrue(all(float(r["CosineSimilarity"]) > 0.99 for r in compared))


class Encoder(unittest.TestCase):
    def test_amct_and_qdq(self):
        prepare("encoder", "input_ids:1,128;attention_mask:1,128;token_type_ids:1,128")
        rng = np.random.default_rng(7)
        np.save(os.path.join(WORK, "mask.npy"), np.ones((1, 128), np.int64))
        np.save(os.path.join(WORK, "types.npy"), np.zeros((1, 128), np.int64))
        inputs = []
        for k in range(10):
            np.save(os.path.join(WORK, f"ids{k}.npy"), rng.integers(0, 1000, (1, 128)).astype(np.int64))
            inputs.append(",".join(os.path.join(WORK, f) for f in (f"ids{k}.npy", "mask.npy", "types.npy")))
        float_out = run_all("encoder.onnx", inputs, "e_float")
        deploy, qdq = run_all("encoder_deploy.om", inputs, "e_deploy"), run_all("encoder_qdq.om", inputs, "e_qdq")
        np.testing.assert_array_equal(deploy, qdq)
        # the quant fusion (dequant, bias Add, requant folded into each MatMul) changes no value
        with open(os.path.join(WORK, "qfusion_off.json"), "w") as f:
            f.write('{"Switch": {"UBFusion": {"TbeConvDequantQuantFusionPass": "off"}}}')
        must(ATC, "--framework=5", "--model=encoder_deploy.onnx", "--output=encoder_unfused", "--soc_version=Ascend310P3",
             "--input_shape=input_ids:1,128;attention_mask:1,128;token_type_ids:1,128", "--fusion_switch_file=qfusion_off.json")
        np.testing.assert_array_equal(deploy[:3], run_all("encoder_unfused.om", inputs[:3], "e_unfused"))
        cos = cosine(deploy, float_out)
        print(f"encoder int8: cosine {cos:.5f}; simulated {simulated_ms('encoder_deploy.om'):.4f} ms vs force_fp16 {simulated_ms('encoder_fp16.om'):.4f} ms")
        self.assertGreaterEqual(cos, 0.99)


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    unittest.main(argv=sys.argv[:1], verbosity=2)
