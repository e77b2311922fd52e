#!/usr/bin/python3
"""make examples: the inputs the docs' examples use, in one folder (default build/examples), so that every
example in README.md and docs/*.md runs as written from inside it.

    resnet18.onnx        torchvision resnet18 (random weights, BatchNorm statistics calibrated), input "input"
    mobilenet_v2.onnx    torchvision mobilenet_v2, the same way: a second model (aoe --model_path, batch jobs)
    x.npy, x.bin         one 1x3x224x224 fp32 input for either (the .bin is the same bytes, raw)
    images/              three inputs, one .npy each (msame --input DIR)
    acl.json             msame's profiling config (PROF_* under prof/); dump.json: dump every op under dump/
    a3c_pong_model.pb, a3c_pong_model.om, s.npy      a TensorFlow net and the .om CANN's ATC built from it
    lenet.prototxt, lenet.caffemodel, digits.npy     a Caffe net and a batch of inputs
    net.air, net_x.npy   a small CNN as MindSpore AIR (GE IR written by Python protobuf classes)
    train_project/       a small PyTorch GPU training project (three files) for transplt
    examples             a link to this folder (the README's tour uses examples/tinynet.onnx, examples/quantize.py)

usage: make_examples.py [OUT_DIR]     Requires Debian's python3-torch, python3-torchvision and python3-onnx.
"""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
DATA = os.path.join(SOURCE, "tests", "data")  # real files made outside npukit (tests/data/README.md)

TRAIN_PROJECT = {
    "train.py": '''"""Trains a small classifier on random data, on the first GPU."""
import argparse

import torch
from torch import nn

from model import Net
from utils import accuracy, make_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--gpu", type=int, default=0)
    args = parser.parse_args()
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    torch.cuda.set_device(args.gpu)
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    loader = make_loader(batch_size=16)
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.to(device), y.cuda(non_blocking=True)
            with torch.cuda.amp.autocast():
                loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        torch.cuda.synchronize()
        print(f"epoch {epoch}: loss {loss.item():.4f}, accuracy {accuracy(model(x), y):.2f}")
    torch.save(model.state_dict(), "net.pth")


if __name__ == "__main__":
    main()
''',
    "model.py": '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(self.features(x))
''',
    "utils.py": '''import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(batch_size):
    x = torch.randn(64, 3, 32, 32)
    y = torch.randint(0, 10, (64,))
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True, pin_memory=True)


def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()
''',
}


def calibrate_batchnorm(model, torch):
    """Running statistics from a few random batches, as training would set them (the defaults shrink the
    activations of a deep net toward fp16's subnormals, which no trained model does)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, 3, 224, 224, generator=g))
    model.eval()


def torchvision_models(out):
    import torch
    import torchvision
    torch.set_num_threads(2)
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224), dtype=np.float32)
    for name in ("resnet18", "mobilenet_v2"):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(model, torch)
        torch.onnx.export(model, torch.from_numpy(x), os.path.join(out, name + ".onnx"), opset_version=13,
                          input_names=["input"], output_names=["output"])
    np.save(os.path.join(out, "x.npy"), x)
    x.tofile(os.path.join(out, "x.bin"))
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    rng = np.random.default_rng(2)
    for i in range(3):
        np.save(os.path.join(out, "images", f"{i}.npy"), rng.standard_normal((1, 3, 224, 224), dtype=np.float32))


def real_models(out):
    if not os.path.isdir(DATA):
        print("examples: no TensorFlow, Caffe or CANN .om files (they are in the source tree's tests/data)")
        return
    for rel in ("tf/a3c_pong_model.pb", "om/a3c_pong_model.om", "caffe/lenet.prototxt", "caffe/lenet.caffemodel"):
        shutil.copyfile(os.path.join(DATA, rel), os.path.join(out, os.path.basename(rel)))
    rng = np.random.default_rng(3)
    np.save(os.path.join(out, "s.npy"), rng.random((1, 42, 42, 1), dtype=np.float32))
    np.save(os.path.join(out, "digits.npy"), rng.random((64, 1, 28, 28), dtype=np.float32))


def air_model(out):
    if not os.path.isdir(os.path.join(SOURCE, "tests", "frontends")):
        print("examples: no net.air (its writer is in the source tree's tests/frontends, not installed)")
        return
    sys.path.insert(0, os.path.join(SOURCE, "tests", "frontends"))
    import airgraph  # the test suite's AIR writer: GE IR from Python protobuf classes, not npukit's own code
    with tempfile.TemporaryDirectory() as work:
        airgraph.cnn(airgraph.load_pb2(work), work)
        shutil.copyfile(os.path.join(work, "air_cnn.air"), os.path.join(out, "net.air"))
    np.save(os.path.join(out, "net_x.npy"), np.random.default_rng(4).standard_normal((1, 3, 16, 16), dtype=np.float32))


def configs(out):
    files = {
        "acl.json": '{"profiler": {"switch": "on", "output": "prof", "aic_metrics": "PipeUtilization", "aicpu": "on"}}\n',
        "dump.json": '{"dump": {"dump_path": "dump", "dump_list": [], "dump_mode": "all"}}\n',
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    project = os.path.join(out, "train_project")
    os.makedirs(project, exist_ok=True)
    for name, text in TRAIN_PROJECT.items():
        with open(os.path.join(project, name), "w") as f:
            f.write(text)


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SOURCE, "build", "examples"))
    os.makedirs(out, exist_ok=True)
    configs(out)
    if not os.path.lexists(os.path.join(out, "examples")):  # the README's tour names examples/tinynet.onnx
        os.symlink(HERE, os.path.join(out, "examples"))
    real_models(out)
    air_model(out)
    if not os.path.exists(os.path.join(out, "mobilenet_v2.onnx")):  # the slow part: only once per folder
        torchvision_models(out)
    print(f"examples: {len(os.listdir(out))} entries in {out}")


if __name__ == "__main__":
    main()
