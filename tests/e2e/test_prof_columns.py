#!/usr/bin/python3
"""profparse's tables as CANN 8.5's msprof writes them. On an Ascend910B3 profile the headers of op_summary,
op_statistic, task_time and api_statistic start with every column of a real msprof export from a real 910B3
(tests/data/msprof/ascend910b3_cann8.5.2), in its order; on Ascend310P3 and Ascend310 with the column sets of msprof's
source for those chips (Ascend/msprof analysis/, msprof 25.5: ai_core_metrics_manager.py's metric lists,
get_metrics_from_sample_config's *_time before *_ratio, metric_processor.cpp's chip-v1 exclusions and memory_bound,
op_summary_assembler.cpp's Block Dim / Mix Block Dim / Context ID). Then the values as msprof writes them.
usage: test_prof_columns.py BUILD_DIR WORK_DIR"""
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402

BUILD, WORK = T.paths()
ATC, MSAME, PROFPARSE = (T.tool(BUILD, t) for t in ("atc", "msame", "profparse"))
REAL = os.path.join(T.DATA, "msprof", "ascend910b3_cann8.5.2", "mindstudio_profiler_output")

TASK = ["Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type", "Task Start Time(us)",
        "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats"]
PIPE_310P = ["aicore_time(us)", "total_cycles", "vec_time(us)", "vec_ratio", "mac_time(us)", "mac_ratio", "scalar_time(us)",
             "scalar_ratio", "mte1_time(us)", "mte1_ratio", "mte2_time(us)", "mte2_ratio", "mte3_time(us)", "mte3_ratio",
             "icache_miss_rate", "memory_bound", "cube_utilization(%)"]
# The Ascend 310 (chip v1) counts no vector pipe, so neither its columns nor memory_bound (mte2 / max(mac, vec)).
PIPE_310 = [c for c in PIPE_310P if not c.startswith("vec_") and c != "memory_bound"]


def header(path):
    with open(path, newline="") as f:
        return next(csv.reader(f))


def table(folder, kind):
    files = glob.glob(f"{folder}/{kind}_*.csv")
    assert len(files) == 1, files
    with open(files[0], newline="") as f:
        return list(csv.reader(f))


def profile(soc, metrics="PipeUtilization", db=False):
    """tinynet on `soc`, two inferences profiled and exported (also as msprof_<ts>.db with db=True); the
    mindstudio_profiler_output folder."""
    work = os.path.join(WORK, f"{soc}_{metrics}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    T.must(ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny", f"--soc_version={soc}", cwd=work)
    with open(f"{work}/acl.json", "w") as f:
        json.dump({"profiler": {"switch": "on", "output": "prof", "aic_metrics": metrics}}, f)
    T.must(MSAME, "--model", "tiny.om", "--acl_json_path", "acl.json", "--loop", "2", cwd=work)
    prof = glob.glob(f"{work}/prof/PROF_*")[0]
    T.must(PROFPARSE, "--export=on", f"--output={prof}", "--stamp=20260101000000")
    if db:
        T.must(PROFPARSE, "--export=on", f"--output={prof}", "--stamp=20260101000000", "--type=db")
    return f"{prof}/mindstudio_profiler_output"


def records(folder, name, fmt):
    """A sliced raw file's records, decoded with Python's struct by msprof's own format string (StructFmt, Ascend/msprof
    analysis/msparser/data_struct_size_constant.py): an independent reading of the layout."""
    data = b""
    for path in sorted(glob.glob(f"{folder}/{name}.slice_*[0-9]"), key=lambda p: int(p.rsplit("_", 1)[1])):
        with open(path, "rb") as f:
            data += f.read()
    size = struct.calcsize("=" + fmt)
    return [struct.unpack_from("=" + fmt, data, at) for at in range(0, len(data) - size + 1, size)]


class Columns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.b3 = profile("Ascend910B3", db=True)

    def test_910b3_headers_start_with_the_real_export(self):
        for kind in ("op_summary", "op_statistic", "task_time", "api_statistic"):
            real = header(glob.glob(f"{REAL}/{kind}_*.csv")[0])
            ours = table(self.b3, kind)[0]
            self.assertEqual(ours[:len(real)], real, kind)

    def test_310p3_and_310_follow_msprofs_column_sets(self):
        for soc, pipe in (("Ascend310P3", PIPE_310P), ("Ascend310", PIPE_310)):
            ours = table(profile(soc), "op_summary")[0]
            self.assertEqual(ours[:len(TASK) + len(pipe)], TASK + pipe, soc)
            self.assertNotIn("Mix Block Dim", ours, "not a STARS chip")

    def test_readers_find_block_dim_as_msprof_analyze_reads_headers(self):
        # msprof-analyze lower-cases a header and turns spaces and brackets into underscores.
        keys = [re.sub(r"[ ()%/]", "_", c.lower()).strip("_") for c in table(self.b3, "op_summary")[0]]
        self.assertIn("block_dim", keys)

    def test_values_as_msprof_writes_them(self):
        summary = table(self.b3, "op_summary")
        col = {c: i for i, c in enumerate(summary[0])}
        real = table(REAL, "op_summary")
        self.assertRegex(real[1][col["Task Start Time(us)"]], r"^\d+\.\d{3}\t$", "the real export's form")
        types = set()
        for row in summary[1:]:
            self.assertRegex(row[col["Task Start Time(us)"]], r"^\d+\.\d{3}\t$")
            shapes = row[col["Input Shapes"]]
            self.assertTrue(shapes == "N/A" or (shapes[0] == shapes[-1] == '"'), shapes)  # msprof-analyze strips both
            self.assertEqual(row[col["Context ID"]], "N/A")
            types.add(row[col["Task Type"]])
            t = row[col["Task Type"]]
            if t == "AI_VECTOR_CORE":  # a vector task runs on AIV cores only: its AIC columns are 0
                self.assertEqual(row[col["aic_total_cycles"]], "0")
                self.assertGreater(int(row[col["aiv_total_cycles"]]), 0)
                self.assertEqual(row[col["Mix Block Dim"]], "0")
            if t == "MIX_AIC":  # cube work on AIC cores and vector work on AIV cores, both counted
                self.assertGreater(int(row[col["aic_total_cycles"]]), 0)
                self.assertGreater(int(row[col["aiv_total_cycles"]]), 0)
                self.assertEqual(int(row[col["Mix Block Dim"]]), 2 * int(row[col["Block Dim"]]))
        self.assertTrue(types <= {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC"}, types)
        self.assertIn("AI_VECTOR_CORE", types)
        for row in table(self.b3, "task_time")[1:]:
            self.assertRegex(row[6], r"^\d+\.\d{3}\t$")
            self.assertIn(row[2], {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC"} if row[1] != "N/A" else {"PROFILING_ENABLE", "PROFILING_DISABLE"})
        trimmed = r"^\d+(\.\d*[1-9])?$"  # "7.84", "100": no trailing zeros, as the real op_statistic
        for row in table(REAL, "op_statistic")[1:] + table(self.b3, "op_statistic")[1:]:
            for cell in row[4:9]:
                self.assertRegex(cell, trimmed)
        # Every level the collection reported, by msprof's level names: the AscendCL calls msame made (it runs the
        # model through the library, as CANN's msame does), GE's model load and execution, and the node launches
        # of the load (the real export's "node,launch" row).
        api = table(self.b3, "api_statistic")
        self.assertEqual({r[2] for r in api[1:] if r[1] == "acl"},
                         {"aclrtSetDevice", "aclmdlLoadFromFile", "aclmdlGetDesc", "aclrtMalloc", "aclrtMemcpy", "aclmdlExecute", "aclrtFree",
                          "aclmdlUnload", "aclrtResetDevice"})
        self.assertEqual({(r[1], r[2]) for r in api[1:] if r[1] != "acl"}, {("model", "load"), ("model", "execute"), ("node", "launch")})
        self.assertEqual({r[1] for r in table(REAL, "api_statistic")[1:]}, {"acl", "node"})
        self.assertIn(("node", "launch"), {(r[1], r[2]) for r in table(REAL, "api_statistic")[1:]})

    def test_the_910b_writes_stars_records(self):
        dev = os.path.join(os.path.dirname(self.b3), "device_0", "data")
        self.assertEqual(glob.glob(f"{dev}/hwts.data*"), [], "a STARS chip has no HWTS log")
        # The ACSQ log (ACSQ_TASK_FMT): the func type in the low 6 bits (0 start, 1 end), the SQE type in the high 6.
        log = records(dev, "stars_soc.data.0", "4HQHH11L")
        self.assertTrue(log and all(r[0] & 63 in (0, 1) for r in log))
        opened, spans = {}, {}
        for r in log:
            if r[0] & 63 == 0:
                opened[(r[2], r[3])] = r[4]
            else:
                spans.setdefault((r[2], r[3]), []).append(r[4] - opened.pop((r[2], r[3])))
        summary = table(self.b3, "op_summary")
        col = {c: i for i, c in enumerate(summary[0])}
        ns = lambda cell: int(cell.strip().replace(".", ""))  # noqa: E731
        for r in summary[1:]:
            self.assertIn(ns(r[col["Task Duration(us)"]]), spans[(int(r[col["Stream ID"]]), int(r[col["Task ID"]]))])
        # The FFTS context PMU (FFTS_PMU_FMT, func type 0b101000): one AIC record for a cube task (ffts type 0), one
        # AIV record for a vector task, both parts of a MIX_AIC task (ffts type 4, sub-task types 6 and 7).
        pmu = records(dev, "ffts_profile.data.0", "4HQ4HQ12Q")
        self.assertTrue(all(r[0] & 63 == 0b101000 for r in pmu))
        parts = {}
        for r in pmu:
            ffts, sub = r[7] >> 13, r[5] & 0xFF
            kind = ("AIV" if sub == 7 else "AIC") if ffts == 4 else ("AIC" if ffts == 0 else "AIV")
            parts.setdefault((r[2], r[3]), []).append((kind, r[10]))
        for r in summary[1:]:
            mine = parts[(int(r[col["Stream ID"]]), int(r[col["Task ID"]]))][:2 if r[col["Task Type"]] == "MIX_AIC" else 1]
            want = {"AI_CORE": {"AIC"}, "AI_VECTOR_CORE": {"AIV"}, "MIX_AIC": {"AIC", "AIV"}}[r[col["Task Type"]]]
            self.assertEqual({k for k, _ in mine}, want, r[col["Op Name"]])
            cycles = dict(mine)
            self.assertEqual(cycles.get("AIC", 0), int(r[col["aic_total_cycles"]]))
            self.assertEqual(cycles.get("AIV", 0), int(r[col["aiv_total_cycles"]]))

    def test_the_db_holds_the_tasks_of_op_summary(self):
        con = sqlite3.connect(f"file:{self.b3}/msprof_20260101000000.db?mode=ro", uri=True)
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        self.assertEqual(q("SELECT value FROM META_DATA WHERE name = 'SCHEMA_VERSION'"), [("1.2.0",)])
        self.assertEqual(q("SELECT name FROM NPU_INFO"), [("Ascend910B3",)])
        tasks = q("""SELECT t.startNs, t.endNs, t.streamId, t.taskId, n.value, y.value, i.blockNum FROM TASK t
                     JOIN COMPUTE_TASK_INFO i ON i.globalTaskId = t.globalTaskId
                     JOIN STRING_IDS n ON n.id = i.name JOIN STRING_IDS y ON y.id = i.taskType ORDER BY t.globalTaskId""")
        summary = table(self.b3, "op_summary")
        col = {c: i for i, c in enumerate(summary[0])}
        ns = lambda cell: int(cell.strip().replace(".", ""))  # noqa: E731  "µs with three decimals" as ns
        want = [(ns(r[col["Task Start Time(us)"]]), ns(r[col["Task Start Time(us)"]]) + ns(r[col["Task Duration(us)"]]),
                 int(r[col["Stream ID"]]), int(r[col["Task ID"]]), r[col["Op Name"]], r[col["Task Type"]], int(r[col["Block Dim"]]))
                for r in summary[1:]]
        self.assertEqual(tasks, want)
        cycles = dict(q("""SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name
                           WHERE s.value = 'aic_total_cycles'"""))
        self.assertEqual([int(cycles[k]) for k in sorted(cycles)], [int(r[col["aic_total_cycles"]]) for r in summary[1:]])
        api = q("""SELECT a.type, s.value, a.connectionId FROM CANN_API a JOIN STRING_IDS s ON s.id = a.name
                   WHERE a.type = 20000 AND s.value = 'aclmdlExecute'""")
        self.assertEqual(len(api), 2)  # one aclmdlExecute per inference, of msprof's acl level
        linked = q("SELECT DISTINCT connectionId FROM TASK JOIN COMPUTE_TASK_INFO USING (globalTaskId) ORDER BY connectionId")
        self.assertEqual(linked, sorted((c,) for _, _, c in api), "each inference's tasks carry its API call's connection id")

if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
