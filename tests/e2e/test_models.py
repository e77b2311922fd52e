#!/usr/bin/python3
"""Parity: torchvision models (random weights) exported at opsets 11 and 13 go through atc and msame and
must match PyTorch's CPU output (max abs error <= 1e-4). Also exercises atc --mode=1/3/6 and msame's
.onnx reference path.  usage: test_models.py BUILD_DIR WORK_DIR"""
import json
import os
import subprocess
import sys
import unittest

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402
from testlib import run  # noqa: E402  (one helper for every test: tests/testlib.py)

BUILD, WORK = sys.argv[1], sys.argv[2]
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "mobilenet_v2", "shufflenet_v2_x1_0"]
OPSETS = [11, 13]



class TorchvisionParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        specs = [f"{m}:{o}" for m in MODELS for o in OPSETS
                 if not os.path.exists(os.path.join(WORK, f"{m}_op{o}_torch.npy"))]
        if specs:
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_models.py"), WORK] + specs, check=True)

    def convert_and_run(self, name, opset):
        base = os.path.join(WORK, f"{name}_op{opset}")
        r = run(ATC, "--framework=5", f"--model={base}.onnx", f"--output={base}", "--soc_version=Ascend310P3",
                "--input_shape=input:1,3,224,224", "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ATC run success", r.stdout)
        out = base + "_out"
        r = run(MSAME, "--model", base + ".om", "--input", os.path.join(WORK, f"{name}_input.npy"),
                "--output", out, "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = np.load(os.path.join(out, f"{name}_op{opset}_output_0.npy"))
        want = np.load(base + "_torch.npy")
        self.assertEqual(got.shape, want.shape)
        err = float(np.abs(got - want).max())
        rel = err / max(float(np.abs(want).max()), 1e-30)  # random-weight nets can have tiny outputs
        print(f"{name} opset {opset}: max abs error {err:.3e}, relative to max |output| {rel:.3e}", file=sys.stderr)
        self.assertLessEqual(err, 1e-4)
        self.assertLessEqual(rel, 1e-4)

    def test_parity(self):
        for name in MODELS:
            for opset in OPSETS:
                with self.subTest(model=name, opset=opset):
                    self.convert_and_run(name, opset)

    def test_onnx_reference_path_and_bin_input(self):
        base = os.path.join(WORK, "resnet18_op13")
        x = np.load(os.path.join(WORK, "resnet18_input.npy"))
        x.tofile(os.path.join(WORK, "input.bin"))
        r = run(MSAME, "--model", base + ".onnx", "--input", os.path.join(WORK, "input.bin"),
                "--output", base + "_ref", "--loop", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Inference average time", r.stdout)
        got = np.fromfile(os.path.join(base + "_ref", "resnet18_op13_output_0.bin"), dtype=np.float32)
        self.assertLessEqual(float(np.abs(got - np.load(base + "_torch.npy").ravel()).max()), 1e-4)

    def test_modes_1_3_6(self):
        base = os.path.join(WORK, "mobilenet_v2_op13")
        if not os.path.exists(base + ".om"):
            self.convert_and_run("mobilenet_v2", 13)
        r = run(ATC, "--mode=1", f"--om={base}.om", f"--json={base}.json")
        self.assertEqual(r.returncode, 0, r.stdout)
        model = json.load(open(base + ".json"))
        ops = T.model_ops(model)
        self.assertGreater(len(ops), 50)
        for op in ops:
            names = T.attr(op, "_datadump_original_op_names")
            self.assertIsNotNone(names, op["name"])
            if op["type"] in ("TransData", "Cast"):  # inserted by atc: no framework op behind them
                self.assertEqual(names.get("list", {}).get("s", []), [])
            else:
                self.assertIn(op["name"], names["list"]["s"])
        attrs = {a["key"]: a["value"]["s"] for a in model["attr"] if "s" in a["value"]}
        self.assertEqual(attrs["soc_version"], "Ascend310P3")
        self.assertIn("--soc_version=Ascend310P3", attrs["atc_cmdline"])
        r = run(ATC, "--mode=6", f"--om={base}.om")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("Display Model Info start", r.stdout)
        self.assertIn("soc_version[Ascend310P3]", r.stdout)
        self.assertIn("input  input: float32[1,3,224,224] NCHW", r.stdout)
        # --input_format is recorded in the .om: ND here, shown by --mode=6 and --mode=1
        nd = os.path.join(WORK, "mobilenet_v2_nd")
        r = run(ATC, "--framework=5", f"--model={base}.onnx", f"--output={nd}", "--soc_version=Ascend310P3",
                "--input_format=ND")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("input  input: float32[1,3,224,224] ND", run(ATC, "--mode=6", f"--om={nd}.om").stdout)
        run(ATC, "--mode=1", f"--om={nd}.om", f"--json={nd}.json")
        self.assertEqual(T.model_inputs(json.load(open(nd + ".json")))[0]["layout"], "ND")
        report = os.path.join(WORK, "check_result.json")
        r = run(ATC, "--mode=3", "--framework=5", f"--model={base}.onnx", "--soc_version=Ascend910B1",
                f"--check_report={report}")
        self.assertEqual(r.returncode, 0, r.stdout)
        rep = json.load(open(report))
        self.assertEqual(rep["result"], "success")
        self.assertEqual(rep["fail"], 0)
        self.assertEqual(rep["total"], len(rep["op"]))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
