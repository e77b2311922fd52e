#!/usr/bin/python3
"""atc's front door (issue 16): shape profiles (--dynamic_batch_size, --dynamic_image_size, --dynamic_dims)
checked against PyTorch at every profile, msame's profile selection (--dymBatch, --dymHW, --dymDims, .npy shapes,
raw .bin sizes), and every profile error code with its exit status and no .om left behind.
usage: test_front_door.py BUILD_DIR WORK_DIR"""
import functools
import json
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np
import torch
import torchvision
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = sys.argv[1:3]
ATC, MSAME = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame"))


run = functools.partial(T.run, cwd=WORK)  # every command runs in the work folder


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


AIPP_RGB = """aipp_op {
  aipp_mode: static
  input_format: RGB888_U8
  src_image_size_w: 256
  src_image_size_h: 240
  crop: true
  load_start_pos_w: 16
  load_start_pos_h: 8
  crop_size_w: 224
  crop_size_h: 224
  mean_chn_0: 123
  mean_chn_1: 116
  mean_chn_2: 103
  min_chn_0: 0.675
  min_chn_1: 0.28
  min_chn_2: 0.53
  var_reci_chn_0: 0.0171247538
  var_reci_chn_1: 0.0175070028
  var_reci_chn_2: 0.0174291938
}
"""
# JPEG-range YUV -> RGB (CANN's documented matrix), then padding 2 px on every side.
AIPP_YUV = """aipp_op {
  aipp_mode: static
  input_format: YUV420SP_U8
  src_image_size_w: 220
  src_image_size_h: 220
  csc_switch: true
  matrix_r0c0: 256
  matrix_r0c1: 0
  matrix_r0c2: 359
  matrix_r1c0: 256
  matrix_r1c1: -88
  matrix_r1c2: -183
  matrix_r2c0: 256
  matrix_r2c1: 454
  matrix_r2c2: 0
  input_bias_0: 0
  input_bias_1: 128
  input_bias_2: 128
  padding: true
  left_padding_size: 2
  right_padding_size: 2
  top_padding_size: 2
  bottom_padding_size: 2
  var_reci_chn_0: 0.00392157
  var_reci_chn_1: 0.00392157
  var_reci_chn_2: 0.00392157
}
"""


class Aipp(unittest.TestCase):
    def convert(self, name, cfg, *flags):
        with open(os.path.join(WORK, name + ".cfg"), "w") as f:
            f.write(cfg)
        return run(ATC, "--framework=5", "--model=r18.onnx", f"--output={name}", "--soc_version=Ascend310P3",
                   "--input_shape=input:1,3,224,224", f"--insert_op_conf={name}.cfg", *flags)

    def compare_with_float_model(self, om, raw, x):
        raw.tofile(os.path.join(WORK, "img.bin"))
        got_dir = os.path.join(WORK, "aipp_out")
        shutil.rmtree(got_dir, ignore_errors=True)
        ok(MSAME, "--model", om + ".om", "--input", "img.bin", "--output", "aipp_out", "--outfmt", "NPY")
        got = np.load(os.path.join(got_dir, om + "_output_0.npy"))
        with torch.no_grad():
            want = resnet()(torch.from_numpy(x)).numpy()
        self.assertLess(np.abs(got - want).max(), 1e-4)

    def test_rgb888_crop_and_normalisation_match_numpy(self):
        r = self.convert("r18_rgb", AIPP_RGB, "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("input  input: uint8[1,240,256,3] NHWC", ok(ATC, "--mode=6", "--om=r18_rgb.om"))
        img = np.random.default_rng(0).integers(0, 256, (1, 240, 256, 3), dtype=np.uint8)
        mean, std = np.array([123.675, 116.28, 103.53], np.float32), np.array([58.395, 57.12, 57.375], np.float32)
        x = ((img[:, 8:232, 16:240, :].astype(np.float32) - mean) / std).transpose(0, 3, 1, 2).copy()
        self.compare_with_float_model("r18_rgb", img, x)

    def test_yuv420sp_csc_and_padding_match_numpy(self):
        r = self.convert("r18_yuv", AIPP_YUV, "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout)
        rng = np.random.default_rng(1)
        y = rng.integers(0, 256, (220, 220), dtype=np.uint8)
        uv = rng.integers(0, 256, (110, 110, 2), dtype=np.uint8)
        raw = np.concatenate([y.ravel(), uv.ravel()])
        u = uv[:, :, 0].repeat(2, 0).repeat(2, 1).astype(np.int64) - 128
        v = uv[:, :, 1].repeat(2, 0).repeat(2, 1).astype(np.int64) - 128
        yy = y.astype(np.int64)
        rgb = np.stack([(256 * yy + 359 * v) >> 8, (256 * yy - 88 * u - 183 * v) >> 8, (256 * yy + 454 * u) >> 8])
        x = np.zeros((1, 3, 224, 224), np.float32)
        x[0, :, 2:222, 2:222] = np.clip(rgb, 0, 255).astype(np.float32) * np.float32(0.00392157)
        self.compare_with_float_model("r18_yuv", raw, x)

    def test_small_channel_runs_the_first_conv_in_c04(self):
        """--enable_small_channel=1: the conv after static AIPP reads NC1HWC0_C04 with FRACTAL_Z_C04 weights (the .om
        stores them so and msame gets the same outputs back), and the simulated time drops."""
        for name, flags in (("r18_c16", ()), ("r18_c04", ("--enable_small_channel=1",))):
            r = self.convert(name, AIPP_RGB, *flags)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertNotIn("changed nothing", r.stdout + r.stderr)
        ok(ATC, "--mode=1", "--om=r18_c04.om", "--json=r18_c04.json")
        text = open(os.path.join(WORK, "r18_c04.json"), encoding="utf-8").read()
        self.assertIn('"NC1HWC0_C04"', text)
        self.assertIn('"FRACTAL_Z_C04"', text)
        img = np.random.default_rng(2).integers(0, 256, (1, 240, 256, 3), dtype=np.uint8)
        img.tofile(os.path.join(WORK, "img.bin"))
        outs, ms = [], []
        for name in ("r18_c16", "r18_c04"):
            shutil.rmtree(os.path.join(WORK, "c04_out"), ignore_errors=True)
            ok(MSAME, "--model", name + ".om", "--input", "img.bin", "--output", "c04_out", "--outfmt", "NPY")
            outs.append(np.load(os.path.join(WORK, "c04_out", name + "_output_0.npy")))
            timing = ok(MSAME, "--model", name + ".om", "--sim_mode=timing")
            ms.append(float(timing.split("Simulated NPU time: ")[1].split(" ms")[0]))
        np.testing.assert_array_equal(outs[0], outs[1])
        self.assertLess(ms[1], ms[0])
        r = self.convert("r18_nothing", AIPP_RGB, "--enable_small_channel=1", "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout)  # fp32 convs run on AI CPU here: nothing to change, and it says so
        self.assertIn("--enable_small_channel=1 changed nothing", r.stdout + r.stderr)

    def test_xrgb8888_swaps_match_numpy(self):
        cfg = """aipp_op {
  aipp_mode: static
  input_format: XRGB8888_U8
  ax_swap_switch: true
  rbuv_swap_switch: true
  var_reci_chn_0: 0.00392157
  var_reci_chn_1: 0.00392157
  var_reci_chn_2: 0.00392157
}
"""
        r = self.convert("r18_xrgb", cfg, "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout)
        img = np.random.default_rng(2).integers(0, 256, (1, 224, 224, 4), dtype=np.uint8)
        # XRGB -> (ax swap) RGBX -> (rbuv swap) BGRX: the model sees B, G, R.
        x = img[..., [3, 2, 1]].astype(np.float32).transpose(0, 3, 1, 2) * np.float32(0.00392157)
        self.compare_with_float_model("r18_xrgb", img, np.ascontiguousarray(x))

    def test_config_errors_name_the_field(self):
        cases = [("aipp_mode: dynamic", "aipp_mode"), ("input_format: BGR888_U8", "line"), ("colour: 1", "colour"),
                 ("crop_size_w: 300", "crop"), ("mean_chn_0: 300", "mean_chn_0"), ("matrix_r0c0: 40000", "matrix_r0c0"),
                 ("related_input_rank: 3", "related_input_rank"), ("src_image_size_w: 100", "src_image_size_w")]
        for line, field in cases:
            cfg = AIPP_RGB.replace("  crop: true\n", "").replace("  load_start_pos_w: 16\n  load_start_pos_h: 8\n", "")
            cfg = cfg.replace("  crop_size_w: 224\n  crop_size_h: 224\n", "").replace("src_image_size_w: 256", "src_image_size_w: 224")
            cfg = cfg.replace("src_image_size_h: 240", "src_image_size_h: 224")
            key = line.split(":")[0]
            cfg = "\n".join(l for l in cfg.splitlines() if not l.strip().startswith(key + ":"))
            cfg = cfg.replace("aipp_op {", "aipp_op {\n  " + line + ("\n  crop: true" if key == "crop_size_w" else ""))
            r = self.convert("bad_aipp", cfg)
            self.assertEqual(r.returncode, 1, f"{line}\n{r.stdout}")
            self.assertIn("E10052", r.stdout, line)
            self.assertIn(field, r.stdout.split("E10052")[1], line)
            self.assertFalse(os.path.exists(os.path.join(WORK, "bad_aipp.om")), line)
        for cfg, field in (("aipp_op {\n  aipp_mode: dynamic\n}\n", "max_src_image_size"),
                           (AIPP_RGB.replace("aipp_op {", "aipp_op {\n  max_src_image_size: 9000"), "max_src_image_size")):
            r = self.convert("bad_aipp", cfg)
            self.assertEqual(r.returncode, 1, cfg)
            self.assertIn(field, r.stdout.split("E10052")[1], cfg)
        r = run(ATC, "--framework=5", "--model=mlp.onnx", "--output=bad_aipp", "--soc_version=Ascend310P3", "--input_format=ND",
                "--insert_op_conf=bad_aipp.cfg", "--input_shape=x:-1,16", "--dynamic_dims=1;2")
        self.assertEqual(r.returncode, 1)
        self.assertIn("E10047", r.stdout)


class ExternalWeight(unittest.TestCase):
    def test_weights_beside_the_om(self):
        x = np.random.default_rng(3).standard_normal((1, 3, 224, 224)).astype(np.float32)
        base = "--framework=5", "--model=r18.onnx", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224"
        ok(ATC, *base, "--output=ew0")
        want = infer("ew0.om", x)
        inline = os.path.getsize(os.path.join(WORK, "ew0.om"))
        for mode, files in (("1", ["weight"]), ("2", ["ew_weight_combined"])):
            d = os.path.join(WORK, "ew" + mode)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            ok(ATC, *base, f"--output=ew{mode}/ew", f"--external_weight={mode}")
            size = os.path.getsize(os.path.join(d, "ew.om"))
            self.assertLess(size, inline / 100, f"external_weight={mode}: the .om holds the graph only ({size} B)")
            self.assertEqual(sorted(os.listdir(d)), sorted(["ew.om"] + files))
            if mode == "1":
                self.assertTrue(all(f.startswith("weight_") for f in os.listdir(os.path.join(d, "weight"))))
            np.testing.assert_array_equal(infer(f"ew{mode}/ew.om", x), want)
            # A missing weight file is a clear error naming it.
            victim = os.path.join(d, files[0])
            if mode == "1":
                victim = os.path.join(victim, sorted(os.listdir(victim))[0])
            os.remove(victim)
            r = run(MSAME, "--model", f"ew{mode}/ew.om", "--input", "x.npy")
            self.assertEqual(r.returncode, 1)
            self.assertIn("E13001", r.stdout)
            self.assertIn(os.path.basename(victim), r.stdout)
        r = run(ATC, *base, "--output=ew9", "--external_weight=3")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--external_weight", r.stdout)


SINGLE_OPS = [
    {"op": "Add", "input_desc": [{"format": "ND", "shape": [8, 16], "type": "float16"}] * 2,
     "output_desc": [{"format": "ND", "shape": [8, 16], "type": "float16"}]},
    {"op": "Conv2D", "input_desc": [{"format": "NCHW", "shape": [1, 3, 16, 16], "type": "float16"},
                                    {"format": "NCHW", "shape": [8, 3, 3, 3], "type": "float16"}],
     "output_desc": [{"format": "NCHW", "shape": [1, 8, 8, 8], "type": "float16"}],
     "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 2, 2]}, {"name": "pads", "type": "list_int", "value": [1, 1, 1, 1]},
              {"name": "dilations", "type": "list_int", "value": [1, 1, 1, 1]}, {"name": "groups", "type": "int", "value": 1},
              {"name": "data_format", "type": "str", "value": "NCHW"}]},
    {"op": "MatMulV2", "input_desc": [{"format": "ND", "shape": [16, 32], "type": "float16"},
                                      {"format": "ND", "shape": [24, 32], "type": "float16"}],
     "output_desc": [{"format": "ND", "shape": [16, 24], "type": "float16"}],
     "attr": [{"name": "transpose_x1", "type": "bool", "value": False}, {"name": "transpose_x2", "type": "bool", "value": True}]},
]


def conv2d_stride2_pad1(x, w):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, w.shape[0], 8, 8))
    for i in range(8):
        for j in range(8):
            out[0, :, i, j] = np.einsum("ckl,ockl->o", xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3], w)
    return out


class SingleOp(unittest.TestCase):
    def test_add_conv2d_matmul_match_numpy(self):
        with open(os.path.join(WORK, "ops.json"), "w") as f:
            json.dump(SINGLE_OPS, f)
        shutil.rmtree(os.path.join(WORK, "single"), ignore_errors=True)
        ok(ATC, "--singleop=ops.json", "--output=single", "--soc_version=Ascend310P3")
        oms = sorted(os.listdir(os.path.join(WORK, "single")))
        self.assertEqual([o.split("_")[1] for o in oms], ["Add", "Conv2D", "MatMulV2"])
        rng = np.random.default_rng(5)
        cases = {"Add": ([(8, 16), (8, 16)], lambda a, b: a + b),
                 "Conv2D": ([(1, 3, 16, 16), (8, 3, 3, 3)], conv2d_stride2_pad1),
                 "MatMulV2": ([(16, 32), (24, 32)], lambda a, b: a @ b.T)}
        for om in oms:
            shapes, fn = cases[om.split("_")[1]]
            xs = [rng.standard_normal(s).astype(np.float16) for s in shapes]
            files = []
            for i, x in enumerate(xs):
                np.save(os.path.join(WORK, f"in{i}.npy"), x)
                files.append(f"in{i}.npy")
            shutil.rmtree(os.path.join(WORK, "sout"), ignore_errors=True)
            ok(MSAME, "--model", f"single/{om}", "--input", ",".join(files), "--output", "sout", "--outfmt", "NPY")
            got = np.load(os.path.join(WORK, "sout", om[:-3] + "_output_0.npy"))
            want = fn(*[x.astype(np.float64) for x in xs])
            self.assertEqual(got.dtype, np.float16)
            # fp16 inputs, fp32 accumulation, one rounding to fp16.
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3, err_msg=om)

    def test_bad_descriptions(self):
        bad = [("E10024", "not json"), ("E10025", json.dumps([{"op": "NoSuchOp", "input_desc": [], "output_desc": []}])),
               ("E10026", json.dumps([dict(SINGLE_OPS[0], output_desc=[{"format": "ND", "shape": [8, 15], "type": "float16"}])])),
               ("E10026", json.dumps([dict(SINGLE_OPS[0], input_desc=[{"format": "ND", "shape": [8, 16]}] * 2)])),
               ("E10027", json.dumps([dict(SINGLE_OPS[1], attr=[{"name": "groups", "type": "tensor", "value": 1}])]))]
        for code, text in bad:
            with open(os.path.join(WORK, "bad_ops.json"), "w") as f:
                f.write(text)
            shutil.rmtree(os.path.join(WORK, "bad_single"), ignore_errors=True)
            r = run(ATC, "--singleop=bad_ops.json", "--output=bad_single", "--soc_version=Ascend310P3")
            self.assertEqual(r.returncode, 1, text)
            self.assertIn(code, r.stdout, text)
            self.assertFalse(os.path.exists(os.path.join(WORK, "bad_single")), text)
        r = run(ATC, "--singleop=missing.json", "--output=bad_single", "--soc_version=Ascend310P3")
        self.assertIn("E10023", r.stdout)


class DiffAndVerify(unittest.TestCase):
    def test_diff_and_verify(self):
        base = "--framework=5", "--model=r18.onnx", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224"
        ok(ATC, *base, "--output=d16")
        ok(ATC, *base, "--output=d32", "--precision_mode=must_keep_origin_dtype")
        r = run(ATC, "--mode=diff", "d16.om", "d16.om")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("identical", r.stdout)
        r = run(ATC, "--mode=diff", "d16.om", "d32.om")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("option precision_mode: force_fp16 -> must_keep_origin_dtype", r.stdout)
        self.assertIn("op - input_Cast_float16 (Cast)", r.stdout)
        self.assertRegex(r.stdout, r"op /conv1/Conv: output 0: float16\S* \S+ -> float32")
        self.assertRegex(r.stdout, r"op /conv1/Conv: engine: AiCore -> AiCpu")
        self.assertIn("weight ", r.stdout)
        r = run(ATC, "--mode=verify", "--om=d16.om")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("sound", r.stdout)
        with open(os.path.join(WORK, "d16.om"), "rb") as f:
            data = bytearray(f.read())
        data[len(data) // 2] ^= 0xFF
        with open(os.path.join(WORK, "broken.om"), "wb") as f:
            f.write(data)
        r = run(ATC, "--mode=verify", "--om=broken.om")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("E10003", r.stdout)
        self.assertEqual(run(ATC, "--mode=diff", "d16.om").returncode, 2)
        self.assertEqual(run(ATC, "--mode=diff", "d16.om", "missing.om").returncode, 2)


class OutputOptions(unittest.TestCase):
    def test_fp16_inputs_original_model_and_model_info(self):
        base = "--framework=5", "--model=r18.onnx", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224"
        out = ok(ATC, *base, "--output=f16", "--input_fp16_nodes=input", "--display_model_info=1", "--save_original_model=true")
        self.assertIn("Display Model Info start", out)
        self.assertIn("input  input: float16[1,3,224,224]", out)
        x = np.random.default_rng(4).standard_normal((1, 3, 224, 224)).astype(np.float32)
        with torch.no_grad():
            want = resnet()(torch.from_numpy(x)).numpy()
        got = infer("f16.om", x.astype(np.float16))
        self.assertGreater(float((got * want).sum() / np.linalg.norm(got) / np.linalg.norm(want)), 0.999)
        original = infer("f16_original.om", x)  # the framework's model: fp32 input, no fusion or fp16
        self.assertLess(np.abs(original - want).max(), 1e-4)
        self.assertIn("input  input: float32", ok(ATC, "--mode=6", "--om=f16_original.om"))
        for flag, code in (("--input_fp16_nodes=nope", "E10016"), ("--display_model_info=2", "E10006"), ("--save_original_model=yes", "E10005")):
            r = run(ATC, *base, "--output=bad_opt", flag)
            self.assertEqual(r.returncode, 1, flag)
            self.assertIn(code, r.stdout, flag)
            self.assertFalse(os.path.exists(os.path.join(WORK, "bad_opt.om")))


def to_nc1hwc0(x):
    n, c, h, w = x.shape
    c1 = (c + 15) // 16
    y = np.zeros((n, c1 * 16, h, w), x.dtype)
    y[:, :c] = x
    return np.ascontiguousarray(y.reshape(n, c1, 16, h, w).transpose(0, 1, 3, 4, 2))


class AdjustHwLayout(unittest.TestCase):
    def test_fp16_nc1hwc0_inputs_and_outputs(self):
        node = "/layer1/layer1.0/relu_1/Relu"
        base = ("--framework=5", "--model=r18.onnx", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224",
                "--input_fp16_nodes=input", f"--out_nodes={node}:0")
        ok(ATC, *base, "--output=hw_plain", f"--output_type={node}:0:FP16")
        ok(ATC, *base, "--output=hw_5hd", "--is_input_adjust_hw_layout=true", "--is_output_adjust_hw_layout=true")
        info = ok(ATC, "--mode=6", "--om=hw_5hd.om")
        self.assertIn("input  input: float16[1,1,224,224,16] NC1HWC0", info)
        self.assertRegex(info, r"output \S+: float16\[1,4,56,56,16\] NC1HWC0")
        tasks = [line for line in info.splitlines() if line.startswith("  task ")]
        self.assertIn("Conv2D", tasks[0], "the conv reads the NC1HWC0 input directly: no Cast or TransData before it")
        self.assertIn("Conv2D", tasks[-1], "and the output leaves as the fused conv writes it")
        x = np.random.default_rng(8).standard_normal((1, 3, 224, 224)).astype(np.float16)
        plain = infer("hw_plain.om", x)
        device = infer("hw_5hd.om", to_nc1hwc0(x))
        self.assertEqual(device.shape, (1, 4, 56, 56, 16))
        np.testing.assert_array_equal(device, to_nc1hwc0(plain))
        for flags, code in ((["--is_input_adjust_hw_layout=true,true"], "E10001"), (["--is_output_adjust_hw_layout=maybe"], "E10005")):
            r = run(ATC, *base, "--output=hw_bad", *flags)
            self.assertEqual(r.returncode, 1, flags)
            self.assertIn(code, r.stdout, flags)
        r = run(ATC, "--framework=5", "--model=r18.onnx", "--soc_version=Ascend310P3", "--output=hw_bad", "--is_input_adjust_hw_layout=true")
        self.assertIn("E10057", r.stdout)


class OutputType(unittest.TestCase):
    def test_per_node_output_type(self):
        base = "--framework=5", "--model=mlp.onnx", "--soc_version=Ascend310P3", "--input_format=ND", "--input_shape=x:2,16"
        out = ok(ATC, *base, "--output=mlp_ot", "--out_nodes=/1/Relu:0;/2/Gemm:0", "--output_type=/2/Gemm:0:FP16;/1/Relu:0:FP32")
        info = ok(ATC, "--mode=6", "--om=mlp_ot.om")
        self.assertIn("output y: float16[2,8]", info)
        self.assertRegex(info, r"output \S*Relu\S*: float32\[2,32\]")
        out = ok(ATC, *base, "--output=mlp_ot2", "--output_type=/0/Gemm:0:FP16")
        self.assertIn("[WARNING] --output_type: /0/Gemm:0 is not a net output", out)
        r = run(ATC, *base, "--output=mlp_bad", "--output_type=/2/Gemm:x:FP16")
        self.assertEqual(r.returncode, 1)
        self.assertIn("node:index:TYPE", r.stdout)


class CheckReport(unittest.TestCase):
    def test_conversion_with_unsupported_ops_writes_the_report(self):
        import onnx
        from onnx import TensorProto, helper
        nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                 helper.make_node("FancyOp", ["r"], ["y"], name="fancy", domain="example.custom")]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("example.custom", 1)])
        onnx.save(m, os.path.join(WORK, "custom.onnx"))
        work = os.path.join(WORK, "ascend_work")
        os.makedirs(work, exist_ok=True)
        env = dict(os.environ, ASCEND_WORK_PATH=work)
        r = subprocess.run([ATC, "--framework=5", "--model=custom.onnx", "--output=custom", "--soc_version=Ascend310P3"],
                           capture_output=True, text=True, cwd=WORK, env=env)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("E16002", r.stdout)
        with open(os.path.join(work, "check_result.json")) as f:
            rep = json.load(f)
        self.assertEqual((rep["result"], rep["total"], rep["fail"]), ("failed", 2, 1))
        self.assertEqual([o["result"] for o in rep["op"]], ["success", "failed"])
        self.assertFalse(os.path.exists(os.path.join(WORK, "custom.om")))
        r = run(ATC, "--framework=5", "--model=custom.onnx", "--output=custom", "--soc_version=Ascend310P3", "--check_report=mine.json")
        self.assertTrue(os.path.exists(os.path.join(WORK, "mine.json")), r.stdout)


class Ranges(unittest.TestCase):
    def test_min_max_ranges_make_a_dynamic_shape_model(self):
        ok(ATC, "--framework=5", "--model=r18.onnx", "--output=r18_range", "--soc_version=Ascend310P3",
           "--precision_mode=must_keep_origin_dtype", "--input_shape=input:1~4,3,224,224")
        self.assertIn("input range input: [1~4,3,224,224]", ok(ATC, "--mode=6", "--om=r18_range.om"))
        x = np.random.default_rng(6).standard_normal((3, 3, 224, 224)).astype(np.float32)
        with torch.no_grad():
            want = resnet()(torch.from_numpy(x)).numpy()
        self.assertLess(np.abs(infer("r18_range.om", x) - want).max(), 1e-4)
        np.save(os.path.join(WORK, "x5.npy"), np.zeros((5, 3, 224, 224), np.float32))
        r = run(MSAME, "--model", "r18_range.om", "--input", "x5.npy")
        self.assertEqual(r.returncode, 1)
        self.assertIn("outside the range 1~4", r.stdout)
        for flags, code in ((["--input_shape=input:1~4,3,224,224", "--dynamic_batch_size=1,2"], "E10040"),
                            (["--input_shape=input:4~1,3,224,224"], "E10048")):
            r = run(ATC, "--framework=5", "--model=r18.onnx", "--output=bad_range", "--soc_version=Ascend310P3", *flags)
            self.assertEqual(r.returncode, 1, flags)
            self.assertIn(code, r.stdout, flags)


class Reproducible(unittest.TestCase):
    def test_same_model_same_bytes_and_the_old_om_replaced_whole(self):
        out = os.path.join(WORK, "again", "r18")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        flags = ["--framework=5", "--model=r18.onnx", f"--output={out}", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224"]
        ok(ATC, *flags)
        with open(out + ".om", "rb") as f:
            first = f.read()
        ok(ATC, *flags)  # onto the first .om: atc replaces it in one step
        with open(out + ".om", "rb") as f:
            self.assertTrue(f.read() == first, "a second conversion of the same model wrote other bytes")
        self.assertEqual(sorted(os.listdir(os.path.dirname(out))), ["r18.om"])


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
            want = 2 if code == "E10057" else 1  # a flag missing that another needs is bad usage
            self.assertEqual(r.returncode, want, f"{code} {flags}\n{r.stdout}")
            self.assertIn(code + ":", r.stdout, flags)
            self.assertFalse(os.path.exists(out + ".om"), flags)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
