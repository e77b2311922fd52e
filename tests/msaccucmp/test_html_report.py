#!/usr/bin/python3
"""msaccucmp's HTML report (--report html on compare and merge, the report command and its index page): one
self-contained file per result (nothing fetched: no script, no external reference), every row's op in it with the
verdict counts of the CSV, the first divergent op marked and linked, chart points linked to table rows; a merged
result's page equals the single run's; 100,000 rows downsample to one chart column per pixel and the 1,000 worst
in the table, under 10 MB. Rendered by headless Chromium (the l2norm walk of docs/atc.md): the screenshot is not
blank, the DOM names the first divergent op (/ReduceSum) and every verdict count, and the page makes no request.
usage: test_html_report.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import unittest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
CMP = os.path.join(BUILD, "tools/msaccucmp/msaccucmp")
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")


def run(*argv, code=0):
    p = T.run(*argv, cwd=WORK)
    assert p.returncode == code, f"{argv} exited {p.returncode}\n{p.stdout}{p.stderr}"
    return p


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def rows_of(csv_path):
    with open(csv_path, newline="") as f:
        return list(csv.reader(f))


def setUpModule():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    run(ATC, "--framework=5", f"--model={SRC}/examples/tinynet.onnx", "--output=tiny", "--soc_version=Ascend310P3", "--input_shape=image:1,3,32,32")
    run(ATC, "--mode=1", "--om=tiny.om", "--json=tiny.json")
    with open(os.path.join(WORK, "dump.json"), "w") as f:
        f.write('{"dump": {"dump_path": "%s/dump", "dump_list": [], "dump_mode": "all"}}' % WORK)
    shutil.copy(f"{SRC}/examples/tinynet.onnx", os.path.join(WORK, "reference.onnx"))
    for m in ("tiny.om", "reference.onnx"):
        run(MSAME, "--model", m, "--input", f"{SRC}/examples/input.npy", "--acl_json_path", "dump.json")
    run(CMP, "compare", *compare_args(), "-out", "single", "--report", "html")


def compare_args():
    (npu,) = glob.glob(f"{WORK}/dump/*/0/tiny/1/0")
    (golden,) = glob.glob(f"{WORK}/dump/*/0/reference/1/0")
    return ["-m", npu, "-g", golden, "-f", f"{WORK}/tiny.json"]


def synthetic(path, n, fail_at):
    """A result table of n rows (the header of a real one): op k has an input row and an output row; the outputs
    of ops fail_at.. fail, with passing inputs at fail_at only."""
    (real,) = glob.glob(f"{WORK}/single/result_*.csv")
    header = rows_of(real)[0]
    col = {h: i for i, h in enumerate(header)}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for k in range(n):
            op, is_input = k // 2, k % 2 == 0
            r = ["0.000000"] * len(header)
            r[col["Index"]], r[col["OpType"]], r[col["NPUDump"]] = str(op), "Conv2D", f"/layer{op}/Conv"
            r[col["TensorIndex"]] = f"/layer{op}/Conv:{'input' if is_input else 'output'}:0"
            bad = op >= fail_at and not (is_input and op == fail_at)
            r[col["CosineSimilarity"]] = "0.900000" if bad else f"{1 - 1e-6 * (k % 7):.6f}"
            r[col["MaxRelativeError"]] = "0.500000" if bad else f"{1e-4 * (1 + k % 5):.6f}"
            r[col["Verdict"]] = "FAIL" if bad else "PASS"
            w.writerow(r)


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        (cls.csv,) = glob.glob(f"{WORK}/single/result_*.csv")
        cls.html = read(cls.csv[:-4] + ".html")

    def test_self_contained_and_every_row_shown(self):
        for fetch in ("<script", "http://", "https://", " src=", "@import", "url("):
            self.assertNotIn(fetch, self.html.replace('xmlns="http://www.w3.org/2000/svg"', ""))
        table = rows_of(self.csv)
        col = {h: i for i, h in enumerate(table[0])}
        for r in table[1:]:
            self.assertIn(r[col["NPUDump"]].split()[0], self.html)
        counts = {v: sum(r[col["Verdict"]] == v for r in table[1:]) for v in ("PASS", "WARN", "FAIL", "SKIP")}
        for v, n in counts.items():
            self.assertIn(f"{v} {n}<", self.html)
        self.assertEqual(self.html.count("<svg"), 2)  # cosine and max relative error

    def test_merged_shards_give_the_single_runs_page(self):
        for k in (1, 2):
            run(CMP, "compare", *compare_args(), "-out", "shards", "--shard", f"{k}/2")
        run(CMP, "merge", "-d", "shards", "-out", "merged", "--report", "html")
        (merged,) = glob.glob(f"{WORK}/merged/result_*.html")
        strip = lambda page, name: page.replace(os.path.basename(name), "RESULT")
        self.assertEqual(strip(read(merged), merged[:-5] + ".csv"), strip(self.html, self.csv))


class LargeAndFailing(unittest.TestCase):
    def test_first_divergent_op_and_100000_rows(self):
        path = f"{WORK}/big/result_20260101000000.csv"
        os.makedirs(os.path.dirname(path))
        synthetic(path, 100000, fail_at=31000)
        run(CMP, "report", "-d", path)
        page = read(path[:-4] + ".html")
        self.assertLess(os.path.getsize(path[:-4] + ".html"), 10 * 1024 * 1024)
        self.assertEqual(page.count("<tr") - page.count("<tr><th"), 1000)  # the worst 1,000 rows
        first = 31000 * 2 + 1  # op 31000's output row
        self.assertIn(f'<tr id="r{first}" class="first">', page)
        self.assertIn(f'<a href="#r{first}">Index 31000 /layer31000/Conv', page)
        self.assertLessEqual(page.count("<line "), 2 * 1000 + 2)  # one column per pixel per chart (+ the marker)
        anchors = set(re.findall(r'href="#r(\d+)"', page))
        self.assertTrue(anchors)
        self.assertTrue(all(f'id="r{a}"' in page for a in anchors))  # every chart link lands on a table row

    def test_index_of_several(self):
        os.makedirs(f"{WORK}/batch/a")
        os.makedirs(f"{WORK}/batch/b")
        synthetic(f"{WORK}/batch/a/result_20260101000001.csv", 400, fail_at=150)
        synthetic(f"{WORK}/batch/b/result_20260101000002.csv", 400, fail_at=10**9)
        run(CMP, "report", "-d", f"{WORK}/batch", "-out", f"{WORK}/batch")
        index = read(f"{WORK}/batch/index.html")
        links = re.findall(r'<a href="([^"]+)"', index)
        self.assertEqual(len(links), 2)
        for link in links:
            self.assertTrue(os.path.exists(os.path.join(WORK, "batch", link)), link)
        self.assertEqual(index.count("<polyline"), 2)
        self.assertIn("Index 150 /layer150/Conv", index)


class MergeChecks(unittest.TestCase):
    """merge refuses shards of two different comparisons and a shard cut short, with a coded error and no result."""

    def shards(self, name, args):
        for k in (1, 2):
            run(CMP, "compare", *args, "-out", name, "--shard", f"{k}/2")
        return sorted(glob.glob(f"{WORK}/{name}/result_*_shard*of2.csv"))

    def test_mixed_and_truncated_shards(self):
        a = self.shards("mix_a", compare_args())
        b = self.shards("mix_b", [*compare_args(), "-max", "64"])  # the same columns, other rows: another comparison
        os.makedirs(f"{WORK}/mixed")
        shutil.copy(a[0], f"{WORK}/mixed/")
        shutil.copy(b[1], f"{WORK}/mixed/")
        p = run(CMP, "merge", "-d", "mixed", "-out", "mixed_out", code=1)
        self.assertIn("EC0015", p.stdout)
        self.assertIn("another comparison", p.stdout)
        self.assertFalse(glob.glob(f"{WORK}/mixed_out/result_*"))
        for cut in ("mid_row", "row_boundary"):
            d = f"{WORK}/cut_{cut}"
            os.makedirs(d)
            shutil.copy(a[0], d)
            with open(a[1], "rb") as fh:
                data = fh.read()
            lines = data.split(b"\n")
            kept = b"\n".join(lines[:-2]) + b"\n" if cut == "row_boundary" else data[: len(data) - len(lines[-2]) // 2 - 1]
            with open(os.path.join(d, os.path.basename(a[1])), "wb") as fh:
                fh.write(kept)
            p = run(CMP, "merge", "-d", d, "-out", f"{d}_out", code=1)
            self.assertIn("EC0015", p.stdout, cut)
            self.assertFalse(glob.glob(f"{d}_out/result_*"), cut)


CHROMIUM = shutil.which("chromium")
# Headless, and quiet: Chromium's own background services still make requests, but from the browser itself (the
# net log's initiator "not an origin"); a page's requests carry the page's origin.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-default-apps", "--window-size=1200,900"]


def page_requests(net_log):
    """The URL requests a page started, from Chromium's --log-net-log."""
    import json
    with open(net_log) as f:
        log = json.load(f)
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in log["events"]
            if e["type"] == start and e.get("params", {}).get("initiator", "not an origin") != "not an origin"]


class InChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            raise AssertionError("chromium is not installed (scripts/install-deps.sh test installs it)")
        walk = os.path.join(WORK, "l2norm")
        run("/usr/bin/python3", f"{SRC}/examples/make_l2norm.py", walk)
        for name, path in (("npu", "npu_dump"), ("golden", "golden")):
            with open(f"{walk}/acl_{name}.json", "w") as f:
                f.write('{"dump":{"dump_path":"%s/%s","dump_list":[],"dump_mode":"all"}}' % (walk, path))
        run(MSAME, "--model", f"{walk}/l2norm.onnx", "--input", f"{walk}/l2norm_input.npy", "--acl_json_path", f"{walk}/acl_golden.json")
        run(ATC, "--framework=5", f"--model={walk}/l2norm.onnx", f"--output={walk}/l2norm", "--soc_version=Ascend310P3")
        run(ATC, "--mode=1", f"--om={walk}/l2norm.om", f"--json={walk}/l2norm.json")
        run(MSAME, "--model", f"{walk}/l2norm.om", "--input", f"{walk}/l2norm_input.npy", "--acl_json_path", f"{walk}/acl_npu.json")
        (npu,) = glob.glob(f"{walk}/npu_dump/*/0/l2norm/1/0")
        (golden,) = glob.glob(f"{walk}/golden/*/0/l2norm/1/0")
        run(CMP, "compare", "-m", npu, "-g", golden, "-f", f"{walk}/l2norm.json", "-out", f"{walk}/cmp", "--report", "html")
        (cls.csv,) = glob.glob(f"{walk}/cmp/result_*.csv")
        cls.page = cls.csv[:-4] + ".html"

    def chromium(self, page, *flags):
        p = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, *flags, f"file://{page}"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return p.stdout

    def test_screenshot_is_not_blank(self):
        import cv2
        shot = os.path.join(WORK, "report.png")
        self.chromium(self.page, f"--screenshot={shot}")
        img = cv2.imread(shot)
        self.assertIsNotNone(img)
        self.assertEqual(img.shape[:2], (900, 1200))
        self.assertGreater(img.std(), 20)                      # not one flat colour
        self.assertGreater((img.min(axis=2) < 200).mean(), 0.02)  # text, axes and points cover part of it
        red = (img[:, :, 2] > 180) & (img[:, :, 1] < 90) & (img[:, :, 0] < 90)  # FAIL points and the first-divergent marker
        self.assertGreater(red.sum(), 30)

    def test_dom_names_the_first_divergent_op_and_every_count(self):
        dom = self.chromium(self.page, "--dump-dom")
        self.assertRegex(dom, r"First divergent op \([^)]*\): <a href=\"#r\d+\">Index \d+ /ReduceSum ")
        table = rows_of(self.csv)
        verdict = table[0].index("Verdict")
        for v in ("PASS", "WARN", "FAIL", "SKIP"):
            self.assertIn(f"{v} {sum(r[verdict] == v for r in table[1:])}<", dom)

    def test_the_page_requests_nothing(self):
        net = os.path.join(WORK, "net.json")
        self.chromium(self.page, f"--log-net-log={net}", "--dump-dom")
        self.assertEqual(page_requests(net), [])
        control = os.path.join(WORK, "control.html")  # the check sees a page that does fetch something
        with open(control, "w") as f:
            f.write('<html><body><img src="http://npukit-report-test.invalid/x.png"></body></html>')
        self.chromium(control, f"--log-net-log={net}", "--dump-dom")
        self.assertIn("http://npukit-report-test.invalid/x.png", page_requests(net))


class BadFlags(unittest.TestCase):
    def test_coded_errors(self):
        for extra, why in ((["--report", "pdf"], "must be html"), (["--report", "html", "--format", "json"], "CSV result"),
                           (["--report", "html", "--shard", "1/2"], "msaccucmp merge")):
            p = run(CMP, "compare", *compare_args(), "-out", "bad", *extra, code=1)
            self.assertIn("E10001", p.stdout)
            self.assertIn(why, p.stdout)
            self.assertFalse(glob.glob(f"{WORK}/bad/result_*"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
