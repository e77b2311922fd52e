#!/usr/bin/python3
"""Exports torchvision models with random weights to ONNX, plus an input and PyTorch's CPU output.
BatchNorm running statistics are calibrated on random batches first, as training would set them: with the
default statistics (mean 0, var 1) activations shrink layer by layer (mobilenet_v2's logits end near 1e-9, below
fp16's smallest subnormal), which no trained model does.

usage: export_models.py OUT_DIR MODEL[:OPSET] ...   e.g. resnet18:13
Writes OUT_DIR/<model>_op<opset>.onnx, <model>_input.npy and <model>_op<opset>_torch.npy.
"""
import os
import sys

import numpy as np
import torch
import torchvision


def calibrate_batchnorm(model, batches=4):
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(8, 3, 224, 224, generator=g))


def export(out_dir, name, opset):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    calibrate_batchnorm(model)
    model.eval()
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((1, 3, 224, 224), dtype=np.float32))
    base = os.path.join(out_dir, f"{name}_op{opset}")
    torch.onnx.export(model, x, base + ".onnx", opset_version=opset, input_names=["input"], output_names=["output"])
    with torch.no_grad():
        y = model(x).numpy()
    np.save(os.path.join(out_dir, f"{name}_input.npy"), x.numpy())
    np.save(base + "_torch.npy", y)


if __name__ == "__main__":
    torch.set_num_threads(2)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[2:]:
        name, _, opset = spec.partition(":")
        export(out, name, int(opset or 13))
