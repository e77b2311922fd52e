#!/usr/bin/python3
"""msaccucmp compare vs a numpy implementation of the same 10 metrics, on the same >= 1 GB of dump data
(fp32 and fp16 tensors of mixed sizes) against golden .npy files. Prints throughput, ratio and peak memory. Then the
same compare as a 4-task Slurm array + merge (npukit-slurm, on a single-node cluster of its own, as
tests/e2e/test_slurm.py brings up; needs root) beside the single process with the same total threads.
usage: bench_msaccucmp.py BUILD_DIR [GB]"""
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "msaccucmp"))
import dumpgen as dg  # noqa: E402

build = sys.argv[1]
gb = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
work = tempfile.mkdtemp(prefix="npukit_bench_cmp_")
pb = dg.load_proto(os.path.join(HERE, ".."), os.path.join(work, "proto"))
npu, gold = os.path.join(work, "npu"), os.path.join(work, "gold")
os.makedirs(npu); os.makedirs(gold)
rng = np.random.default_rng(0)
sizes = [1 << 22] * 8 + [1 << 20] * 64 + [1 << 16] * 512  # elements: big, medium, many small
total, k = 0, 0
while total < gb * (1 << 30):
    n = sizes[k % len(sizes)]
    dt = np.float16 if k % 3 == 0 else np.float32
    y = rng.standard_normal(n, dtype=np.float32).astype(dt)
    x = (y + rng.standard_normal(n, dtype=np.float32).astype(dt) * dt(1e-3)).astype(dt)
    dg.write_dump(pb, f"{npu}/Mul.op{k}.{k}.0.{k + 1}", f"op{k}", outputs=[{"arr": x}], original=f"op{k}")
    np.save(f"{gold}/op{k}.0.{k + 1}.npy", y)
    total += x.nbytes
    k += 1
print(f"data: {k} tensor pairs, {total / 2**30:.2f} GiB of NPU dump data + the same of golden data")

NUMPY_IMPL = r'''
import glob, os, sys, numpy as np
sys.path.insert(0, sys.argv[3])
import dumpgen as dg
npu, gold = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(npu + "/Mul.*")):
    raw = np.memmap(f, np.uint8, mode="r")
    hlen = int(raw[:8].view(np.uint64)[0])
    name = os.path.basename(f).split(".")[1]
    (g,) = glob.glob(f"{gold}/{name}.0.*.npy")
    y = np.load(g, mmap_mode="r")
    x = np.frombuffer(raw, dtype=y.dtype, offset=8 + hlen)
    dg.reference_metrics(x, y)
'''


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def peak_of(cmd):  # peak RSS of one child, measured in a fresh helper so children don't mix
    code = ("import resource,subprocess,sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run(["/usr/bin/python3", "-c", code, *cmd], check=True, capture_output=True, text=True).stdout
    return int(out.split()[-1]) / 1024


cmp_cmd = [os.path.join(build, "tools/msaccucmp/msaccucmp"), "compare", "-m", npu, "-g", gold, "-out", os.path.join(work, "out")]
np_cmd = ["/usr/bin/python3", "-c", NUMPY_IMPL, npu, gold, os.path.join(HERE, "..", "tests", "msaccucmp")]
# Warm the page cache once so both read from memory, then time each twice and keep the better run.
subprocess.run(["cat", *glob.glob(npu + "/*"), *glob.glob(gold + "/*")], stdout=subprocess.DEVNULL, check=True)
t_cmp = min(timed(cmp_cmd) for _ in range(2))
t_np = min(timed(np_cmd) for _ in range(2))
m_cmp, m_np = peak_of(cmp_cmd), peak_of(np_cmd)
data_gb = 2 * total / 1e9  # both sides are read
largest_pair_mb = 2 * (1 << 22) * 4 / 2**20
print(f"msaccucmp compare : {t_cmp:7.2f} s  {data_gb / t_cmp:6.2f} GB/s  peak RSS {m_cmp:7.0f} MiB")
print(f"numpy (10 metrics): {t_np:7.2f} s  {data_gb / t_np:6.2f} GB/s  peak RSS {m_np:7.0f} MiB")
print(f"ratio: msaccucmp is {t_np / t_cmp:.1f}x numpy (target >= 5x); largest tensor pair {largest_pair_mb:.0f} MiB, "
      f"threads {os.environ.get('NPUKIT_NUM_THREADS', os.cpu_count())}")


def slurm_compare():
    """Wall time of the same compare as 4 shards on Slurm + the merge, against the single process above."""
    if os.geteuid() != 0 or not shutil.which("slurmctld"):
        print("slurm: skipped (needs root and scripts/install-deps.sh's slurm packages)")
        return
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
    import slurm_cluster
    os.chmod(work, 0o755)  # munged runs as the munge user: it must reach its folder inside
    cluster = slurm_cluster.Cluster(os.path.join(work, "cluster"))
    cluster.start()
    try:
        threads = int(os.environ.get("NPUKIT_NUM_THREADS", os.cpu_count()))
        shards = 4
        env = {**cluster.env, "PATH": os.path.join(build, "tools/msaccucmp") + ":" + os.environ["PATH"],
               "NPUKIT_NUM_THREADS": str(max(1, threads // shards))}  # the same total threads as the single run, per node
        t0 = time.perf_counter()
        subprocess.run([os.path.join(HERE, "..", "scripts/slurm/npukit-slurm"), "compare", "--shards", str(shards), "--out",
                        os.path.join(work, "slurm"), "--wait", "--", "-m", npu, "-g", gold], check=True, env=env, stdout=subprocess.DEVNULL)
        t_slurm = time.perf_counter() - t0
        print(f"slurm {shards}-task array + merge: {t_slurm:7.2f} s  against one process {t_cmp:.2f} s "
              f"({os.cpu_count()} cores: no speed-up expected on one node; for the record)")
    finally:
        cluster.stop()


slurm_compare()
shutil.rmtree(work)
