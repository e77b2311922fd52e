#!/usr/bin/python3
"""transplt throughput on a generated >= 20 MB Python corpus, against CPython merely compiling the same files.

usage: bench_transplt.py BUILD_DIR [MB]
The corpus mixes the golden test scripts with generated training-loop modules full of torch.cuda calls,
device strings, .cuda() calls, comments and plain code, so both the parser and the rules do real work.
"""
import glob
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1]
TARGET_MB = float(sys.argv[2]) if len(sys.argv) > 2 else 24
T = os.path.join(BUILD, "tools", "transplt", "transplt")
GOLD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "transplt", "golden")

MODULE = '''
class Model{i}(torch.nn.Module):
    """Block {i}: a small model with the usual GPU idioms (cuda in docstrings stays)."""

    def __init__(self, width={w}):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        # residual block {i}
        return self.norm(x + torch.relu(self.fc(x)))


def train_{i}(loader, model, optimizer, args):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = model.cuda()
    scaler = torch.cuda.amp.GradScaler()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.to('cuda')
        with torch.cuda.amp.autocast():
            loss = torch.nn.functional.mse_loss(model(x), y) * {s}
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 100 == 0 and x.is_cuda:
            torch.cuda.synchronize()
            print(f"step {{step}}: loss {{loss.item():.4f}}, mem {{torch.cuda.memory_allocated() / 2**20:.1f}} MiB")
    return [v * {s} + {i} for v in range({w}) if v % 3]
'''


def make_corpus(root):
    goldens = [open(p).read() for p in sorted(glob.glob(os.path.join(GOLD, "*", "before.py")))]
    total, n = 0, 0
    while total < TARGET_MB * 1e6:
        gold = goldens[n % len(goldens)].splitlines(True)
        future = "".join(line for line in gold if line.startswith("from __future__"))  # must come first in a file
        rest = "".join(line for line in gold if not line.startswith("from __future__"))
        body = future + "import os\nimport torch\nimport torch.distributed as dist\n\n" + rest
        body += "".join(MODULE.format(i=i, w=16 + i % 7, s=1 + i % 5) for i in range(n * 40, n * 40 + 40))
        path = os.path.join(root, f"pkg{n % 16}", f"mod{n}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(body)
        total += len(body)
        n += 1
    return total, n


def main():
    work = tempfile.mkdtemp(prefix="bench_transplt_")
    try:
        src = os.path.join(work, "corpus")
        size, files = make_corpus(src)
        mb = size / 1e6
        times = {}
        for threads in ["1", str(os.cpu_count())]:
            out = os.path.join(work, "out" + threads)
            os.makedirs(out)
            env = dict(os.environ, NPUKIT_NUM_THREADS=threads)
            t0 = time.perf_counter()
            p = subprocess.run([T, "-i", src, "-o", out], capture_output=True, env=env)
            times[threads] = time.perf_counter() - t0
            if p.returncode != 0:
                sys.exit("transplt failed: " + p.stderr.decode())
        pyfiles = sorted(glob.glob(os.path.join(src, "**", "*.py"), recursive=True))
        cdir = os.path.join(work, "pyc")
        os.makedirs(cdir)
        t0 = time.perf_counter()
        for i, f in enumerate(pyfiles):
            py_compile.compile(f, cfile=os.path.join(cdir, f"{i}.pyc"), doraise=True)
        t_compile = time.perf_counter() - t0
        print(f"transplt corpus: {files} files, {mb:.1f} MB of Python")
        for threads, t in times.items():
            print(f"  transplt (migrate + write tree + reports), {threads} thread(s): {t:.2f} s = {mb / t:.1f} MB/s")
        print(f"  CPython py_compile of the same files (1 process):            {t_compile:.2f} s = {mb / t_compile:.1f} MB/s")
        print(f"  ratio (py_compile time / transplt time): 1 thread {t_compile / times['1']:.2f}x, "
              f"{os.cpu_count()} threads {t_compile / times[str(os.cpu_count())]:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
