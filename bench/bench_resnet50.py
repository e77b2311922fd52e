#!/usr/bin/python3
"""Benchmarks against the named peers, in one run on the same machine and thread count:
  - msame on resnet50 (batch 1) vs PyTorch CPU inference (torch.set_num_threads(T));
  - atc converting resnet50.onnx vs onnx.load of the same file.
usage: bench_resnet50.py BUILD_DIR [THREADS]"""
import atexit
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torchvision

BUILD = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
LOOPS = 20


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    torch.set_num_threads(THREADS)
    os.environ["NPUKIT_NUM_THREADS"] = str(THREADS)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # avoid oversubscribing torch's own threads
    work = tempfile.mkdtemp(prefix="npukit_bench_")
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # its models are large
    model = torchvision.models.resnet50(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    path = os.path.join(work, "resnet50.onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
    np.save(os.path.join(work, "x.npy"), x.numpy())

    with torch.no_grad():
        for _ in range(3):
            model(x)
        torch_ms = 1000 * median_time(lambda: model(x), LOOPS)

    out_om = os.path.join(work, "resnet50")
    # The fp32 path (must_keep_origin_dtype) is the one PyTorch is measured against; force_fp16 (the NPU numerics:
    # fp16 tensors, each result rounded once) is measured against it.
    atc_cmd = [ATC, "--framework=5", f"--model={path}", f"--output={out_om}", "--soc_version=Ascend910B1",
               "--precision_mode=must_keep_origin_dtype"]
    subprocess.run(atc_cmd, check=True, capture_output=True)  # warm the page cache
    # The disk's writeback of what this script wrote before (the export, the warm-up .om) would land in atc's
    # time on some runs and not others: flushed first. The timed runs' own writeback still counts.
    os.sync()
    atc_s = median_time(lambda: subprocess.run(atc_cmd, check=True, capture_output=True), 5)
    load_s = median_time(lambda: onnx.load(path), 5)

    fp16_om = os.path.join(work, "resnet50_fp16")
    subprocess.run([ATC, "--framework=5", f"--model={path}", f"--output={fp16_om}", "--soc_version=Ascend910B1",
                    "--precision_mode=force_fp16"], check=True, capture_output=True)

    def msame_median(om):
        r = subprocess.run([MSAME, "--model", om, "--input", os.path.join(work, "x.npy"), "--loop", str(LOOPS + 3)],
                           check=True, capture_output=True, text=True)
        return statistics.median([float(m) for m in re.findall(r"inference time: ([0-9.]+) ms", r.stdout)][3:])

    # Interleaved, so both modes see the same machine state.
    fp32_runs, fp16_runs = [], []
    for _ in range(3):
        fp32_runs.append(msame_median(out_om + ".om"))
        fp16_runs.append(msame_median(fp16_om + ".om"))
    msame_ms, fp16_ms = statistics.median(fp32_runs), statistics.median(fp16_runs)

    print(f"threads: {THREADS}, torch {torch.__version__}, resnet50 batch 1, median of {LOOPS}")
    print(f"msame  resnet50: {msame_ms:8.1f} ms   PyTorch CPU: {torch_ms:8.1f} ms   ratio msame/torch = {msame_ms / torch_ms:.2f} (target <= 1.5)")
    print(f"msame  resnet50 force_fp16: {fp16_ms:8.1f} ms   must_keep_origin_dtype: {msame_ms:8.1f} ms   ratio = {fp16_ms / msame_ms:.2f} (target <= 1.5)")
    print(f"atc    resnet50: {atc_s * 1000:8.1f} ms   onnx.load:   {load_s * 1000:8.1f} ms   ratio atc/onnx.load = {atc_s / load_s:.2f} (target <= 1.2, issue 14)")


if __name__ == "__main__":
    main()
