#!/usr/bin/python3
"""transplt end-to-end tests: golden before/after pairs for every rule, byte fidelity, reports, bad input.

usage: test_transplt.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys

import openpyxl
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = sys.argv[1:4]
T = os.path.join(BUILD, "tools", "transplt", "transplt")
GOLD = os.path.join(SRC, "tests", "transplt", "golden")
checks = testlib.Checks()
check, failures = checks.check, checks.failures




def run(args, code=0, env=None):
    p = subprocess.run([T] + args, capture_output=True, env=env)
    check(p.returncode == code, f"transplt {' '.join(args)}: exit {p.returncode}, want {code}\n{p.stderr.decode()}")
    return p


def compiles(path):
    """py_compile, with the .pyc written under WORK so the source tree stays clean."""
    code = "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)"
    pyc = os.path.join(WORK, "pyc", path.strip("/").replace("/", "_") + "c")
    return subprocess.run(["/usr/bin/python3", "-c", code, path, pyc], capture_output=True).returncode == 0


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def check_reports(dest, report, label):
    """transplant_result_file/ (CANN's current layout): its CSVs and unsupported_op.xlsx hold exactly what the JSON
    report holds, read-only as CANN leaves them."""
    results = os.path.join(dest, "transplant_result_file")
    rows = read_csv(os.path.join(results, "change_list.csv"))
    check(rows[0] == ["File", "Start Line", "End Line", "Operation Type", "Message", "Rule"], f"{label}: csv header")
    want = [[f["file"], str(c["start_line"]), str(c["end_line"]), c["operation"], c["message"], c["rule"]]
            for f in report["files"] for c in f["changes"]]
    want = [w for i, w in enumerate(want) if i == 0 or w != want[i - 1]]  # one row per rewrite, however many splices
    check(rows[1:] == want, f"{label}: change_list.csv differs from the JSON report")
    want_changes = want
    check(len(set(map(tuple, rows[1:]))) == len(rows) - 1, f"{label}: change_list.csv repeats a row")
    api = ["File", "Start Line", "End Line", "OP", "Tips"]
    rows = read_csv(os.path.join(results, "unsupported_api.csv"))
    want = [[f["file"], str(x["line"]), str(x["line"]), x["api"], x["reason"] + ("; " + x["suggestion"] if x["suggestion"] else "")]
            for f in report["files"] for x in f["findings"]]
    check(rows == [api] + want, f"{label}: unsupported_api.csv differs from the JSON report")
    notices = [(f["file"], x) for f in report["files"] for x in f["notices"]]
    config = [["NA", "NA", "NA", c["setting"], c["tip"]] for c in report["config_advice"]]
    for name, kind, extra in (("unknown_api.csv", "unknown_api", []), ("api_precision_advice.csv", "precision", []),
                              ("api_performance_advice.csv", "performance", config)):
        want = [[f, str(x["line"]), str(x["line"]), x["api"], x["tip"]] for f, x in notices if x["kind"] == kind]
        check(read_csv(os.path.join(results, name)) == [api] + want + extra, f"{label}: {name} differs from the JSON report")
    check(read_csv(os.path.join(results, "cuda_op_list.csv"))[0] == ["File", "Api"], f"{label}: cuda_op_list.csv header")
    check(os.path.exists(os.path.join(results, "msFmkTranspltlog.txt")), f"{label}: log")
    check(all(os.stat(os.path.join(results, n)).st_mode & 0o777 == 0o440 for n in os.listdir(results)), f"{label}: reports are 0440")
    book = openpyxl.load_workbook(os.path.join(results, "unsupported_op.xlsx"))
    crows = [[str(v) for v in r] for r in book["change_list"].iter_rows(values_only=True)]
    check(crows == [["File", "Start Line", "End Line", "Operation Type", "Message", "Rule"]] + want_changes,
          f"{label}: the xlsx change_list sheet differs from change_list.csv")
    ws = book["unsupported_op"]
    xrows = [list(r) for r in ws.iter_rows(values_only=True)]
    check(xrows[0] == ["File", "Line", "API", "Reason", "Suggestion"], f"{label}: xlsx header {xrows[0]}")
    want = [[f["file"], x["line"], x["api"], x["reason"], x["suggestion"]] for f in report["files"] for x in f["findings"]]
    check(xrows[1:] == want, f"{label}: unsupported_op.xlsx differs from the JSON report")


def check_spans(original, migrated, changes, label):
    """Bytes outside the reported edit spans are identical to the input."""
    out, at = b"", 0
    for c in changes:
        s, e = c["span"]
        check(original[s:e] == c["before"].encode(), f"{label}: span {s}-{e} does not hold the reported 'before'")
        out += original[at:s] + c["after"].encode()
        at = e
    out += original[at:]
    check(out == migrated, f"{label}: the output differs from the input outside the reported edits")


def case_args(case, main, rule):
    path = os.path.join(GOLD, case, "args.json")
    args = json.load(open(path)) if os.path.exists(path) else []
    return [a.replace("{main}", main).replace("{rule}", os.path.join(GOLD, case, "rule.json")) for a in args]


def test_goldens():
    seen = set()
    for case in sorted(os.listdir(GOLD)):
        base = testlib.fresh(os.path.join(WORK, "golden", case))
        src = testlib.fresh(os.path.join(base, "in"))
        shutil.copy(os.path.join(GOLD, case, "before.py"), os.path.join(src, "main.py"))
        rep = os.path.join(base, "report.json")
        args = case_args(case, os.path.join(src, "main.py"), None)
        cut = args.index("distributed") if "distributed" in args else len(args)
        opts, dist = args[:cut], args[cut:]
        run(["-i", src, "-o", os.path.join(base, "out"), "--report-json", rep] + opts + dist)
        dest = os.path.join(base, "out", "in_msft_multi" if dist else "in_msft")
        got = open(os.path.join(dest, "main.py"), "rb").read()
        want = open(os.path.join(GOLD, case, "after.py"), "rb").read()
        check(got == want, f"golden {case}: output differs from after.py")
        check(compiles(os.path.join(GOLD, case, "before.py")) and compiles(os.path.join(dest, "main.py")),
              f"golden {case}: does not compile")
        report = json.load(open(rep))
        changes = report["files"][0]["changes"]
        check_spans(open(os.path.join(src, "main.py"), "rb").read(), got, changes, case)
        check_reports(dest, report, case)
        seen |= {c["rule"] for c in changes} | {x["rule"] for x in report["files"][0]["findings"]}
        seen |= {x["rule"] for x in report["files"][0]["notices"] if x["rule"]} | {c["rule"] for c in report["config_advice"]}
        if dist:
            script = os.path.join(dest, "run_distributed_npu.sh")
            check(os.access(script, os.X_OK) and "main.py" in open(script).read(), f"{case}: run_distributed_npu.sh")
            check(subprocess.run(["bash", "-n", script]).returncode == 0, f"{case}: launch script syntax")
        # Idempotent: transplt on its own output finds nothing to change (no second import torch_npu).
        again = os.path.join(base, "again.json")
        dist2 = [a.replace(src, dest) for a in dist]
        run(["-i", dest, "-o", testlib.fresh(os.path.join(base, "out2")), "--dry-run", "--report-json", again] + opts + dist2)
        n = sum(len(f["changes"]) for f in json.load(open(again))["files"])
        check(n == 0, f"golden {case}: a second run still changes {n} things")
    listed = {line.split()[0] for line in run(["--list-rules"]).stdout.decode().splitlines()}
    check(listed - seen == set(), f"built-in rules without a golden case: {sorted(listed - seen)}")
    kinds = {r.split("[")[0] for r in seen if r.startswith("custom.")}
    check(kinds == {"custom.ArgsModifyRule", "custom.FuncNameModifyRule", "custom.ModuleNameModifyRule"},
          f"custom rule kinds covered: {kinds}")


def test_bytes_and_tree():
    base = testlib.fresh(os.path.join(WORK, "tree"))
    src = testlib.fresh(os.path.join(base, "proj"))
    files = {
        "crlf_bom.py": b"\xef\xbb\xbfimport torch\r\nx = torch.cuda.is_available()\r\ny = 'cuda'",
        "tabs.py": b"import torch\nif True:\n\tx = y.cuda()\n\tz = 1  # cuda\n",
        "latin1.py": b"# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'  # \xe9t\xe9\nm = n.cuda()\n",
        "pkg/sub/deep.py": b"from torch import cuda\nprint(cuda.device_count())\n",
        "broken.py": b"import torch\nx = torch.cuda.is_available()\ndef f(:\n    pass\n",
        "binary.py": b"\x00\x01\x02torch.cuda\xff",
        "not_utf8.py": b"import torch\ns = '\xe9'\n",
        "README.md": b"uses cuda\n",
        "data/weights.bin": bytes(range(256)),
        "plain.py": b"print('no torch here')\n",
    }
    for rel, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
        open(os.path.join(src, rel), "wb").write(data)
    os.symlink("plain.py", os.path.join(src, "link.py"))
    before = {rel: open(os.path.join(src, rel), "rb").read() for rel in files}
    rep = os.path.join(base, "r.json")
    p = run(["-i", src, "-o", os.path.join(base, "out"), "--report-json", rep])
    dest = os.path.join(base, "out", "proj_msft")
    out = lambda rel: open(os.path.join(dest, rel), "rb").read()
    check(out("crlf_bom.py") == b"\xef\xbb\xbfimport torch\r\nimport torch_npu\r\nx = torch_npu.npu.is_available()\r\ny = 'npu'",
          f"BOM/CRLF/no final newline not preserved: {out('crlf_bom.py')!r}")
    check(out("tabs.py") == b"import torch\nimport torch_npu\nif True:\n\tx = y.npu()\n\tz = 1  # cuda\n", "tabs")
    check(out("latin1.py") == b"# -*- coding: latin-1 -*-\nimport torch\nimport torch_npu\ns = 'caf\xe9'  # \xe9t\xe9\nm = n.npu()\n",
          f"latin-1 cookie not honoured: {out('latin1.py')!r}")
    check(out("pkg/sub/deep.py") == b"from torch import npu\nimport torch_npu\nprint(torch_npu.npu.device_count())\n",
          f"nested file: {out('pkg/sub/deep.py')!r}")
    for rel in ["broken.py", "binary.py", "not_utf8.py", "README.md", "data/weights.bin", "plain.py"]:
        check(out(rel) == before[rel], f"{rel} must be copied unchanged")
    check(os.path.islink(os.path.join(dest, "link.py")), "symlinks are copied as links")
    for rel, data in files.items():
        check(open(os.path.join(src, rel), "rb").read() == data, f"input {rel} was modified")
    summary = p.stdout.decode()
    check("broken.py:3:" in summary, f"syntax error location missing from the summary:\n{summary}")
    status = {f["file"]: f["status"] for f in json.load(open(rep))["files"]}
    check(status.get("broken.py") == "failed" and status.get("binary.py") == "skipped" and
          status.get("not_utf8.py") == "skipped" and status.get("plain.py") == "unchanged", f"statuses {status}")
    for rel in ["crlf_bom.py", "tabs.py", "latin1.py", "pkg/sub/deep.py"]:
        check(compiles(os.path.join(dest, rel)), f"{rel} does not compile after migration")
    # --diff is a real unified diff: applying it to the input reproduces the output.
    d = run(["-i", src, "-o", testlib.fresh(os.path.join(base, "o2")), "--dry-run", "--diff"], code=3).stdout.decode("utf-8", "replace")
    check(apply_diff(os.path.join(src, "tabs.py"), d, "tabs.py") == out("tabs.py").decode(), "diff of tabs.py does not apply")
    check(not os.listdir(os.path.join(base, "o2")), "--dry-run wrote something")
    # An existing result needs --force; with it the old tree is replaced.
    p = run(["-i", src, "-o", os.path.join(base, "out")], code=1)
    check(b"ET0002" in p.stderr and b"--force" in p.stderr, "existing output without --force")
    open(os.path.join(dest, "stale.txt"), "w").write("old")
    run(["-i", src, "-o", os.path.join(base, "out"), "--force"])
    check(not os.path.exists(os.path.join(dest, "stale.txt")), "--force must replace the old result")
    # A single file as input.
    run(["-i", os.path.join(src, "tabs.py"), "-o", testlib.fresh(os.path.join(base, "single"))])
    check(open(os.path.join(base, "single", "tabs_msft", "tabs.py"), "rb").read() == out("tabs.py"), "single-file input")


def apply_diff(path, diff, rel):
    """A small independent unified-diff applier (one file) used to validate --diff."""
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    text = diff.split(f"--- a/{rel}\n+++ b/{rel}\n", 1)[1].split("\n--- a/", 1)[0]
    out, at = [], 0
    for hunk in re.split(r"^@@ ", text, flags=re.M)[1:]:
        head, body = hunk.split("\n", 1)
        start = int(head.split()[0][1:].split(",")[0]) - 1
        out += lines[at:start]
        at = start
        for l in body.splitlines(keepends=True):
            if l.startswith("\\"):
                out[-1] = out[-1].rstrip("\n")
            elif l[0] in " -":
                at += 1
                if l[0] == " ":
                    out.append(l[1:])
            elif l[0] == "+":
                out.append(l[1:])
    return "".join(out + lines[at:])


def test_bad_input():
    base = testlib.fresh(os.path.join(WORK, "bad"))
    src = testlib.fresh(os.path.join(base, "proj"))
    open(os.path.join(src, "a.py"), "w").write("import torch\nx.cuda()\n")
    out = testlib.fresh(os.path.join(base, "out"))

    def err(args, code, needle, label, exit_code=1):
        p = run(args, code=exit_code)
        text = p.stderr.decode()
        check(code in text and needle in text, f"{label}: want {code} mentioning {needle!r}, got:\n{text}")
        check(not os.path.exists(os.path.join(out, "proj_msft")), f"{label}: something was written")

    err(["-i", os.path.join(base, "missing"), "-o", out], "ET0001", "does not exist", "missing input")
    err(["-i", src, "-o", os.path.join(src, "inside")], "ET0002", "inside the input", "output inside input")
    check(not os.path.exists(os.path.join(src, "inside")), "output inside input was created")
    err(["-o", out], "E10007", "-i/--input", "no -i", exit_code=2)  # a required flag missing: bad usage
    err(["-i", src, "-o", out, "distributed", "-m", "/etc/hostname"], "ET0004", "inside the input", "main outside input")
    err(["-i", src, "-o", out, "distributed", "-m", os.path.join(src, "a.py"), "-t", "1model"], "E10001", "1model", "bad -t")
    rules = {
        "not json": ("{rules: }", "not valid JSON"),
        "not an object": ("[1]", "top level must be an object"),
        "no rules": ('{"x": 1}', "missing the \"rules\" object"),
        "unknown kind": ('{"rules": {"RenameRule": []}}', "rules.RenameRule: unknown rule kind"),
        "not a list": ('{"rules": {"FuncNameModifyRule": {}}}', "must be a list"),
        "entry not object": ('{"rules": {"FuncNameModifyRule": [3]}}', "FuncNameModifyRule[0]: must be an object"),
        "missing field": ('{"rules": {"FuncNameModifyRule": [{"old_name": "a"}]}}', "FuncNameModifyRule[0].new_name: missing"),
        "wrong type": ('{"rules": {"FuncNameModifyRule": [{"old_name": "a", "new_name": 5}]}}', ".new_name: must be a string"),
        "bad name": ('{"rules": {"ModuleNameModifyRule": [{"old_name": "a.b", "new_name": "c", "parent_module": "x"}]}}',
                     ".old_name: 'a.b' is not a Python identifier"),
        "bad index": ('{"rules": {"ArgsModifyRule": [{"func_name": "f", "arg_idx": -1, "arg_new": "1"}]}}', ".arg_idx: must be an integer"),
        "bad expression": ('{"rules": {"ArgsModifyRule": [{"func_name": "f", "arg_idx": 0, "arg_new": "(1,"}]}}', "is not a Python expression"),
        "unknown field": ('{"rules": {"FuncNameModifyRule": [{"old_name": "a", "new_name": "b", "x": 1}]}}', "unknown field 'x'"),
    }
    for label, (text, needle) in rules.items():
        path = os.path.join(base, "rule.json")
        open(path, "w").write(text)
        err(["-i", src, "-o", out, "-r", path], "ET0003", needle, f"rule file: {label}")
    if os.geteuid() != 0:  # root reads anything, so this case only runs unprivileged
        locked = os.path.join(src, "locked.py")
        open(locked, "w").write("x = 1\n")
        os.chmod(locked, 0)
        err(["-i", src, "-o", out], "E13002", "locked.py", "unreadable file")
        os.chmod(locked, 0o644)
    else:
        print("note: running as root, the unreadable-file case is skipped")
    # --dry-run exit codes: 3 with pending changes, 0 without.
    run(["-i", src, "-o", out, "--dry-run"], code=3)
    clean = testlib.fresh(os.path.join(base, "clean"))
    open(os.path.join(clean, "b.py"), "w").write("print(1)\n")
    run(["-i", clean, "-o", out, "--dry-run"], code=0)


def test_star_import():
    """A script that reaches torch only through `from models import *` (GENet's train.py): the names the project's
    module brings in are resolved, so its torch.cuda calls migrate and it gets `import torch_npu` of its own."""
    base = testlib.fresh(os.path.join(WORK, "star"))
    src = testlib.fresh(os.path.join(base, "proj"))
    os.makedirs(os.path.join(src, "pkg"))
    files = {
        "models.py": "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n",
        "pkg/__init__.py": "from models import *\n",
        "train.py": "from __future__ import print_function\nfrom models import *\n\nif torch.cuda.is_available():\n"
                    "    net = Net().cuda()\nx = torch.zeros(2, device=gpu)\n",
        "eval.py": "from pkg import *\nprint(torch.cuda.device_count())\n",
        "other.py": "from os.path import *\nprint(join('a', 'b'))\n",
    }
    for rel, text in files.items():
        open(os.path.join(src, rel), "w").write(text)
    run(["-i", src, "-o", os.path.join(base, "out")])
    dest = os.path.join(base, "out", "proj_msft")
    out = lambda rel: open(os.path.join(dest, rel)).read()
    check(out("train.py") == "from __future__ import print_function\nfrom models import *\nimport torch_npu\n\n"
          "if torch_npu.npu.is_available():\n    net = Net().npu()\n"
          "x = torch.zeros(2, device=f'npu:{gpu}' if isinstance(gpu, int) else gpu)\n", f"star import: {out('train.py')!r}")
    check(out("eval.py") == "from pkg import *\nimport torch_npu\nprint(torch_npu.npu.device_count())\n",
          f"star import through a package: {out('eval.py')!r}")
    check(out("other.py") == files["other.py"], "a star import of a module outside the project changes nothing")
    check(out("models.py") == "import torch\nimport torch.nn as nn\nimport torch_npu\n\n\nclass Net(nn.Module):\n    pass\n", "models.py")
    for rel in files:
        check(compiles(os.path.join(dest, rel)), f"{rel} does not compile after migration")


def test_unmatched_custom_rule_is_reported():
    base = testlib.fresh(os.path.join(WORK, "unmatched"))
    src = testlib.fresh(os.path.join(base, "proj"))
    with open(os.path.join(src, "a.py"), "w") as f:
        f.write("import torch\nx = torch.zeros(2).cuda()\n")
    rule = os.path.join(base, "rule.json")
    with open(rule, "w") as f:
        json.dump({"rules": {"FuncNameModifyRule": [{"old_name": "nowhere.func", "new_name": "elsewhere.func"}]}}, f)
    rep = os.path.join(base, "report.json")
    p = run(["-i", src, "-o", testlib.fresh(os.path.join(base, "out")), "-r", rule, "--report-json", rep])
    text = p.stdout.decode()
    check("custom rule custom.FuncNameModifyRule[0] matched nothing" in text, f"an unmatched custom rule is reported:\n{text}")
    check(json.load(open(rep))["unmatched_custom_rules"] == ["custom.FuncNameModifyRule[0]"], "and listed in the JSON report")
    log = open(os.path.join(base, "out", "proj_msft", "transplant_result_file", "msFmkTranspltlog.txt")).read()
    check("custom rule custom.FuncNameModifyRule[0] matched nothing" in log, "and logged")


for t in [test_goldens, test_bytes_and_tree, test_star_import, test_bad_input, test_unmatched_custom_rule_is_reported]:
    t()
print(f"transplt tests: {len(failures)} failures")
sys.exit(1 if failures else 0)
