#!/usr/bin/python3
"""profparse on real profiling data made outside npukit: the HWTS task log of a real Ascend 910
(tests/data/prof_raw/ascend910_job3, 62,847 records) into task_time, checked against an independent numpy decode of
the same bytes (msprof's layout: byte 0 low 3 bits the log type, u16 task id at 6, u64 counter at 8, stream at 16).
usage: test_prof_real.py BUILD_DIR WORK_DIR"""
import csv
import glob
import os
import shutil
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402

BUILD, WORK = T.paths()
PROFPARSE = T.tool(BUILD, "profparse")
JOB3 = os.path.join(T.DATA, "prof_raw", "ascend910_job3")
MHZ = 100  # the Ascend 910's HWTS clock (hwts_frequency in tests/data/prof_raw/ascend910_prof2023/device_0/info.json.0)


def reference_pairs(path):
    """(stream, task, start, end) per end record whose (stream, task) has an open start; the latest start wins."""
    rec = np.fromfile(path, dtype=np.uint8).reshape(-1, 64)
    kind = rec[:, 0] & 7
    task = rec[:, 6].astype(np.int64) | rec[:, 7].astype(np.int64) << 8
    ticks = rec[:, 8:16].copy().view("<u8").ravel()
    stream = rec[:, 16:20].copy().view("<u4").ravel() % 2048
    open_starts, pairs = {}, []
    for k, s, t, c in zip(kind.tolist(), stream.tolist(), task.tolist(), ticks.tolist()):
        if k == 0:
            open_starts[(s, t)] = c
        elif k == 1 and (s, t) in open_starts:
            pairs.append((s, t, open_starts.pop((s, t)), c))
    return pairs


def descriptions(folder):
    names = {}
    for path in glob.glob(f"{folder}/Framework.host.vm.task_desc_info.*"):
        for line in open(path):
            f = line.split()
            if len(f) == 4:
                names[int(f[2])] = f[0]
    return names


class RealHwtsLog(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.job = os.path.join(WORK, "job3")
        shutil.rmtree(cls.job, ignore_errors=True)
        shutil.copytree(JOB3, cls.job)  # profparse writes its tables beside the data
        cls.out = T.must(PROFPARSE, "--export=on", f"--output={cls.job}", "--stamp=20260101000000")
        with open(f"{cls.job}/mindstudio_profiler_output/task_time_20260101000000.csv", newline="") as f:
            cls.rows = list(csv.DictReader(f))
        cls.pairs = reference_pairs(glob.glob(f"{JOB3}/hwts.log.data.*")[0])

    def test_one_row_per_start_end_pair(self):
        self.assertEqual(len(self.pairs), 31385)
        self.assertEqual(len(self.rows), len(self.pairs))
        for row, (stream, task, start, end) in zip(self.rows, self.pairs):
            self.assertEqual((int(row["stream_id"]), int(row["task_id"])), (stream, task))
            self.assertEqual(row["task_start(us)"], f"{start / MHZ:.3f}\t")
            self.assertEqual(row["task_stop(us)"], f"{end / MHZ:.3f}\t")
            self.assertAlmostEqual(float(row["task_time(us)"]), (end - start) / MHZ, places=3)
            self.assertEqual(row["kernel_type"], "AI_CORE")
            self.assertEqual(row["Device_id"], "1")

    def test_named_by_the_task_descriptions(self):
        names = descriptions(JOB3)
        named = [r for r in self.rows if int(r["task_id"]) in names]
        self.assertGreater(len(named), 2000)
        for r in named:
            self.assertEqual(r["kernel_name"], names[int(r["task_id"])])
        self.assertTrue(all(r["kernel_name"] == "N/A" for r in self.rows if int(r["task_id"]) not in names))

    def test_what_was_left_is_said(self):
        self.assertIn("ticks are taken at 100 MHz", self.out)
        self.assertIn("start(s) without an end make no task", self.out)

    def test_a_cut_log_is_read_as_far_as_it_is_whole(self):
        cut = os.path.join(WORK, "job3_cut")
        shutil.rmtree(cut, ignore_errors=True)
        os.makedirs(cut)
        src = glob.glob(f"{JOB3}/hwts.log.data.*")[0]
        with open(src, "rb") as f:
            data = f.read()
        with open(os.path.join(cut, os.path.basename(src)), "wb") as f:
            f.write(data[:64 * 1000 + 17])
        out = T.must(PROFPARSE, "--export=on", f"--output={cut}", "--stamp=20260101000000")
        self.assertIn("17 trailing byte(s)", out)
        with open(f"{cut}/mindstudio_profiler_output/task_time_20260101000000.csv") as f:
            self.assertGreater(sum(1 for _ in f), 400)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
