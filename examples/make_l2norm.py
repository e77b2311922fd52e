#!/usr/bin/python3
"""Writes l2norm.onnx (a conv feature extractor with channel-wise L2 normalisation, as embedding heads do) and
l2norm_input.npy. Its sum of squares reaches ~2e5: correct in fp32, past fp16's 65504.
usage: make_l2norm.py OUT_DIR"""
import os
import sys

import numpy as np
import torch


class L2NormHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 64, 3, padding=1)
        self.act = torch.nn.ReLU()
        self.proj = torch.nn.Conv2d(64, 64, 1)

    def forward(self, x):
        f = self.proj(self.act(self.conv(x)))
        return f / f.pow(2).sum(dim=1, keepdim=True).sqrt()


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    net = L2NormHead().eval()
    with torch.no_grad():
        net.conv.weight.mul_(40)  # features of magnitude ~150, as an unnormalised backbone gives
        net.proj.weight.mul_(4)
    x = torch.randn(1, 3, 16, 16)
    torch.onnx.export(net, x, os.path.join(out, "l2norm.onnx"), opset_version=13, input_names=["image"], output_names=["embedding"])
    np.save(os.path.join(out, "l2norm_input.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "l2norm_torch.npy"), net(x).numpy())
