#!/usr/bin/python3
"""Builds the bundled example: a small CNN classifier (conv-bn-relu blocks, residual add, pooling, gemm,
softmax) with fixed random weights, exported to ONNX opset 13, and a sample input."""
import numpy as np
import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, 1, 1, groups=16), nn.Hardswish())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10), nn.Softmax(dim=1))

    def forward(self, x):
        y = self.stem(x)
        return self.head(y + self.block(y))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyNet().eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 32, 32), dtype=np.float32))
    torch.onnx.export(model, x, "tinynet.onnx", opset_version=13, input_names=["image"], output_names=["probs"])
    np.save("input.npy", x.numpy())
