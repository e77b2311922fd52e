#!/usr/bin/python3
"""atc --framework=1: MindSpore AIR files (a bare ge.proto.ModelDef, Const data inline) written here by an
independent encoder (airgraph.py: Python protobuf classes generated from libcore/frontend/ge/ge_ir.proto), a CNN
and a small transformer, each with an ONNX twin built from the same layer list. The AIR must compute exactly what its twin
computes in fp32 (msame's reference path and the converted .om), and the twins are checked against numpy. Bad AIR files are coded errors.
usage: test_air.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import functools
import glob
import os
import shutil
import sys
import unittest

import numpy as np

import airgraph
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SOURCE, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
ge = None


run = functools.partial(T.run, cwd=WORK)  # every command runs in the work folder


must = functools.partial(T.must, cwd=WORK)


def msame(model, x, out, *extra):
    np.save(os.path.join(WORK, out + "_in.npy"), x)
    must(MSAME, "--model", model, "--input", out + "_in.npy", "--output", out, *extra)
    (path,) = glob.glob(os.path.join(WORK, out, "*output_0.bin"))
    return np.fromfile(path, dtype=np.float32)


class AirMatchesItsOnnxTwin(unittest.TestCase):
    def check(self, name, x):
        ref_air = msame(f"{name}.air", x, name + "_ref_air")
        ref_onnx = msame(f"{name}.onnx", x, name + "_ref_onnx")
        np.testing.assert_array_equal(ref_air, ref_onnx)
        for fw, model in (("1", f"{name}.air"), ("5", f"{name}.onnx")):
            must(ATC, f"--framework={fw}", f"--model={model}", f"--output={name}_{fw}", "--soc_version=Ascend910B1", "--precision_mode=force_fp32")
        np.testing.assert_array_equal(msame(f"{name}_1.om", x, name + "_om_air"), msame(f"{name}_5.om", x, name + "_om_onnx"))
        return ref_onnx

    def test_cnn(self):
        x = np.random.default_rng(1).random((1, 3, 16, 16)).astype(np.float32)
        y = self.check("air_cnn", x)
        np.testing.assert_allclose(y, airgraph.numpy_cnn(WORK, x).reshape(-1), rtol=1e-4, atol=1e-6)

    def test_transformer(self):
        x = np.random.default_rng(2).standard_normal((1, 8, 16)).astype(np.float32)
        y = self.check("air_transformer", x)
        np.testing.assert_allclose(y, airgraph.numpy_transformer(WORK, x).reshape(-1), rtol=1e-4, atol=1e-4)

    def test_mode1_and_unsupported_ops(self):
        out = must(ATC, "--mode=1", "--framework=1", "--om=air_cnn.air", "--json=air_cnn.json")
        self.assertIn("success", out)
        md = ge.ModelDef()
        md.ParseFromString(open(os.path.join(WORK, "air_cnn.air"), "rb").read())
        for op in md.graph[0].op:
            if op.type in (b"Relu", b"MaxPool"):
                op.type = b"NpukitUnknown" + op.type
        open(os.path.join(WORK, "unknown.air"), "wb").write(md.SerializeToString())
        r = run(ATC, "--framework=1", "--model=unknown.air", "--output=unknown", "--soc_version=Ascend910B1")
        self.assertNotEqual(r.returncode, 0)
        for text in ("E13010", "relu1 (type NpukitUnknownRelu)", "pool1 (type NpukitUnknownMaxPool)"):
            self.assertIn(text, r.stdout + r.stderr)


class BadAir(unittest.TestCase):
    def expect(self, data, code, why):
        path = os.path.join(WORK, "bad.air")
        open(path, "wb").write(data)
        r = run(ATC, "--framework=1", f"--model={path}", "--output=bad", "--soc_version=Ascend910B1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(code, r.stdout + r.stderr)
        self.assertIn(why, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(WORK, "bad.om")))

    def test_encrypted_or_not_a_model(self):
        self.expect(np.random.default_rng(0).bytes(4096), "E10041", "encrypted")
        self.expect(b"", "E10041", "empty")

    def test_lies(self):
        good = open(os.path.join(WORK, "air_cnn.air"), "rb").read()
        md = ge.ModelDef()
        md.ParseFromString(good)
        w1 = next(op for op in md.graph[0].op if op.name == b"w1")
        w1.attr["value"].t.data = w1.attr["value"].t.data[:100]
        self.expect(md.SerializeToString(), "E10041", "bytes of data hold no")
        md.ParseFromString(good)
        next(op for op in md.graph[0].op if op.name == b"relu1").input[0] = b"ghost:0"
        self.expect(md.SerializeToString(), "E10041", "which no earlier op makes")


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ge = airgraph.load_pb2(WORK)
    airgraph.cnn(ge, WORK)
    airgraph.transformer(ge, WORK)
    unittest.main(argv=sys.argv[:1], verbosity=2)
