#!/usr/bin/python3
"""Exports the model families outside the zoo that `bench_ort.py BUILD families` measures (issue 54): shapes of work
the image classifiers do not have. Random weights: speed depends on shapes and dtypes only.

usage: export_families.py OUT_DIR NAME...   (the names of FAMILIES below)
       export_families.py --specs            (prints {name: [input spec, int64 bound or null]} as JSON)
Writes OUT_DIR/<name>.onnx unless it exists."""
import json
import os
import sys

import torch
from torch import nn
import torchvision


class PointNet(nn.Module):
    """PointNet's shared per-point MLP: five pointwise Conv1d with BatchNorm and ReLU, a max over the points."""

    def __init__(self):
        super().__init__()
        widths, layers = [3, 64, 64, 64, 128, 1024], []
        for a, b in zip(widths, widths[1:]):
            layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return torch.max(self.mlp(x), 2)[0]


class Wav2Vec2Features(nn.Module):
    """wav2vec2's feature extractor: seven strided Conv1d of 512 channels, GroupNorm after the first, GELU."""

    def __init__(self):
        super().__init__()
        layers = [nn.Conv1d(1, 512, 10, 5, bias=False), nn.GroupNorm(512, 512), nn.GELU()]
        for k, s in [(3, 2)] * 4 + [(2, 2)] * 2:
            layers += [nn.Conv1d(512, 512, k, s, bias=False), nn.GELU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class Conv1dStack(nn.Module):
    """A TTS post-net-like stack: four Conv1d of kernel 5 (one dilated) over 1000 frames."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(80, 256, 5, padding=2), nn.ReLU(), nn.Conv1d(256, 256, 5, padding=2), nn.ReLU(),
                                 nn.Conv1d(256, 256, 3, padding=2, dilation=2), nn.ReLU(), nn.Conv1d(256, 80, 5, padding=2))

    def forward(self, x):
        return self.net(x)


class BiRnn(nn.Module):
    """Two bidirectional layers of hidden 256 over 200 steps of 128 features (batch first)."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(128, 256, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class TextGru(nn.Module):
    """A text classifier: an embedding of 30000 words, a bidirectional GRU, a Linear on the last step."""

    def __init__(self):
        super().__init__()
        self.embed, self.rnn, self.fc = nn.Embedding(30000, 300), nn.GRU(300, 256, batch_first=True, bidirectional=True), nn.Linear(512, 5)

    def forward(self, x):
        return self.fc(self.rnn(self.embed(x))[0][:, -1])


class ConformerBlock(nn.Module):
    """A Conformer block (d 256): half-step feed-forwards, self-attention, a GLU and depthwise Conv1d of 31 taps."""

    def __init__(self, d=256):
        super().__init__()
        ff = lambda: nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ff1, self.ff2, self.ln_att, self.ln_conv, self.ln_out = ff(), ff(), nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, 4, batch_first=True)
        self.pw1, self.glu, self.dw = nn.Conv1d(d, 2 * d, 1), nn.GLU(1), nn.Conv1d(d, d, 31, padding=15, groups=d)
        self.bn, self.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        h = self.ln_att(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        c = self.ln_conv(x).transpose(1, 2)
        c = self.pw2(nn.functional.silu(self.bn(self.dw(self.glu(self.pw1(c))))))
        x = x + c.transpose(1, 2)
        return self.ln_out(x + 0.5 * self.ff2(x))


class TransformerDecoder(nn.Module):
    """Two nn.TransformerDecoderLayer (d 512, 8 heads) over 128 tokens, cross-attending to the first 64."""

    def __init__(self):
        super().__init__()
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(512, 8, 2048, batch_first=True), 2)

    def forward(self, x):
        return self.dec(x, x[:, :64])


class Mlp(nn.Module):
    """A recommender's tower: four Linear layers on a batch of 256."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 256), nn.ReLU(),
                                 nn.Linear(256, 1))

    def forward(self, x):
        return self.net(x)


class DcganGenerator(nn.Module):
    """DCGAN's generator: five ConvTranspose2d 4x4 from a 100-vector to 64 x 64 x 3."""

    def __init__(self):
        super().__init__()
        layers, channels = [], [100, 512, 256, 128, 64]
        for i, (a, b) in enumerate(zip(channels, channels[1:])):
            layers += [nn.ConvTranspose2d(a, b, 4, 1 if i == 0 else 2, 0 if i == 0 else 1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, x):
        return self.net(x)


# name: (model factory, input spec as atc's --input_shape takes it, int64 input values below this bound or None)
FAMILIES = {
    "pointnet": (PointNet, "input:4,3,2500", None),
    "wav2vec2_features": (Wav2Vec2Features, "input:1,1,16000", None),
    "conv1d_stack": (Conv1dStack, "input:1,80,1000", None),
    "bilstm": (lambda: BiRnn(nn.LSTM), "input:1,200,128", None),
    "bigru": (lambda: BiRnn(nn.GRU), "input:1,200,128", None),
    "text_gru": (TextGru, "input:4,120", 30000),
    "conformer_block": (ConformerBlock, "input:1,400,256", None),
    "transformer_decoder": (TransformerDecoder, "input:1,128,512", None),
    "mlp_batch256": (Mlp, "input:256,512", None),
    "dcgan_generator": (DcganGenerator, "input:1,100,1,1", None),
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None), "input:1,3,8,112,112", None),
}


def export(out_dir, name):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    factory, spec, vocab = FAMILIES[name]
    shape = [int(d) for d in spec.split(":")[1].split(",")]
    x = torch.randint(0, vocab, shape) if vocab else torch.zeros(shape)
    tmp = path + ".tmp"
    torch.onnx.export(factory().eval(), x, tmp, opset_version=14, input_names=["input"], output_names=["output"])
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    if sys.argv[1:] == ["--specs"]:  # for bench_ort.py, which must not import torch: a child forked from a process
        # holding torch reports torch's pages in its own peak RSS
        print(json.dumps({name: [spec, vocab] for name, (_, spec, vocab) in FAMILIES.items()}))
        sys.exit(0)
    torch.set_num_threads(2)
    os.makedirs(sys.argv[1], exist_ok=True)
    for n in sys.argv[2:]:
        export(sys.argv[1], n)
