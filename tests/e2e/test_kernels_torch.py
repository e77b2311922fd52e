#!/usr/bin/python3
"""Kernel parity with PyTorch CPU for what the torchvision models do not reach: 3-D Conv and ConvTranspose
(groups, strides, dilations, pads, depthwise), float64 Conv/ConvTranspose/pooling/normalisation/softmax,
Einsum with diagonals and more than two operands, and Resize on uint8 and float64. Each model is exported with torch.onnx.export, run by
msame on the .onnx reference path (and the fp32 ones through atc + msame on the .om too).
usage: test_kernels_torch.py BUILD_DIR WORK_DIR"""
import os
import sys
import unittest

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import run  # noqa: E402  (one helper for every test: tests/testlib.py)

BUILD, WORK = sys.argv[1], sys.argv[2]
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")


class Conv3dNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.grouped = torch.nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)
        self.depthwise = torch.nn.Conv3d(6, 6, 3, padding=1, groups=6)
        self.up = torch.nn.ConvTranspose3d(6, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.pool = torch.nn.MaxPool3d(2, ceil_mode=True)

    def forward(self, x):
        return self.pool(self.up(torch.relu(self.depthwise(self.grouped(x)))))


class VideoSpeechNet(torch.nn.Module):
    """An r3d-style residual block (dense Conv3d, BatchNorm, ReLU, the residual add, then a strided Conv3d with
    asymmetric kernel and padding) and a Conv1d with stride and dilation over the flattened map: the fp32 1-D and
    3-D convs oneDNN runs (kernels/conv_nd_dnnl.cc), with the fused activation and residual left to the runtime."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv3d(8, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm3d(8)
        self.conv2 = torch.nn.Conv3d(8, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm3d(8)
        self.down = torch.nn.Conv3d(8, 16, (1, 3, 2), stride=(1, 2, 2), padding=(0, 1, 0))
        self.conv1d = torch.nn.Conv1d(16, 12, 5, stride=2, dilation=2, padding=3)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + x)
        z = self.down(y)
        return self.conv1d(z.flatten(2))


class GeneratorNet(torch.nn.Module):
    """A DCGAN generator's upsampling (ConvTranspose2d 4x4 stride 2 without bias, BatchNorm, ReLU), then a grouped
    ConvTranspose2d with output_padding, dilation and a bias: oneDNN's deconvolution (kernels/conv_nd_dnnl.cc)."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.grouped = torch.nn.ConvTranspose2d(16, 12, 3, stride=2, padding=1, output_padding=1, groups=4, dilation=2)

    def forward(self, x):
        return self.grouped(torch.relu(self.bn(self.up(x))))


class Float64Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.conv1d = torch.nn.Conv1d(4, 5, 3, dilation=2)
        self.ln = torch.nn.LayerNorm(5)

    def forward(self, x):
        y = self.bn(torch.nn.functional.max_pool2d(self.conv(x), 3, stride=1, padding=1))  # not foldable into conv
        y = torch.nn.functional.avg_pool2d(self.inorm(y), 2, count_include_pad=False)
        y = self.up(y)
        z = self.conv1d(y.flatten(2)).transpose(1, 2)
        return torch.softmax(self.ln(z), dim=-1) + torch.nn.functional.adaptive_avg_pool2d(y, 1).sum()


class EinsumNet(torch.nn.Module):
    def forward(self, a, b, c):
        # a diagonal, a batch label, three operands, a label (j) shared by the first and last operand only
        return torch.einsum("bii,bij,bjk->bk", a, b, c) + torch.einsum("bij,bkl,bjl->bik", b, c, c).sum()


class ResizeNet(torch.nn.Module):
    def __init__(self, mode, scale):
        super().__init__()
        self.mode, self.scale = mode, scale

    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=self.scale, mode=self.mode)


class RecurrentNet(torch.nn.Module):
    """A 2-layer bidirectional batch-first LSTM then a GRU over its states, with torch's initial states: LSTM, GRU,
    both directions, two layers (two ONNX nodes each) and the Transposes torch adds for batch_first."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(12, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(32, 8, batch_first=True)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y)
        return torch.cat([z[:, -1], h[0]], 1)



class KernelParity(unittest.TestCase):
    def export(self, name, model, inputs, opset=13):
        path = os.path.join(WORK, name + ".onnx")
        names = [f"in{i}" for i in range(len(inputs))]
        torch.onnx.export(model.eval(), tuple(inputs), path, opset_version=opset, input_names=names,
                          output_names=["out"])
        files = []
        for i, t in enumerate(inputs):
            files.append(os.path.join(WORK, f"{name}_in{i}.npy"))
            np.save(files[-1], t.numpy())
        with torch.no_grad():
            want = model(*inputs).numpy()
        return path, files, want

    def msame(self, model, inputs, name):
        out = os.path.join(WORK, name + "_out")
        r = run(MSAME, "--model", model, "--input", ",".join(inputs), "--output", out, "--outfmt", "NPY")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        base = os.path.splitext(os.path.basename(model))[0]
        return np.load(os.path.join(out, f"{base}_output_0.npy"))

    def check(self, got, want, atol, what):
        self.assertEqual(got.dtype, want.dtype, what)
        self.assertEqual(got.shape, want.shape, what)
        err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())  # no uint8 wrap-around
        print(f"{what}: max abs error {err:.3e}", file=sys.stderr)
        self.assertLessEqual(err, atol, what)

    def check_om_modes(self, name, path, files, want, atol_of_mode, what):
        """Converts the .onnx with atc in each precision mode and checks msame's output within that mode's tolerance."""
        om = os.path.join(WORK, name)
        for mode, atol in atol_of_mode.items():
            r = run(ATC, "--framework=5", f"--model={path}", f"--output={om}_{mode}", "--soc_version=Ascend310P3",
                    f"--precision_mode={mode}")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.check(self.msame(f"{om}_{mode}.om", files, f"{name}_{mode}"), want, atol, f"{what}, .om, {mode}")

    def test_conv3d_fp32_reference_and_om(self):
        torch.manual_seed(0)
        path, files, want = self.export("conv3d", Conv3dNet(), [torch.randn(2, 4, 7, 9, 8)])
        self.check(self.msame(path, files, "conv3d_ref"), want, 1e-4, "3-D conv, .onnx reference path")
        om = os.path.join(WORK, "conv3d")
        r = run(ATC, "--framework=5", f"--model={path}", f"--output={om}", "--soc_version=Ascend310P3",
                "--precision_mode=must_keep_origin_dtype")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.check(self.msame(om + ".om", files, "conv3d_om"), want, 1e-4, "3-D conv, .om")

    def test_conv3d_block_and_conv1d_fp32_and_fp16(self):
        torch.manual_seed(5)
        model = VideoSpeechNet()
        with torch.no_grad():  # non-trivial running statistics for the inference-mode BatchNorms
            for bn in (model.bn1, model.bn2):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2)
        path, files, want = self.export("video_speech", model, [torch.randn(2, 8, 5, 9, 10)])
        self.check(self.msame(path, files, "video_speech_ref"), want, 1e-4, "Conv3d block + Conv1d, .onnx reference path")
        self.check_om_modes("video_speech", path, files, want, {"must_keep_origin_dtype": 1e-4, "force_fp16": 3e-2},
                            "Conv3d block + Conv1d")

    def test_conv_transpose_2d_fp32_and_fp16(self):
        torch.manual_seed(6)
        model = GeneratorNet()
        with torch.no_grad():
            model.bn.running_mean.uniform_(-0.5, 0.5)
            model.bn.running_var.uniform_(0.5, 2)
        path, files, want = self.export("generator", model, [torch.randn(2, 32, 6, 7)])
        self.check(self.msame(path, files, "generator_ref"), want, 1e-4, "ConvTranspose2d, .onnx reference path")
        self.check_om_modes("generator", path, files, want, {"must_keep_origin_dtype": 1e-4, "force_fp16": 3e-2}, "ConvTranspose2d")

    def test_float64_conv_pool_norm(self):
        torch.manual_seed(1)
        model = Float64Net().double()
        with torch.no_grad():  # non-trivial running statistics for the inference-mode BatchNorm
            model.bn.running_mean.uniform_(-1, 1)
            model.bn.running_var.uniform_(0.5, 2)
        # opset 17, so LayerNorm is exported as LayerNormalization rather than decomposed
        path, files, want = self.export("float64", model, [torch.randn(2, 3, 16, 16, dtype=torch.float64)], opset=17)
        self.assertEqual(want.dtype, np.float64)
        self.check(self.msame(path, files, "float64"), want, 1e-10, "float64 conv/pool/norm")

    def test_lstm_and_gru_reference_and_om(self):
        torch.manual_seed(4)
        path, files, want = self.export("recurrent", RecurrentNet(), [torch.randn(3, 10, 12)])
        self.check(self.msame(path, files, "recurrent_ref"), want, 1e-5, "LSTM + GRU, .onnx reference path")
        self.check_om_modes("recurrent", path, files, want, {"must_keep_origin_dtype": 1e-5, "force_fp16": 3e-3}, "LSTM + GRU")

    def test_einsum_diagonal_and_three_operands(self):
        torch.manual_seed(2)
        inputs = [torch.randn(3, 4, 4), torch.randn(3, 4, 5), torch.randn(3, 5, 6)]
        path, files, want = self.export("einsum", EinsumNet(), inputs)
        self.check(self.msame(path, files, "einsum"), want, 1e-4, "einsum")

    def test_resize_uint8_and_float64(self):
        torch.manual_seed(3)
        x8 = torch.randint(0, 256, (1, 3, 5, 7), dtype=torch.uint8)
        path, files, want = self.export("resize_u8", ResizeNet("nearest", 2.0), [x8])
        self.check(self.msame(path, files, "resize_u8"), want, 0, "Resize nearest, uint8")
        x64 = torch.randn(2, 3, 5, 7, dtype=torch.float64)
        path, files, want = self.export("resize_f64", ResizeNet("bilinear", 1.5), [x64])
        self.check(self.msame(path, files, "resize_f64"), want, 1e-12, "Resize linear, float64")


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=2)
