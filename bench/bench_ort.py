#!/usr/bin/python3
"""msame against ONNX Runtime, the peer a user would pick for inference on a CPU, in one run on one machine.

Per model (resnet50, mobilenet_v3_large, efficientnet_b0, a BERT-base encoder at seq 128; batch 1) and per
thread count (1 and 2): msame on the fp32 path (atc --precision_mode=must_keep_origin_dtype) and with the NPU's
fp16 numerics (force_fp16), and ONNX Runtime (onnxruntime-node from the npm registry: it ships the CPU
library; Debian's nodejs runs it) with the same inputs and intra-op threads. Each side reports the median of
its in-process inference times; the sides run interleaved, three rounds: a time is that side's median over the
rounds, a ratio the median of the rounds' own ratios (msame and ONNX Runtime seconds apart, so that a drift of
the machine's speed between rounds cancels). Peak RSS is each process's maximum resident set (rusage).

With `zoo`, the models are instead a zoo of other shapes of work (issues 40 and 54): concat-heavy, grouped and depthwise,
channel shuffles, large kernels, windowed attention, a segmentation head and a GPT-2-style decoder block (causal
attention, seq 256). With `families`, the families outside it (bench/export_families.py: 1-D and 3-D convs,
ConvTranspose, LSTM and GRU, a Conformer block, a transformer decoder, an MLP at batch 256), against the zoo's limits.

usage: bench_ort.py BUILD_DIR [zoo|families] [THREADS...]   (NPUKIT_BENCH_ROUNDS: interleaved rounds per row, 3 by default)"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = sys.argv[1]
ZOO_RUN = "zoo" in sys.argv[2:]
FAMILIES_RUN = "families" in sys.argv[2:]
THREADS = [int(t) for t in sys.argv[2:] if t not in ("zoo", "families")] or [1, 2]
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
ORT_VERSION = "1.30.0"
ORT_DIR = os.path.join(ROOT, ".deps", f"onnxruntime-node-{ORT_VERSION}")
WARMUP, LOOPS = 3, 15
# Interleaved rounds per row; the medians over them are printed. More on a noisy machine.
ROUNDS = int(os.environ.get("NPUKIT_BENCH_ROUNDS", "3"))
MODELS = {"resnet50": "input:1,3,224,224", "mobilenet_v3_large": "input:1,3,224,224",
          "efficientnet_b0": "input:1,3,224,224",
          "bert_base": "input_ids:1,128;attention_mask:1,128;token_type_ids:1,128"}
ZOO = {m: "input:1,3,224,224" for m in ("densenet121", "googlenet", "inception_v3", "squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0",
                                        "regnet_y_800mf", "resnext50_32x4d", "convnext_tiny", "vit_b_16", "swin_t")}
ZOO["lraspp_mobilenet_v3_large"] = "input:1,3,224,224"  # segmentation: bilinear upsampling of the head
ZOO["gpt_block"] = "input:1,256,768"  # one GPT-2-small decoder block, causal attention at seq 256
if ZOO_RUN:
    MODELS = ZOO
INT64_INPUT = {}  # model: the bound of its int64 input's values (an embedding's vocabulary)
if FAMILIES_RUN:  # their table, read from the exporter's process: torch here would swell every child's peak RSS
    FAMILIES = json.loads(subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_families.py"), "--specs"],
                                         check=True, capture_output=True, text=True).stdout)
    MODELS = {name: spec for name, (spec, _) in FAMILIES.items()}
    INT64_INPUT = {name: vocab for name, (_, vocab) in FAMILIES.items() if vocab}


def ort_module():
    """onnxruntime-node, fetched once with npm (its registry, pinned version). The install script only adds the
    CUDA provider, which is not bundled; the CPU library is in the package, so scripts are skipped."""
    module = os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")
    if not os.path.isdir(module):
        os.makedirs(ORT_DIR, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", ORT_DIR, "--ignore-scripts", "--no-audit", "--no-fund",
                        f"onnxruntime-node@{ORT_VERSION}"], check=True, capture_output=True)
    return module


def inputs_for(model, work):
    """The same inputs for both sides: .npy for msame, raw files + a JSON spec for ONNX Runtime."""
    rng = np.random.default_rng(0)
    if model == "bert_base":
        arrays = {"input_ids": rng.integers(0, 30522, (1, 128), dtype=np.int64),
                  "attention_mask": np.ones((1, 128), np.int64), "token_type_ids": np.zeros((1, 128), np.int64)}
    else:  # one input, of the shape given to atc: float, or an embedding's int64 word ids
        name, dims = MODELS[model].split(":")
        shape = tuple(int(d) for d in dims.split(","))
        vocab = INT64_INPUT.get(model)
        arrays = {name: rng.integers(0, vocab, shape, dtype=np.int64) if vocab else rng.standard_normal(shape, dtype=np.float32)}
    npys, spec = [], []
    for name, a in arrays.items():
        base = os.path.join(work, f"{model}_{name}")
        np.save(base + ".npy", a)
        a.tofile(base + ".bin")
        npys.append(base + ".npy")
        spec.append({"name": name, "dtype": str(a.dtype), "shape": list(a.shape), "file": base + ".bin"})
    with open(os.path.join(work, f"{model}_inputs.json"), "w") as f:
        json.dump(spec, f)
    return ",".join(npys), os.path.join(work, f"{model}_inputs.json")


def run_measured(cmd, env):
    """Runs cmd; returns (stdout, peak RSS in MB of that process alone, from its rusage)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        text = out.read()
        if p.returncode != 0:
            raise RuntimeError(f"{cmd} exited {p.returncode}\n{text}\n{err.read()}")
        return text, usage.ru_maxrss / 1024


def msame_once(om, inputs, threads):
    env = {**os.environ, "NPUKIT_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1"}
    out, rss = run_measured([MSAME, f"--model={om}", f"--input={inputs}", f"--loop={WARMUP + LOOPS}", "--log=info"], env)
    times = [float(line.rsplit(" ", 2)[-2]) for line in out.splitlines() if "inference time:" in line]
    return statistics.median(times[WARMUP:]), rss


def ort_once(module, model, spec, threads):
    out, rss = run_measured(["node", os.path.join(HERE, "ort_run.js"), module, model, spec, str(threads), str(WARMUP), str(LOOPS)],
                            dict(os.environ))
    return json.loads(out)["median_ms"], rss


def main():
    module = ort_module()
    # The exported models and their .om files are GBs: gone when the run ends, however it ends.
    with tempfile.TemporaryDirectory(prefix="npukit_bench_ort_") as work:
        run_all(module, work)


def run_all(module, work):
    exporter = os.path.join(HERE, "export_families.py") if FAMILIES_RUN else os.path.join(ROOT, "tests/e2e/export_calibration_models.py")
    subprocess.run(["/usr/bin/python3", exporter, work, *MODELS], check=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"msame vs ONNX Runtime {ORT_VERSION} (onnxruntime-node), batch 1, median of {LOOPS} in-process runs, "
          f"the median of {ROUNDS} interleaved rounds (ratio: the median of the rounds' ratios); {cpu}")
    print(f"{'model':20s} {'thr':>3s} {'msame fp32':>11s} {'ORT':>9s} {'ratio':>6s} {'fp16':>9s} {'ratio':>6s} "
          f"{'RSS msame':>10s} {'RSS ORT':>8s} {'ratio':>6s}")
    ratios = []  # (threads, fp32 / ORT, fp16 / ORT, model) per measured row
    for model, shape in MODELS.items():
        onnx_path = os.path.join(work, model + ".onnx")
        inputs, spec = inputs_for(model, work)
        oms = {}
        for mode in ("must_keep_origin_dtype", "force_fp16"):
            oms[mode] = os.path.join(work, f"{model}_{mode}")
            p = subprocess.run([ATC, "--framework=5", f"--model={onnx_path}", f"--output={oms[mode]}", "--soc_version=Ascend910B1",
                                f"--input_shape={shape}", f"--precision_mode={mode}"], capture_output=True, text=True)
            if p.returncode != 0:  # reported, not skipped silently: the zoo names what npukit cannot convert yet
                print(f"{model:20s} atc failed: " + next((l for l in p.stdout.splitlines() if "E1" in l), p.stdout[-200:]).strip()[:160])
                break
        if len(oms) < 2 or not all(os.path.exists(om + ".om") for om in oms.values()):
            continue
        for threads in THREADS:
            rounds = []
            for _ in range(ROUNDS):  # interleaved: every side sees the same machine state
                fp32, rss32 = msame_once(oms["must_keep_origin_dtype"] + ".om", inputs, threads)
                ort, rss_ort = ort_once(module, onnx_path, spec, threads)
                fp16, _ = msame_once(oms["force_fp16"] + ".om", inputs, threads)
                rounds.append((fp32, ort, fp16, rss32, rss_ort))
            # Each side's time is its median over the rounds; a ratio is the median of the rounds' own ratios, each
            # taken from runs seconds apart, so a drift of the machine's speed between rounds cancels out of it.
            fp32, ort, fp16, rss32, rss_ort = (statistics.median(r[i] for r in rounds) for i in range(5))
            r32, r16 = (statistics.median(r[i] / r[1] for r in rounds) for i in (0, 2))
            ratios.append((threads, r32, r16, model))
            print(f"{model:20s} {threads:3d} {fp32:9.2f}ms {ort:7.2f}ms {r32:5.2f}x {fp16:7.2f}ms {r16:5.2f}x "
                  f"{rss32:8.0f}MB {rss_ort:6.0f}MB {rss32 / rss_ort:5.2f}x", flush=True)
    if ZOO_RUN or FAMILIES_RUN:
        for threads in THREADS:
            rows = [r for r in ratios if r[0] == threads]
            if not rows:
                continue
            for col, name, median_target, worst_target in ((1, "fp32", 0.9, 1.1), (2, "force_fp16", 1.0, 1.25)):
                values = [r[col] for r in rows]
                worst = max(rows, key=lambda r: r[col])
                print(f"{threads} threads, {name}: median {statistics.median(values):.3f}x (target <= {median_target}x), "
                      f"worst {worst[col]:.3f}x {worst[3]} (target <= {worst_target}x)")
        print("targets (issue 54): median model <= 0.9x ONNX Runtime in fp32 and <= 1.0x with force_fp16; "
              "every model <= 1.1x / 1.25x")
        return
    print("targets (issue 14): fp32 <= 1.25x and force_fp16 <= 1.5x ONNX Runtime at 2 threads; peak RSS <= 1.5x")
    # The simulated clock with profiling off: the schedule once per load, the clock's per-inference work.
    for model in MODELS:
        om = os.path.join(work, f"{model}_must_keep_origin_dtype.om")
        env = {**os.environ, "NPUKIT_NUM_THREADS": str(THREADS[-1])}
        print(subprocess.run([os.path.join(BUILD, "tests/clock_overhead"), om], check=True, capture_output=True, text=True, env=env).stdout.strip())
    print("target (issue 14): the clock costs an inference <= 2% when profiling is off")


if __name__ == "__main__":
    main()
