#!/usr/bin/python3
"""Exports the models of the calibration test (test_calibration.py, whose rows cite their ModelZoo READMEs) with random weights and a dynamic batch axis, for
the cost model's calibration test (timing depends on shapes and dtypes only, so random weights are faithful).

usage: export_calibration_models.py OUT_DIR NAME...   (resnet18, resnet101, vgg16, bert_base, encoder, gpt_block,
convnext_tiny_fb, swin_t_tokens, mobilenet_v1, repvgg_a0, vit_base_patch{8,16,32}_{224,384}_b<batch> (a fixed
batch), or any torchvision classifier)
       export_calibration_models.py OUT_DIR -        (names on stdin, one a line; each answered with its path on stdout
                                                     once written, so a caller can use and delete one model at a time)
Writes OUT_DIR/<name>.onnx unless it exists.
"""
import math
import os
import re
import sys

import torch
import torchvision


class BertLayer(torch.nn.Module):
    """One BERT-base encoder layer written out as HuggingFace's exports it: Q/K/V projections, scaled
    dot-product attention with an additive mask, output projection, residual + LayerNorm, erf-GELU FFN."""

    def __init__(self, d=768, heads=12, ff=3072):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = torch.nn.LayerNorm(d, eps=1e-12), torch.nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3)
        ctx = ctx.reshape(x.shape[0], x.shape[1], -1)
        x = self.ln1(x + self.o(ctx))
        h = self.ff1(x)
        h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
        return self.ln2(x + self.ff2(h))


class BertQA(torch.nn.Module):
    """bert-base-uncased shape (L=12, H=768, A=12, vocab 30522) with a SQuAD span head (start/end logits)."""

    def __init__(self, layers=12, d=768, vocab=30522, max_pos=512, heads=12, ff=3072):
        super().__init__()
        self.word, self.pos, self.segment = torch.nn.Embedding(vocab, d), torch.nn.Embedding(max_pos, d), torch.nn.Embedding(2, d)
        self.ln = torch.nn.LayerNorm(d, eps=1e-12)
        self.layers = torch.nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        self.qa = torch.nn.Linear(d, 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(positions) + self.segment(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        start, end = self.qa(x).split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)


class GptBlock(torch.nn.Module):
    """One GPT-2-style decoder block (d=768, 12 heads): pre-LayerNorm, fused QKV projection, causal attention (a
    lower-triangular mask, -inf above the diagonal), tanh-GELU MLP, two residuals. Input: (batch, seq, d) states."""

    def __init__(self, d=768, heads=12, seq=256):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (t.view(b, s, self.heads, self.dh).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(d, dim=2))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = scores.masked_fill(~self.causal[:s, :s], float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(ctx)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class ChannelsFirstNorm(torch.nn.Module):
    """facebookresearch/ConvNeXt's LayerNorm over the channels of an NCHW map, written out (mean, variance, scale)."""

    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight, self.bias, self.eps = torch.nn.Parameter(torch.ones(c)), torch.nn.Parameter(torch.zeros(c)), eps

    def forward(self, x):
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        return self.weight[:, None, None] * ((x - mean) / torch.sqrt(var + self.eps)) + self.bias[:, None, None]


class ConvNeXtBlock(torch.nn.Module):
    """A ConvNeXt block as facebookresearch/ConvNeXt writes it: 7x7 depthwise conv, then channels-last LayerNorm and
    the two Linear layers on the (N, H, W, C) map, a per-channel scale, and the residual."""

    def __init__(self, c):
        super().__init__()
        self.dwconv, self.norm = torch.nn.Conv2d(c, c, 7, padding=3, groups=c), torch.nn.LayerNorm(c, eps=1e-6)
        self.pwconv1, self.pwconv2 = torch.nn.Linear(c, 4 * c), torch.nn.Linear(4 * c, c)
        self.gamma = torch.nn.Parameter(torch.full((c,), 1e-6))

    def forward(self, x):
        y = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        y = self.gamma * self.pwconv2(torch.nn.functional.gelu(self.pwconv1(y)))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtTiny(torch.nn.Module):
    """ConvNeXt-T as the ModelZoo guide exports it (facebookresearch/ConvNeXt, not torchvision's: its stem and
    downsampling norms are ChannelsFirstNorm, not a LayerNorm between two transposes)."""

    def __init__(self, depths=(3, 3, 9, 3), dims=(96, 192, 384, 768)):
        super().__init__()
        layers = [torch.nn.Conv2d(3, dims[0], 4, stride=4), ChannelsFirstNorm(dims[0])]
        for i, (depth, c) in enumerate(zip(depths, dims)):
            if i:
                layers += [ChannelsFirstNorm(dims[i - 1]), torch.nn.Conv2d(dims[i - 1], c, 2, stride=2)]
            layers += [ConvNeXtBlock(c) for _ in range(depth)]
        self.features = torch.nn.Sequential(*layers)
        self.norm, self.head = torch.nn.LayerNorm(dims[-1], eps=1e-6), torch.nn.Linear(dims[-1], 1000)

    def forward(self, x):
        return self.head(self.norm(self.features(x).mean([2, 3])))


def swin_t_tokens():
    """torchvision's swin_t with the MLP and the patch merging on (N, H*W, C) tokens, as microsoft/Swin-Transformer
    (the ModelZoo guide's model) runs them; torchvision runs them on the (N, H, W, C) map. The attention is the same."""
    from torchvision.models import swin_transformer as swin

    class Block(swin.SwinTransformerBlock):
        def forward(self, x):
            b, h, w, c = x.shape
            x = x + self.stochastic_depth(self.attn(self.norm1(x)))
            t = x.reshape(b, h * w, c)
            return (t + self.stochastic_depth(self.mlp(self.norm2(t)))).reshape(b, h, w, c)

    class Merging(swin.PatchMerging):
        def forward(self, x):
            x = swin._patch_merging_pad(x)
            b, h, w, c4 = x.shape
            return self.reduction(self.norm(x.reshape(b, h * w, c4))).reshape(b, h, w, -1)

    return swin.SwinTransformer(patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24],
                                window_size=[7, 7], stochastic_depth_prob=0.2, block=Block, downsample_layer=Merging)


class VitBlock(torch.nn.Module):
    """A pre-LayerNorm ViT encoder block (timm's vision_transformer) on the guide's padded 2-D token matrix: the
    LayerNorms, Linears and residuals run on (batch x padded tokens, d), the attention on the unpadded tokens."""

    def __init__(self, d=768, heads=12):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(d, eps=1e-6), torch.nn.LayerNorm(d, eps=1e-6)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x, batch, tokens, pad):
        d = x.shape[-1]
        qkv = self.qkv(self.norm1(x))[: batch * tokens].reshape(batch, tokens, 3, self.heads, d // self.heads)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.softmax(q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5, dim=-1)
        x = x + torch.cat([self.proj((attn @ v).transpose(1, 2).reshape(batch * tokens, d)), pad], 0)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))


class VitBase(torch.nn.Module):
    """ViT-Base (12 blocks, width 768, 12 heads) as the ModelZoo ViT_base guide converts timm's vit_base_patch*:
    exported at a fixed batch, then its opt_vit.py merges the token axis into the rows of 2-D matrices and pads the
    tokens of each image (197 at patch 16) to a multiple of 16 outside the attention."""

    def __init__(self, patch, size, d=768, depth=12):
        super().__init__()
        self.embed = torch.nn.Conv2d(3, d, patch, stride=patch)
        self.tokens = (size // patch) ** 2 + 1
        self.pad = -self.tokens % 16
        self.cls = torch.nn.Parameter(torch.zeros(1, 1, d))
        self.pos = torch.nn.Parameter(torch.zeros(1, self.tokens, d))
        self.blocks = torch.nn.ModuleList(VitBlock(d) for _ in range(depth))
        self.norm, self.head = torch.nn.LayerNorm(d, eps=1e-6), torch.nn.Linear(d, 1000)

    def forward(self, image):
        b, t = image.shape[0], self.tokens
        x = torch.cat([self.cls.expand(b, -1, -1), self.embed(image).flatten(2).transpose(1, 2)], 1)
        d = x.shape[-1]
        pad = torch.zeros(b * self.pad, d)
        x = torch.cat([x.reshape(b * t, d), pad], 0) + torch.cat([self.pos.expand(b, -1, -1).reshape(b * t, d), pad], 0)
        for block in self.blocks:
            x = block(x, b, t, pad)
        return self.head(self.norm(x[: b * t].reshape(b, t, d))[:, 0])


class MobileNetV1(torch.nn.Module):
    """MobileNet v1 (width 1.0) as the ModelZoo MobileNet-v1 guide defines it: a 3x3 conv, then 13 depthwise 3x3 +
    pointwise 1x1 pairs, each conv followed by BatchNorm and ReLU, a 7x7 average pool and the classifier."""

    def __init__(self):
        super().__init__()
        widths = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)]
        widths += [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
        layers = self.conv(3, 32, 3, 2)
        for cin, cout, stride in widths:
            layers += self.conv(cin, cin, 3, stride, groups=cin) + self.conv(cin, cout, 1, 1)
        self.features = torch.nn.Sequential(*layers, torch.nn.AvgPool2d(7))
        self.fc = torch.nn.Linear(1024, 1000)

    @staticmethod
    def conv(cin, cout, k, stride, groups=1):
        return [torch.nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), torch.nn.BatchNorm2d(cout),
                torch.nn.ReLU()]

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class RepVggBlock(torch.nn.Module):
    """A RepVGG block in its training form, as the guide exports it: 3x3 conv + BN, 1x1 conv + BN and (same width,
    stride 1) a BN of the input, summed, then ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        bn = torch.nn.BatchNorm2d
        self.dense = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), bn(cout))
        self.point = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, 0, bias=False), bn(cout))
        self.identity = bn(cin) if cin == cout and stride == 1 else None

    def forward(self, x):
        y = self.dense(x) + self.point(x)
        return torch.relu(y + self.identity(x) if self.identity is not None else y)


class RepVggA0(torch.nn.Module):
    """RepVGG-A0 (DingXiaoH/RepVGG, deploy=False): a stride-2 block of 48, then stages of 2, 4, 14 and 1 blocks of
    48, 96, 192 and 1280 channels, each opening with stride 2, global average pool and the classifier."""

    def __init__(self, depths=(2, 4, 14, 1), widths=(48, 96, 192, 1280)):
        super().__init__()
        blocks, cin = [RepVggBlock(3, 48, 2)], 48
        for depth, width in zip(depths, widths):
            for i in range(depth):
                blocks.append(RepVggBlock(cin, width, 2 if i == 0 else 1))
                cin = width
        self.features, self.fc = torch.nn.Sequential(*blocks), torch.nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(self.features(x).mean([2, 3]))


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation net returns a dict; ONNX export wants its "out" tensor."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def export(out_dir, name):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    tmp = path + ".tmp"
    if name in ("bert_base", "encoder"):  # encoder: a 2-layer d=256 model of the same shape, for quick tests
        model = (BertQA() if name == "bert_base" else BertQA(layers=2, d=256, vocab=1000, heads=4, ff=1024)).eval()
        ids = torch.zeros(1, 128, dtype=torch.int64)
        args = (ids, torch.ones(1, 128, dtype=torch.int64), torch.zeros(1, 128, dtype=torch.int64))
        names = ["input_ids", "attention_mask", "token_type_ids"]
        torch.onnx.export(model, args, tmp, opset_version=13, input_names=names, output_names=["start", "end"],
                          dynamic_axes={n: {0: "batch"} for n in names + ["start", "end"]})
    elif name == "gpt_block":  # seq 256, the states of a GPT-2-small-sized model
        torch.onnx.export(GptBlock().eval(), torch.zeros(1, 256, 768), tmp, opset_version=13, input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    elif name in ("convnext_tiny_fb", "swin_t_tokens"):  # the guides' own definitions, at their opset (11)
        model = (ConvNeXtTiny() if name == "convnext_tiny_fb" else swin_t_tokens()).eval()
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), tmp, opset_version=11 if name == "convnext_tiny_fb" else 13,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    elif vit := re.fullmatch(r"vit_base_patch(8|16|32)_(224|384)_b(\d+)", name):  # a graph fixed to its batch
        patch, size, batch = (int(v) for v in vit.groups())
        torch.onnx.export(VitBase(patch, size).eval(), torch.zeros(batch, 3, size, size), tmp, opset_version=11,
                          input_names=["input"], output_names=["output"])
    elif name in ("mobilenet_v1", "repvgg_a0"):  # the guides' own definitions, at their opset (11)
        model = (MobileNetV1() if name == "mobilenet_v1" else RepVggA0()).eval()
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), tmp, opset_version=11, input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    elif hasattr(torchvision.models.segmentation, name):  # a segmentation net: its "out" map
        model = SegmentationOut(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None).eval())
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), tmp, opset_version=13, input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    else:
        model = getattr(torchvision.models, name)(weights=None).eval()
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), tmp, opset_version=13, input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    torch.set_num_threads(2)
    os.makedirs(sys.argv[1], exist_ok=True)
    if sys.argv[2:] == ["-"]:
        for line in sys.stdin:
            print(export(sys.argv[1], line.strip()), flush=True)
    else:
        for n in sys.argv[2:]:
            export(sys.argv[1], n)
