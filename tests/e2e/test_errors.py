#!/usr/bin/python3
"""Bad inputs: each gets its specific error code, exit status 1 and no output file.
usage: test_errors.py BUILD_DIR WORK_DIR"""
import os
import sys
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import run  # noqa: E402  (one helper for every test: tests/testlib.py)

BUILD, WORK = sys.argv[1], sys.argv[2]
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")



def small_model(path, ops=("Relu",)):
    """x[1,3,4,4] -> ops chain -> y."""
    nodes, prev = [], "x"
    for i, op in enumerate(ops):
        out = "y" if i == len(ops) - 1 else f"t{i}"
        nodes.append(helper.make_node(op, [prev], [out], name=f"{op.lower()}_{i}"))
        prev = out
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


class AtcErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.good = os.path.join(WORK, "good.onnx")
        small_model(cls.good, ("Relu", "Sigmoid"))

    def atc(self, *flags, code, out="out", exit_code=1):
        target = os.path.join(WORK, out)
        if os.path.exists(target + ".om"):
            os.remove(target + ".om")
        r = run(ATC, "--framework=5", f"--output={target}", *flags)
        self.assertEqual(r.returncode, exit_code, r.stdout + r.stderr)
        self.assertIn(code, r.stdout)
        self.assertFalse(os.path.exists(target + ".om"), "a failed run must not leave an .om")
        return r.stdout

    def test_missing_model_file(self):
        self.atc("--model=/nonexistent/m.onnx", "--soc_version=Ascend310", code="E13001")

    def test_truncated_onnx(self):
        data = open(self.good, "rb").read()
        path = os.path.join(WORK, "truncated.onnx")
        open(path, "wb").write(data[: len(data) // 2])
        self.atc(f"--model={path}", "--soc_version=Ascend310", code="E10041")

    def test_corrupt_onnx(self):
        path = os.path.join(WORK, "corrupt.onnx")
        open(path, "wb").write(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
        self.atc(f"--model={path}", "--soc_version=Ascend310", code="E10041")

    def test_every_unsupported_op_is_listed(self):
        path = os.path.join(WORK, "unsupported.onnx")
        small_model(path, ("Relu", "Unique", "NonZero", "Sigmoid"))
        text = self.atc(f"--model={path}", "--soc_version=Ascend310", code="E16002")
        self.assertIn("2 node(s) are not supported", text)
        self.assertIn("unique_1 (type Unique, domain ai.onnx, opset 13)", text)
        self.assertIn("nonzero_2 (type NonZero, domain ai.onnx, opset 13)", text)

    def test_dangling_input_names_the_checker_finding(self):
        # A node reads a value nothing produces: our importer's error carries the ONNX checker's finding too.
        path = os.path.join(WORK, "dangling.onnx")
        node = helper.make_node("Add", ["x", "ghost"], ["y"], name="add_0")
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        text = self.atc(f"--model={path}", "--soc_version=Ascend310", code="E16005")
        self.assertIn("input 'ghost' is not produced", text)
        self.assertIn("the ONNX checker also reports", text)
        self.assertIn("ghost", text.split("the ONNX checker also reports", 1)[1])

    def test_input_format_must_fit_the_input_rank(self):
        text = self.atc(f"--model={self.good}", "--soc_version=Ascend310", "--input_format=NCDHW", code="E10001")
        self.assertIn("input 'x' is 4-D", text)

    def test_bad_input_shape_syntax(self):
        self.atc(f"--model={self.good}", "--soc_version=Ascend310", "--input_shape=x:1,3,a,4", code="E10002")

    def test_unknown_input_name_lists_real_inputs(self):
        text = self.atc(f"--model={self.good}", "--soc_version=Ascend310", "--input_shape=data:1,3,4,4", code="E10016")
        self.assertIn("the model's inputs are: x", text)

    def test_small_channel_takes_0_or_1(self):
        self.atc(f"--model={self.good}", "--soc_version=Ascend310P3", "--enable_small_channel=yes", code="E10001")

    def test_missing_soc_version(self):  # a required flag missing is bad usage: exit 2
        self.atc(f"--model={self.good}", code="E10007", exit_code=2)

    def test_all_flag_errors_reported_together(self):
        text = self.atc(f"--model={self.good}", "--input_shape=x=1,3", "--log=loud", code="E10007", exit_code=2)
        self.assertIn("E10010", text)
        self.assertIn("E10002", text)

    def test_invalid_mode(self):
        self.atc("--mode=9", code="E10001")


class OmErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.onnx = os.path.join(WORK, "ok.onnx")
        small_model(cls.onnx)
        cls.om = os.path.join(WORK, "ok")
        r = run(ATC, "--framework=5", f"--model={cls.onnx}", f"--output={cls.om}", "--soc_version=Ascend910B1")
        assert r.returncode == 0, r.stdout + r.stderr
        cls.bytes = open(cls.om + ".om", "rb").read()

    def corrupt_variants(self):
        flipped = bytearray(self.bytes)
        flipped[len(flipped) - 10] ^= 0xFF
        return {"truncated": self.bytes[: len(self.bytes) - 7], "flipped": bytes(flipped),
                "no_magic": b"XXXX" + self.bytes[4:], "tiny": self.bytes[:100]}

    def test_corrupt_om_rejected_by_msame_and_mode6(self):
        for name, data in self.corrupt_variants().items():
            with self.subTest(variant=name):
                path = os.path.join(WORK, f"bad_{name}.om")
                open(path, "wb").write(data)
                r = run(MSAME, "--model", path, "--output", os.path.join(WORK, "o"))
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn("E10003", r.stdout)
                r = run(ATC, "--mode=6", f"--om={path}")
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn("E10003", r.stdout)

    def test_bin_input_size_mismatch_names_both_sizes(self):
        path = os.path.join(WORK, "short.bin")
        np.zeros(10, dtype=np.float32).tofile(path)
        r = run(MSAME, "--model", self.om + ".om", "--input", path)
        self.assertEqual(r.returncode, 1)
        self.assertIn("EH0001", r.stdout)
        self.assertIn("40 bytes", r.stdout)
        self.assertIn("192 bytes", r.stdout)

    def test_msame_runs_the_model(self):
        x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4)
        np.save(os.path.join(WORK, "x.npy"), x)
        out = os.path.join(WORK, "ok_out")
        r = run(MSAME, "--model", self.om + ".om", "--input", os.path.join(WORK, "x.npy"), "--output", out, "--outfmt", "TXT")
        self.assertEqual(r.returncode, 0, r.stdout)
        vals = np.loadtxt(os.path.join(out, "ok_output_0.txt")).ravel()
        # atc's default precision mode is force_fp16: the input is rounded to fp16 on the way in.
        np.testing.assert_allclose(vals, np.maximum(x.astype(np.float16), 0).astype(np.float32).ravel(), atol=1e-6)


class ExternalData(unittest.TestCase):
    """model.onnx + weight file: converted and run; a weight file that is too short is rejected."""

    def make(self, name):
        w = np.arange(2 * 3 * 1 * 1, dtype=np.float32).reshape(2, 3, 1, 1) - 2.5
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [onnx.numpy_helper.from_array(w, "w")])
        d = os.path.join(WORK, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path,
                  save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
        return path, w

    def test_external_weights_convert_and_run(self):
        path, w = self.make("ext_ok")
        out = os.path.join(WORK, "ext_ok", "m")
        r = run(ATC, "--framework=5", f"--model={path}", f"--output={out}", "--soc_version=Ascend310",
                "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout)
        x = np.random.default_rng(0).standard_normal((1, 3, 2, 2), dtype=np.float32)
        np.save(out + "_x.npy", x)
        r = run(MSAME, "--model", out + ".om", "--input", out + "_x.npy", "--output", out + "_o", "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout)
        want = np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x)
        np.testing.assert_allclose(np.load(os.path.join(out + "_o", "m_output_0.npy")), want, rtol=1e-5, atol=1e-6)

    def test_short_weight_file_is_rejected(self):
        path, _ = self.make("ext_short")
        wfile = os.path.join(os.path.dirname(path), "weights.bin")
        data = open(wfile, "rb").read()
        with open(wfile, "wb") as f:
            f.write(data[:-4])
        out = os.path.join(WORK, "ext_short", "m")
        r = run(ATC, "--framework=5", f"--model={path}", f"--output={out}", "--soc_version=Ascend310")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("E10041", r.stdout)
        self.assertIn("past the end", r.stdout)
        self.assertFalse(os.path.exists(out + ".om"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
