#!/usr/bin/python3
"""atc's front door (issue 16): shape profiles (--dynamic_batch_size, --dynamic_image_size, --dynamic_dims)
checked against PyTorch at every profile, msame's profile selection (--dymBatch, --dymHW, --dymDims, .npy shapes,
raw .bin sizes), and every profile error code with its exit status and no .om left behind.
usage: test_front_door.py BUILD_DIR WORK_DIR"""
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np
import torch
import torchvision

BUILD, WORK = sys.argv[1:3]
ATC, MSAME = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame"))


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=WORK)


def ok(*args):
    r = run(*args)
    assert r.returncode == 0, f"{' '.join(map(str, args))}\n{r.stdout}{r.stderr}"
    return r.stdout


def setUpModule():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(net, x, os.path.join(WORK, "r18.onnx"), opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}, "output": {0: "n"}})
    torch.save(net.state_dict(), os.path.join(WORK, "r18.pt"))
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    torch.onnx.export(mlp, torch.randn(2, 16), os.path.join(WORK, "mlp.onnx"), opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    torch.save(mlp, os.path.join(WORK, "mlp.pt"))


def resnet():
    net = torchvision.models.resnet18(weights=None).eval()
    net.load_state_dict(torch.load(os.path.join(WORK, "r18.pt")))
    return net


def infer(om, x, *flags):
    np.save(os.path.join(WORK, "x.npy"), x)
    out = os.path.join(WORK, "out")
    shutil.rmtree(out, ignore_errors=True)
    ok(MSAME, "--model", om, "--input", "x.npy", "--output", "out", "--outfmt", "NPY", *flags)
    return np.load(os.path.join(out, os.path.basename(om)[:-3] + "_output_0.npy"))


class Profiles(unittest.TestCase):
    def test_dynamic_batch_size_matches_pytorch_at_every_profile(self):
        ok(ATC, "--framework=5", "--model=r18.onnx", "--output=r18_batch", "--soc_version=Ascend310P3",
           "--precision_mode=must_keep_origin_dtype", "--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,2,4")
        info = ok(ATC, "--mode=6", "--om=r18_batch.om")
        self.assertIn("batch profiles[3]: batch 1; batch 2; batch 4", info)
        self.assertIn("input  ascend_mbatch_shape_data: int64[1]", info)
        net = resnet()
        for b in (1, 2, 4):
            x = np.random.default_rng(b).standard_normal((b, 3, 224, 224)).astype(np.float32)
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            got = infer("r18_batch.om", x, "--dymBatch", str(b))
            self.assertEqual(got.shape, want.shape)
            self.assertLess(np.abs(got - want).max(), 1e-4, f"batch {b}")
        # Without --dymBatch the .npy shape picks the profile; a raw .bin's size does too.
        x = np.random.default_rng(9).standard_normal((2, 3, 224, 224)).astype(np.float32)
        self.assertEqual(infer("r18_batch.om", x).shape, (2, 1000))
        x.tofile(os.path.join(WORK, "x2.bin"))
        r = ok(MSAME, "--model", "r18_batch.om", "--input", "x2.bin")
        self.assertIn("at batch 2", r)

    def test_dynamic_image_size_matches_pytorch_at_every_profile(self):
        ok(ATC, "--framework=5", "--model=r18.onnx", "--output=r18_hw", "--soc_version=Ascend310P3",
           "--precision_mode=must_keep_origin_dtype", "--input_shape=input:1,3,-1,-1", "--dynamic_image_size=224,224;160,192")
        net = resnet()
        for h, w in ((224, 224), (160, 192)):
            x = np.random.default_rng(h).standard_normal((1, 3, h, w)).astype(np.float32)
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            got = infer("r18_hw.om", x, "--dymHW", f"{h},{w}")
            self.assertLess(np.abs(got - want).max(), 1e-4, f"{h}x{w}")

    def test_dynamic_dims_with_nd(self):
        ok(ATC, "--framework=5", "--model=mlp.onnx", "--output=mlp_dims", "--soc_version=Ascend310P3", "--input_format=ND",
           "--precision_mode=must_keep_origin_dtype", "--input_shape=x:-1,16", "--dynamic_dims=1;3;8")
        mlp = torch.load(os.path.join(WORK, "mlp.pt"))
        for n in (1, 3, 8):
            x = np.random.default_rng(n).standard_normal((n, 16)).astype(np.float32)
            with torch.no_grad():
                want = mlp(torch.from_numpy(x)).numpy()
            got = infer("mlp_dims.om", x, "--dymDims", f"x:{n},16")
            self.assertLess(np.abs(got - want).max(), 1e-5)

    def test_msame_names_the_profiles_when_none_fits(self):
        if not os.path.exists(os.path.join(WORK, "mlp_dims.om")):
            self.test_dynamic_dims_with_nd()
        np.save(os.path.join(WORK, "x5.npy"), np.zeros((5, 16), np.float32))
        for flags in (["--input", "x5.npy"], ["--input", "x5.npy", "--dymDims", "x:5,16"], ["--dymBatch", "2"]):
            r = run(MSAME, "--model", "mlp_dims.om", *flags)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("dims 1; dims 3; dims 8", r.stdout, flags)


class ProfileErrors(unittest.TestCase):
    CASES = [
        ("E10009", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,2", "--dynamic_image_size=224,224;112,112"]),
        ("E10011", ["--input_shape=input:-1,3,224,224"]),
        ("E10018", ["--input_shape=input:1,-1,224,224", "--dynamic_batch_size=1,2"]),
        ("E10019", ["--input_shape=input:-1,3,224,224", "--dynamic_image_size=224,224;112,112"]),
        ("E10020", ["--input_shape=input:1,3,-1,-1", "--dynamic_image_size=224,224,3;112,112"]),
        ("E10031", ["--input_shape=input:1,3,224,224", "--dynamic_batch_size=1,2"]),
        ("E10035", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=4"]),
        ("E10035", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=" + ",".join(map(str, range(1, 102)))]),
        ("E10036", ["--input_shape=input:-1,3,-1,224", "--input_format=ND", "--dynamic_dims=1;2"]),
        ("E10037", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,2,1"]),
        ("E10038", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,0"]),
        ("E10057", ["--dynamic_batch_size=1,2"]),
        ("E10001", ["--input_shape=input:-1,3,224,224", "--dynamic_dims=1;2"]),  # dims need --input_format=ND
    ]

    def test_every_code_exits_1_without_an_om(self):
        for code, flags in self.CASES:
            out = os.path.join(WORK, "bad")
            r = run(ATC, "--framework=5", "--model=r18.onnx", f"--output={out}", "--soc_version=Ascend310P3", *flags)
            self.assertEqual(r.returncode, 1, f"{code} {flags}\n{r.stdout}")
            self.assertIn(code + ":", r.stdout, flags)
            self.assertFalse(os.path.exists(out + ".om"), flags)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
