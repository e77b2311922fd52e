#!/usr/bin/python3
"""The docs run as written. Every ```sh block of README.md and docs/*.md runs with bash -e, in order, in a
scratch folder holding what `make examples` makes (examples/make_examples.py) and a link to the repository's
examples/, with the built tools first on PATH. A block fails on a non-zero exit; where a ```text output block
follows it, each shown line must appear in what it printed, in order (`...` in a shown line matches any text).

The fence's info string says how a block is meant:
    ```sh            an example: runs, must exit 0
    ```sh fails      an example of a refused command: runs, must exit non-zero
    ```sh syntax     reference syntax (placeholders like DUMP_DIR, [optional] parts): not run, listed
    ```sh norun      a command for the machine, not for a scratch folder (make check, sudo apt install): not run,
                     listed; the paragraph around it says why
A fence without a language whose first line starts with a tool's name is an error: mark it sh.

usage: run_docs.py examples OUT_DIR                    make the examples once (a CTest fixture)
       run_docs.py doc SOURCE BUILD EXAMPLES WORK DOC [--twice]   run DOC's blocks (README.md, docs/atc.md, ...);
                                                        --twice runs them again in the same folder
"""
import os
import re
import shutil
import subprocess
import sys

KINDS = ("", "fails", "syntax", "norun")
TOOLS = ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse", "npukit-slurm", "make")
BLOCK_TIMEOUT = 900
PASSED_ENV = ("ONEDNN_", "ASAN_", "UBSAN_", "GOMP_", "OMP_", "NPUKIT_")


class Block:
    def __init__(self, doc, line, kind, text):
        self.doc, self.line, self.kind, self.text, self.output = doc, line, kind, text, None

    def where(self):
        return f"{self.doc}:{self.line}"


def parse(doc, text):
    """The ```sh blocks of a markdown text, each with the ```text output block that follows it (if any), and the
    list of problems: unknown kinds, shell commands in unmarked fences, output blocks with no sh block before."""
    blocks, problems = [], []
    lines = text.split("\n")
    i, last = 0, None
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*(.*)$", lines[i])
        if not m:
            if lines[i].strip():
                last = None  # an output block must follow its sh block directly
            i += 1
            continue
        lang, extra = m.group(1), m.group(2).strip()
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = "\n".join(lines[start:j]) + "\n"
        where = f"{doc}:{start}"
        if lang == "sh":
            if extra not in KINDS:
                problems.append(f"{where}: unknown block kind '{extra}' (one of: fails, syntax, norun)")
            blocks.append(Block(doc, start, extra, body))
            last = blocks[-1]
        elif lang == "text" and extra == "output":
            if last is None or last.output is not None:
                problems.append(f"{where}: an output block must follow the sh block it shows")
            else:
                last.output = body
            last = None
        else:
            first = body.lstrip().split("\n", 1)[0].split(" ", 1)[0]
            if lang == "" and first in TOOLS:
                problems.append(f"{where}: a shell command in a fence without a language: mark it ```sh")
            last = None
        i = j + 1
    return blocks, problems


def output_missing(shown, printed):
    """The first shown line that does not appear in `printed` after the previous one, or None."""
    pos = 0
    for line in shown.splitlines():
        line = line.strip()
        if not line:
            continue
        pattern = ".*?".join(re.escape(part.strip()) for part in line.split("..."))
        m = re.compile(pattern).search(printed, pos)
        if not m:
            return line
        pos = m.end()
    return None


def make_examples(out):
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(["/usr/bin/python3", os.path.join(source, "examples/make_examples.py"), out], check=True)


def scratch(source, examples, work):
    """A fresh folder with the examples: small files copied (a doc may rewrite them), models and folders linked."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in os.listdir(examples):
        src, dst = os.path.join(examples, name), os.path.join(work, name)
        if os.path.isdir(src) and name == "train_project":
            shutil.copytree(src, dst)
        elif os.path.getsize(src) > 1 << 20 or os.path.isdir(src):
            os.symlink(src, dst)
        else:
            shutil.copyfile(src, dst)
    if not os.path.lexists(os.path.join(work, "examples")):
        os.symlink(os.path.join(source, "examples"), os.path.join(work, "examples"))


def run_doc(source, build, examples, work, doc, twice):
    with open(os.path.join(source, doc), encoding="utf-8") as f:
        blocks, problems = parse(doc, f.read())
    for p in problems:
        print("PROBLEM", p)
    scratch(source, examples, work)
    env = {"PATH": f"{build}/bin:/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8",
           "ASCEND_PROCESS_LOG_PATH": os.path.join(work, "log")}
    # The test run's settings of the libraries and sanitizers reach the examples too (tests/CMakeLists.txt).
    env.update({k: v for k, v in os.environ.items() if k.startswith(PASSED_ENV)})
    failures = list(problems)
    for round_no in range(2 if twice else 1):
        for b in blocks:
            if b.kind in ("syntax", "norun"):
                if round_no == 0:
                    print(f"not run ({b.kind}): {b.where()}")
                continue
            try:
                p = subprocess.run(["bash", "-e", "-c", b.text], cwd=work, env=env, capture_output=True, text=True,
                                   timeout=BLOCK_TIMEOUT, check=False)
            except subprocess.TimeoutExpired:
                failures.append(f"{b.where()}: did not finish in {BLOCK_TIMEOUT} s")
                continue
            printed = p.stdout + p.stderr
            ok = (p.returncode != 0) if b.kind == "fails" else (p.returncode == 0)
            tag = f"{b.where()}" + (" (second run)" if round_no else "")
            if not ok:
                failures.append(f"{tag}: exit {p.returncode}, expected {'non-zero' if b.kind == 'fails' else 0}\n"
                                f"{b.text}---\n{printed[-4000:]}")
                continue
            missing = b.output and output_missing(b.output, printed)
            if missing:
                failures.append(f"{tag}: the shown output line\n    {missing}\nis not in what it printed:\n{printed[-4000:]}")
                continue
            print(f"ok: {tag}")
    ran = sum(b.kind in ("", "fails") for b in blocks)
    print(f"{doc}: {ran} block(s) run, {len(blocks) - ran} marked not to run, {len(failures)} failure(s)")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


SELFTEST_DOC = """# a page
```sh
echo "compared 19 tensor pair(s): PASS 8, FAIL 6"
```
```text output
compared ... pair(s): PASS 8
```
```sh fails
false
```
```sh syntax
atc --model=MODEL [--output=OUT]
```
```sh
echo one
```
```text output
two
```
```sh fails
true
```
```
msame --model x.om
```
"""


def selftest():
    """The runner must catch what it is for: a wrong exit either way, a shown line that was not printed, and a
    shell command hidden in an unmarked fence; and it must pass what is right."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(f"{tmp}/src/examples")
        os.makedirs(f"{tmp}/examples")
        with open(f"{tmp}/src/page.md", "w") as f:
            f.write(SELFTEST_DOC)
        blocks, problems = parse("page.md", SELFTEST_DOC)
        assert [b.kind for b in blocks] == ["", "fails", "syntax", "", "fails"], [b.kind for b in blocks]
        assert blocks[0].output and blocks[3].output and not blocks[1].output
        assert len(problems) == 1 and "without a language" in problems[0], problems
        assert output_missing("compared ... pair(s): PASS 8", "x compared 19 tensor pair(s): PASS 8, FAIL 6") is None
        assert output_missing("b\na", "a\nb") == "a"  # in order
        from contextlib import redirect_stdout
        import io
        log = io.StringIO()
        with redirect_stdout(log):
            rc = run_doc(f"{tmp}/src", f"{tmp}/build", f"{tmp}/examples", f"{tmp}/work", "page.md", False)
        text = log.getvalue()
        assert rc == 1, text
        assert text.count("FAIL ") == 3, text  # the missing "two", the `fails` block that succeeded, the fence
        assert "ok: page.md:2" in text and "ok: page.md:8" in text, text
    print("the doc runner catches a wrong exit, a missing output line and an unmarked shell fence")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 3 and argv[1] == "examples":
        make_examples(os.path.abspath(argv[2]))
        return 0
    if len(argv) in (7, 8) and argv[1] == "doc":
        source, build, examples, work = (os.path.abspath(a) for a in argv[2:6])
        return run_doc(source, build, examples, work, argv[6], "--twice" in argv[7:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
