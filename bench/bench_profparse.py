#!/usr/bin/python3
"""profparse on a raw profile of at least 1 GiB, collected the real way (msame --sim_mode=timing with
profiling on, resnet18 on Ascend310P3, many loops), against msprof's stated need (parsing needs RAM of at
least 10x the raw data: msprof's design document, MindStudio Profiler 性能调优特性分析与设计说明书 §2.3.4). Prints raw size, time, MB/s and peak RSS.

usage: bench_profparse.py BUILD_DIR [RAW_GIB]
"""
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1]
RAW_GIB = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
WORK = os.path.join(BUILD, "bench_profparse")
ATC, MSAME, PROFPARSE = (f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "profparse"))


def collect(loops, out):
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PROFILING_MODE": "true", "PROFILING_OPTIONS": '{"output":"%s","aic_metrics":"PipeUtilization"}' % out}
    subprocess.run([MSAME, f"--model={WORK}/resnet18.om", "--sim_mode=timing", f"--loop={loops}"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    prof = glob.glob(f"{out}/PROF_*")[0]
    raw = sum(os.path.getsize(f) for f in glob.glob(f"{prof}/**/*.slice_*", recursive=True) if not f.endswith(".done"))
    return prof, raw


def main():
    os.makedirs(WORK, exist_ok=True)
    subprocess.run(["/usr/bin/python3", f"{HERE}/../tests/e2e/export_calibration_models.py", WORK, "resnet18"], check=True,
                   stderr=subprocess.DEVNULL)
    if not os.path.exists(f"{WORK}/resnet18.om"):
        subprocess.run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/resnet18",
                        "--soc_version=Ascend310P3", "--log=error"], check=True, stdout=subprocess.DEVNULL)
    _, per100 = collect(100, f"{WORK}/probe")
    loops = min(1000000, int(1.02 * RAW_GIB * (1 << 30) / (per100 / 100)) + 1)  # 2% over: the probe counts static files too
    t0 = time.time()
    prof, raw = collect(loops, f"{WORK}/prof")
    collect_s = time.time() - t0
    # A helper process runs profparse alone, so its children's peak RSS is profparse's.
    probe = ("import resource, subprocess, sys, time; t = time.time(); subprocess.run(sys.argv[1:], check=True, "
             "stdout=subprocess.DEVNULL); print(time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    res = subprocess.run(["/usr/bin/python3", "-c", probe, PROFPARSE, "--export=on", f"--output={prof}"], check=True,
                         capture_output=True, text=True).stdout.split()
    seconds, rss_mb = float(res[0]), int(res[1]) / 1024
    out = sum(os.path.getsize(f) for f in glob.glob(f"{prof}/mindstudio_profiler_output/*"))
    mb = raw / 1e6
    print(f"profparse: raw profile {raw / (1 << 30):.2f} GiB ({loops} iterations of resnet18, collected in {collect_s:.1f} s) "
          f"exported in {seconds:.1f} s = {mb / seconds:.0f} MB/s; {out / (1 << 30):.2f} GiB written; "
          f"peak RSS {rss_mb:.0f} MB (msprof's stated need: >= {10 * raw / (1 << 20):.0f} MB, 10x the raw data; "
          f"ratio {10 * raw / (1 << 20) / rss_mb:.0f}x less)")
    shutil.rmtree(f"{WORK}/prof", ignore_errors=True)


if __name__ == "__main__":
    main()
