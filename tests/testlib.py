"""What every Python test of npukit repeats: where the repository, its test data and the built tools are, and
how a tool is run and its failure reported. A test script is run as `script [SOURCE_DIR] BUILD_DIR WORK_DIR`
(tests/CMakeLists.txt); `paths()` reads that command line.

    import testlib as T
    BUILD, WORK = T.paths()
    out = T.must(T.tool(BUILD, "atc"), "--mode=6", f"--om={T.DATA}/om/a3c_pong_model.om", cwd=WORK)
"""
import os
import shutil
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository's root
DATA = os.path.join(SOURCE, "tests", "data")  # real files made outside this project (tests/data/README.md)
EXAMPLES = os.path.join(SOURCE, "examples")
PY = "/usr/bin/python3"  # Debian's Python: the one that sees python3-numpy, -onnx, -torch, -opencv
TOOLS = ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse")


def paths():
    """(BUILD, WORK) from the test's command line, absolute; WORK is created."""
    build, work = (os.path.abspath(p) for p in sys.argv[-2:])
    os.makedirs(work, exist_ok=True)
    return build, work


def fresh(path):
    """An empty folder at `path` (whatever was there is removed); returns `path`."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def tool(build, name):
    """The built binary of one of the six tools."""
    return os.path.join(build, "tools", name, name)


def run(*args, cwd=None, env=None, input=None):
    """Runs a command (arguments turned into strings) and returns the CompletedProcess, text mode."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, input=input,
                          check=False)


def must(*args, cwd=None, env=None):
    """Runs a command that must succeed; returns stdout + stderr, or raises with both and the exit code."""
    r = run(*args, cwd=cwd, env=env)
    if r.returncode != 0:
        raise AssertionError(f"{[str(a) for a in args]} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def call(cmd, ok=True, env=None, cwd=None):
    """Runs an argument list; `env` adds to the environment. ok=True: it must exit 0 (AssertionError with its output
    otherwise)."""
    p = subprocess.run([str(a) for a in cmd], capture_output=True, text=True, check=False, cwd=cwd,
                       env={**os.environ, **(env or {})})
    if ok and p.returncode != 0:
        raise AssertionError(f"{[str(a) for a in cmd]} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


class Checks:
    """A script-style test's list of failed checks: check() records, finish() reports them and exits."""

    def __init__(self):
        self.failures = []

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            sys.exit(1)
        print("all checks passed")
