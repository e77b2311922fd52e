#!/usr/bin/python3
"""atc's import of a generated 200 MB TensorFlow frozen graph against Python protobuf's ParseFromString of the
same file (Debian's python3-protobuf), in the same run. atc's side is `atc --mode=3` (the pre-check: parse and
convert every node, no SoC work) as a process, so it includes start-up; Python's is the parse alone, the file
already read into memory. usage: bench_tf_import.py BUILD_DIR"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../tests/frontends"))
import tfgraph  # noqa: E402

LAYERS, WIDTH = 50, 1024  # 50 MatMul weights of 1024 x 1024 fp32: 200 MiB


def median(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main():
    build = os.path.abspath(sys.argv[1])
    atc = os.path.join(build, "tools/atc/atc")
    with tempfile.TemporaryDirectory(prefix="npukit-tfbench-") as work:
        pb2 = tfgraph.load_pb2(work)
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [1, WIDTH])
        rng = np.random.default_rng(0)
        for k in range(LAYERS):
            w = b.const(f"w{k}", rng.standard_normal((WIDTH, WIDTH), dtype=np.float32))
            x = b.op("Relu", f"relu{k}", [b.op("MatMul", f"mm{k}", [x, w])])
        path = b.save(os.path.join(work, "big.pb"))
        size_mb = os.path.getsize(path) / 2**20
        data = open(path, "rb").read()
        parse_s = median(lambda: pb2.GraphDef().ParseFromString(data), 5)
        cmd = [atc, "--mode=3", "--framework=3", f"--model={path}", "--soc_version=Ascend310P3", f"--check_report={work}/report.json"]
        subprocess.run(cmd, check=True, capture_output=True)  # warm the page cache
        atc_s = median(lambda: subprocess.run(cmd, check=True, capture_output=True), 5)
        impl = "upb/cpp" if "cpp" in str(type(pb2.GraphDef())) or "upb" in str(type(pb2.GraphDef())) else "python"
        print(f"atc    TF import {size_mb:.0f} MB: {atc_s * 1000:8.1f} ms   protobuf ParseFromString ({impl}): {parse_s * 1000:8.1f} ms   "
              f"ratio atc/ParseFromString = {atc_s / parse_s:.2f} (target <= 1.0, issue 36)")


if __name__ == "__main__":
    main()
