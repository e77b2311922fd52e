#!/usr/bin/python3
"""msame on an int8 resnet50 against ONNX Runtime running the same model as QDQ, in one run on one machine.

resnet50 (torchvision, random weights) is quantized by examples/quantize.py into AMCT's deploy layout and into
QDQ with the same factors; atc converts the deploy form for Ascend910B1; msame runs it and ONNX Runtime
(onnxruntime-node, as bench_ort.py fetches it) runs the QDQ form, with the same input and intra-op threads,
interleaved, three rounds, the median round counts.
usage: bench_int8.py BUILD_DIR [THREADS...]"""
import os
import subprocess
import sys
import tempfile

import bench_ort as b

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    module = b.ort_module()
    work = tempfile.mkdtemp(prefix="npukit_bench_int8_")
    subprocess.run(["/usr/bin/python3", os.path.join(b.ROOT, "tests/e2e/export_calibration_models.py"), work, "resnet50"], check=True)
    prefix = os.path.join(work, "r50")
    subprocess.run(["/usr/bin/python3", os.path.join(b.ROOT, "examples/quantize.py"), os.path.join(work, "resnet50.onnx"), prefix,
                    "--msame", b.MSAME, "--calib", "4"], check=True, capture_output=True)
    om = os.path.join(work, "r50_int8")
    subprocess.run([b.ATC, "--framework=5", f"--model={prefix}_deploy.onnx", f"--output={om}", "--soc_version=Ascend910B1",
                    "--input_shape=input:1,3,224,224"], check=True, capture_output=True)
    inputs, spec = b.inputs_for("resnet50", work)
    print(f"int8 resnet50, batch 1: msame (AMCT deploy form, Ascend910B1) vs ONNX Runtime {b.ORT_VERSION} on the QDQ form, "
          f"median of {b.LOOPS} in-process runs, median of {b.ROUNDS} interleaved rounds")
    for threads in b.THREADS:
        rounds = []
        for _ in range(b.ROUNDS):
            ms, _ = b.msame_once(om + ".om", inputs, threads)
            ort, _ = b.ort_once(module, prefix + "_qdq.onnx", spec, threads)
            rounds.append((ms / ort, ms, ort))
        ratio, ms, ort = sorted(rounds)[len(rounds) // 2]
        print(f"threads {threads}: msame {ms:8.2f} ms   ORT {ort:8.2f} ms   ratio {ratio:.2f}x (issue 38 target <= 1.25x)", flush=True)


if __name__ == "__main__":
    main()
