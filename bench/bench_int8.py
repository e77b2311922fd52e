#!/usr/bin/python3
"""msame on an int8 resnet50 against ONNX Runtime running the same model as QDQ, in one run on one machine.

resnet50 (torchvision, random weights) is quantized by examples/quantize.py into AMCT's deploy layout and into
QDQ with the same factors; atc converts the deploy form for Ascend910B1; msame runs it and ONNX Runtime
(onnxruntime-node, as bench_ort.py fetches it) runs the QDQ form, with the same input and intra-op threads,
interleaved, three rounds, the median round counts. Then the simulated clock: the same int8 model and its force_fp16
build at batch 16 on Ascend310P3, the ratio printed with the spec figures that bound it.
usage: bench_int8.py BUILD_DIR [THREADS...]"""
import atexit
import configparser
import math
import os
import shutil
import subprocess
import sys
import tempfile

import bench_ort as b

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    module = b.ort_module()
    work = tempfile.mkdtemp(prefix="npukit_bench_int8_")
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # its models are large
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
    simulated_int8_vs_fp16(work, prefix)


def simulated_ms(om):
    text = subprocess.run([b.ATC, "--mode=6", f"--om={om}"], check=True, capture_output=True, text=True).stdout
    return float(text.split("Simulated NPU time: ")[1].split(" ms")[0])


def spec_figures(soc):
    """Peak int8 and fp16 cube rates and DDR bandwidth from the SoC spec npukit simulates (each line there cites its source)."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",), strict=False)
    ini.read_string("[top]\n" + open(os.path.join(b.ROOT, "libcore/soc/specs", soc + ".ini")).read())
    flat = {k: v for sec in ini.sections() for k, v in ini[sec].items()}
    cores, ghz = int(flat["ai_core_cnt"]), int(flat["cube_freq"]) / 1000
    macs = lambda row: math.prod(int(v) for v in row.split(","))  # m,k,n of one fractal product
    fp16 = cores * macs(f"{flat['cube_m_size']},{flat['cube_k_size']},{flat['cube_n_size']}") * 2 * ghz / 1000
    int8 = cores * macs(flat["dt_int8"]) * 2 * ghz / 1000
    return fp16, int8, float(flat["memory_bandwidth_gbps"])


def simulated_int8_vs_fp16(work, prefix):
    soc, shape = "Ascend310P3", "input:16,3,224,224"
    i8, f16 = os.path.join(work, "r50_i8_b16"), os.path.join(work, "r50_fp16_b16")
    subprocess.run([b.ATC, "--framework=5", f"--model={prefix}_deploy.onnx", f"--output={i8}", f"--soc_version={soc}", f"--input_shape={shape}"],
                   check=True, capture_output=True)
    subprocess.run([b.ATC, "--framework=5", f"--model={os.path.join(work, 'resnet50.onnx')}", f"--output={f16}", f"--soc_version={soc}",
                    f"--input_shape={shape}", "--precision_mode=force_fp16"], check=True, capture_output=True)
    ms_i8, ms_f16 = simulated_ms(i8 + ".om"), simulated_ms(f16 + ".om")
    fp16_peak, int8_peak, ddr = spec_figures(soc)
    print(f"simulated resnet50, batch 16, {soc}: int8 {ms_i8:.3f} ms, force_fp16 {ms_f16:.3f} ms, ratio {ms_i8 / ms_f16:.2f}x "
          f"(cube peak int8 {int8_peak:.1f} TOPS vs fp16 {fp16_peak:.1f} TFLOPS: 0.5x where cube-bound; DDR {ddr:.1f} GB/s "
          f"for both, and int8 moves half the activation bytes)")


if __name__ == "__main__":
    main()
