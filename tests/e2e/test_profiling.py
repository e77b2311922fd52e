#!/usr/bin/python3
"""Profiling end to end: torchvision resnet18 -> atc -> msame with profiling on -> profparse --export.
Checks op_summary's columns (CANN's order), one row per device task per iteration, starts and durations on
the simulated clock, step_trace rows per --loop, the timeline as trace-event JSON, the other metric groups,
json summaries, iteration filters, per-iteration timelines, diff, and damaged raw data (truncated slices,
garbage, a missing info.json): a clear error or a warned export, never a crash or a half-written file.

usage: test_profiling.py BUILD_DIR WORK_DIR
"""
import csv
import glob
import json
import os
import re
import shutil
import struct
import sys
import unittest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD, WORK = sys.argv[1], sys.argv[2]
ATC, MSAME, PROFPARSE = (f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "profparse"))
LOOPS = 3
# CANN 8.5's op_summary on an Ascend310P3 (msprof 25.5: one AI Core kind, HWTS, so no Mix Block Dim or Context ID);
# the 910B's split-core columns are checked against a real export in test_prof_columns.py.
BASE = ["Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type", "Task Start Time(us)",
        "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "HF32 Eligible", "Input Shapes", "Input Data Types",
        "Input Formats", "Output Shapes", "Output Data Types", "Output Formats", "aicore_time(us)", "total_cycles"]
PIPE = ["vec_time(us)", "vec_ratio", "mac_time(us)", "mac_ratio", "scalar_time(us)", "scalar_ratio", "mte1_time(us)", "mte1_ratio",
        "mte2_time(us)", "mte2_ratio", "mte3_time(us)", "mte3_ratio", "icache_miss_rate", "memory_bound", "cube_utilization(%)"]
ARITH = ["mac_fp16_ratio", "mac_int8_ratio", "vec_fp32_ratio", "vec_fp16_ratio", "vec_int32_ratio", "vec_misc_ratio", "cube_fops", "vector_fops"]
MEMORY = ["ub_read_bw(GB/s)", "ub_write_bw(GB/s)", "l1_read_bw(GB/s)", "l1_write_bw(GB/s)", "l2_read_bw(GB/s)", "l2_write_bw(GB/s)",
          "main_mem_read_bw(GB/s)", "main_mem_write_bw(GB/s)"]
TAIL = ["achieved_flops(TFLOPS)", "achieved_bandwidth(GB/s)", "roofline_bound"]  # npukit's, after msprof's


run = T.call


def collect(name, metrics="PipeUtilization", slice_bytes=4096, model="resnet18"):
    """Profiles WORK/<model>.om under WORK/name; returns (PROF dir, msame stdout)."""
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    acl = os.path.join(WORK, name + ".json")
    with open(acl, "w") as f:
        json.dump({"profiler": {"switch": "on", "output": out, "aic_metrics": metrics, "aicpu": "on", "task_time": "on"}}, f)
    p = run([MSAME, f"--model={WORK}/{model}.om", f"--acl_json_path={acl}", f"--loop={LOOPS}"],
            env={"PROFILING_SLICE_BYTES": str(slice_bytes)})
    dirs = glob.glob(f"{out}/PROF_*")
    assert len(dirs) == 1, dirs
    return dirs[0], p.stdout


def export(prof, *extra, ok=True):
    return run([PROFPARSE, "--export=on", f"--output={prof}", "--stamp=20260101000000", *extra], ok=ok)


def ns(text):
    """A "µs with three decimals" cell (a timestamp ends in msprof's TAB) as integer nanoseconds (exact, unlike float µs
    near 1.8e15)."""
    whole, _, frac = text.rstrip("\t").partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def raw_records(folder, name, fmt):
    """Every record of a sliced raw file, decoded with Python's struct by msprof's own format string (StructFmt in
    Ascend/msprof analysis/msparser/data_struct_size_constant.py): an independent reading of the layout."""
    size = struct.calcsize("=" + fmt)
    data = slices(folder, name)
    return [struct.unpack_from("=" + fmt, data, at) for at in range(0, len(data) - size + 1, size)]


def slices(folder, name):
    paths = sorted(glob.glob(f"{folder}/{name}.slice_*[0-9]"), key=lambda p: int(p.rsplit("_", 1)[1]))
    data = b""
    for path in paths:
        with open(path, "rb") as f:
            data += f.read()
    return data


def hash_dic(prof):
    text = slices(f"{prof}/host/data", "unaging.additional.hash_dic").decode()
    return {int(k): v for k, _, v in (line.partition(":") for line in text.splitlines())}


def load_json(path):
    with open(path) as f:
        return json.load(f)


def rows(prof, kind):
    files = sorted(glob.glob(f"{prof}/mindstudio_profiler_output/{kind}_*.csv"))
    assert len(files) == 1, files
    with open(files[0], newline="") as f:
        return list(csv.reader(f))


class Profiling(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        run(["/usr/bin/python3", f"{HERE}/export_calibration_models.py", WORK, "resnet18"])
        # One stream, so that every task starts when the one before it ends (MultiStream covers the default).
        run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/resnet18", "--soc_version=Ascend310P3",
             "--input_shape=input:1,3,224,224", "--log=error", "--enable_single_stream=true"])
        run([ATC, "--mode=1", f"--om={WORK}/resnet18.om", f"--json={WORK}/resnet18.json"])
        model = load_json(f"{WORK}/resnet18.json")
        cls.device_tasks = sorted(t["task_id"] for t in model["task"] if t["kind"] != "view")
        cls.prof, cls.msame_out = collect("pipe")
        export(cls.prof)

    def test_op_summary_columns_follow_cann(self):
        self.assertEqual(rows(self.prof, "op_summary")[0], BASE + PIPE + TAIL)
        latest = collect("latest")[0]
        export(latest, "--cann_version=latest")
        self.assertEqual(rows(latest, "op_summary")[0][11], "Block Num", "msprof 26.x renamed Block Dim")

    def test_every_task_once_per_iteration_on_the_simulated_clock(self):
        table = rows(self.prof, "op_summary")
        head, body = table[0], table[1:]
        col = {c: i for i, c in enumerate(head)}
        self.assertEqual(len(body), LOOPS * len(self.device_tasks))
        per_iter = [body[i * len(self.device_tasks):(i + 1) * len(self.device_tasks)] for i in range(LOOPS)]
        sim_ms = float(re.search(r"Simulated NPU time: ([0-9.]+) ms", self.msame_out).group(1))
        steps = rows(self.prof, "step_trace")[1:]
        self.assertEqual(len(steps), LOOPS)
        for it, chunk in enumerate(per_iter):
            self.assertEqual(sorted(int(r[col["Task ID"]]) for r in chunk), self.device_tasks)
            starts = [ns(r[col["Task Start Time(us)"]]) for r in chunk]
            durs = [ns(r[col["Task Duration(us)"]]) for r in chunk]
            for k in range(1, len(chunk)):  # one stream: each task starts the nanosecond the previous ends
                self.assertEqual(starts[k], starts[k - 1] + durs[k - 1])
                self.assertEqual(chunk[k][col["Task Wait Time(us)"]], "0.000")
            iter_time = ns(steps[it][5])
            self.assertLessEqual(abs(sum(durs) - iter_time), 1)
            self.assertAlmostEqual(iter_time / 1e6, sim_ms, delta=1e-4)
            self.assertLessEqual(abs(ns(steps[it][4]) - (starts[-1] + durs[-1])), 1)
        for r in body:
            self.assertRegex(r[col["Task Start Time(us)"]], r"^\d+\.\d{3}\t$")
            if r[col["Task Type"]] == "AI_CORE":
                ratio = float(r[col["mac_ratio"]])
                self.assertTrue(0 <= ratio <= 1, r)

    def test_aicpu_tasks_have_na_metrics_in_rows_as_wide_as_the_header(self):
        # must_keep_origin_dtype puts 310P3's fp32 convolutions on AI CPU: no PMU record for those tasks.
        run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/resnet18_cpu", "--soc_version=Ascend310P3",
             "--input_shape=input:1,3,224,224", "--precision_mode=must_keep_origin_dtype", "--log=error"])
        out = os.path.join(WORK, "aicpu")
        shutil.rmtree(out, ignore_errors=True)
        run([MSAME, f"--model={WORK}/resnet18_cpu.om", "--sim_mode=timing"],
            env={"PROFILING_MODE": "true", "PROFILING_OPTIONS": json.dumps({"output": out})})
        prof = glob.glob(f"{out}/PROF_*")[0]
        export(prof)
        table = rows(prof, "op_summary")
        col = {c: i for i, c in enumerate(table[0])}
        self.assertTrue(all(len(r) == len(table[0]) for r in table))
        cpu = [r for r in table[1:] if r[col["Task Type"]] == "AI_CPU"]
        self.assertTrue(cpu)
        self.assertTrue(all(r[i] == "N/A" for r in cpu for i in range(col["aicore_time(us)"], len(r))))

    def test_raw_records_decode_with_msprofs_struct_formats(self):
        dev, host = f"{self.prof}/device_0/data", f"{self.prof}/host/data"
        # HWTS log (HWTS_LOG_FMT): byte 0's low 3 bits the log type, its high 4 a counter; task id, syscnt, stream.
        log = raw_records(dev, "hwts.data.0", "BBHHHQ12I")
        counters = [r[0] >> 4 for r in log]
        self.assertTrue(all(b == (a + 1) % 16 for a, b in zip(counters, counters[1:])), "no record lost")
        opened, pairs = {}, []
        for r in log:
            key = (r[6] % 2048, r[4])
            if r[0] & 7 == 0:
                opened[key] = r[5]
            else:
                pairs.append((key, r[5] - opened.pop(key)))
        self.assertEqual(opened, {})
        tt = [(int(r[3]), int(r[4]), ns(r[5])) for r in rows(self.prof, "task_time")[1:]]
        self.assertEqual(sorted(tt), sorted((s, t, d) for (s, t), d in pairs))  # 1 GHz ticks: one tick one ns
        # AI Core PMU (AIC_PMU_FMT): task id, total cycles, the 8 events sample.json lists, stream id.
        pmu = raw_records(dev, "aicore.data.0", "BBHHHII10Q8I")
        summary = rows(self.prof, "op_summary")
        col = {c: i for i, c in enumerate(summary[0])}
        self.assertEqual([(r[17] % 2048, r[4], r[7]) for r in pmu],
                         [(int(r[col["Stream ID"]]), int(r[col["Task ID"]]), int(r[col["total_cycles"]])) for r in summary[1:]])
        events = load_json(f"{self.prof}/device_0/sample.json")["ai_core_profiling_events"].split(",")
        mac = [r[9 + events.index("0xa")] / r[7] for r in pmu]
        self.assertEqual([f"{m:.3f}".rstrip("0").rstrip(".") for m in mac],
                         [r[col["mac_ratio"]].rstrip("0").rstrip(".") for r in summary[1:]])
        # Step trace (STEP_TRACE_FMT, ts_track tag 10): model start 0, model end 1, iteration end 4 per iteration.
        steps = raw_records(dev, "ts_track.data.0", "BBHLQQQHHHH")
        self.assertEqual([(r[1], r[5], r[9]) for r in steps], [(10, i, tag) for i in range(1, LOOPS + 1) for tag in (0, 1, 4)])
        # Host records open with the magic 0x5A5A and a level; node_basic_info names each op through hash_dic.
        names = hash_dic(self.prof)
        apis = raw_records(host, "unaging.api_event.data", "HHIIIQQQ")
        self.assertTrue(all(r[0] == 0x5A5A and r[1] in (20000, 15000, 10000) for r in apis))
        nodes = raw_records(host, "aging.compact.node_basic_info", "HHIIIQQIQIIQI")
        self.assertTrue(all(r[0] == 0x5A5A and r[1] == 10000 for r in nodes))
        self.assertEqual({names[r[6]] for r in nodes}, {r[col["Op Name"]] for r in summary[1:]})
        tracks = raw_records(host, "aging.compact.task_track", "HHIIIQHHHHQQ16B")
        self.assertEqual(len(tracks), len(nodes) + 2, "one per launched task, and the runtime's two")

    def test_timeline_is_trace_event_json_with_one_slice_per_task(self):
        files = glob.glob(f"{self.prof}/mindstudio_profiler_output/msprof_*.json")
        self.assertEqual(len(files), 1)
        events = load_json(files[0])
        self.assertIsInstance(events, list)
        meta = {(e["pid"], e["args"].get("name")) for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        hw = [pid for pid, name in meta if name == "Ascend Hardware"][0]
        hw_slices = [e for e in events if e["ph"] == "X" and e["pid"] == hw]
        slices = [e for e in hw_slices if e["args"]["Iteration"] > 0]
        self.assertEqual(len(slices), LOOPS * len(self.device_tasks))
        # The runtime's own tasks around the collection, outside every iteration.
        self.assertEqual(sorted(e["name"] for e in hw_slices if e["args"]["Iteration"] == 0), ["PROFILING_DISABLE", "PROFILING_ENABLE"])
        # Each aclmdlExecute's HostToDevice arrow: "s" on the API call, "f" on its iteration's first device task.
        flows = [e for e in events if e.get("cat") == "HostToDevice"]
        starts = {e["id"]: e for e in flows if e["ph"] == "s"}
        ends = {e["id"]: e for e in flows if e["ph"] == "f"}
        self.assertEqual(len(starts), LOOPS)
        self.assertEqual(set(starts), set(ends))
        first_of_iteration = {min(ns(e["ts"]) for e in slices if e["args"]["Iteration"] == k) for k in range(1, LOOPS + 1)}
        self.assertEqual({ns(e["ts"]) for e in ends.values()}, first_of_iteration)
        self.assertTrue(all(e["pid"] == hw and e["bp"] == "e" for e in ends.values()))
        for e in slices:
            self.assertRegex(e["ts"], r"^\d+\.\d{3}$")
            self.assertGreaterEqual(e["dur"], 0)
            for key in ("Model Id", "Task Type", "Physic Stream Id", "Task Id"):
                self.assertIn(key, e["args"])

    def test_overlap_analysis_slices_sum_to_the_step_time(self):
        events = load_json(glob.glob(f"{self.prof}/mindstudio_profiler_output/msprof_*.json")[0])
        pid = [e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "Overlap Analysis"][0]
        threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
        self.assertEqual(threads, {"Communication", "Communication(Not Overlapped)", "Computing", "Free"})
        spans = sorted((ns(e["ts"]), ns(e["ts"]) + round(e["dur"] * 1000), e["name"]) for e in events if e["ph"] == "X" and e["pid"] == pid)
        self.assertIn("Computing", {n for _, _, n in spans})
        self.assertLessEqual({n for _, _, n in spans}, {"Computing", "Free"}, "no collective communication here")
        for (_, end, _), (start, _, _) in zip(spans, spans[1:]):
            self.assertEqual(end, start, "the slices tile the device's span with no gap or overlap")
        freq = [e for e in events if e["ph"] == "C" and e["name"] == "AI Core Freq"]
        mhz = int(load_json(f"{self.prof}/device_0/info.json.0")["DeviceInfo"][0]["aic_frequency"])
        self.assertTrue(freq and all(e["args"] == {"MHz": mhz} for e in freq), freq)
        for step in rows(self.prof, "step_trace")[1:]:
            end, length = ns(step[4]), ns(step[5])
            covered = sum(max(0, min(b, end) - max(a, end - length)) for a, b, _ in spans)
            self.assertLessEqual(abs(covered - length), 1, step)

    def test_op_statistic_and_task_time(self):
        stat = rows(self.prof, "op_statistic")
        self.assertEqual(stat[0], ["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                                   "Max Time(us)", "Ratio(%)", "Med Time(us)", "StdDev(us)"])
        self.assertEqual(sum(int(r[3]) for r in stat[1:]), LOOPS * len(self.device_tasks))
        self.assertAlmostEqual(sum(float(r[8]) for r in stat[1:]), 100, delta=0.05)
        conv = [r for r in stat if r[1] == "Conv2D"][0]
        self.assertTrue(float(conv[5]) <= float(conv[9]) <= float(conv[7]))  # min <= median <= max
        tt = rows(self.prof, "task_time")
        kernels = [r for r in tt[1:] if r[1] != "N/A"]
        self.assertEqual(len(kernels), LOOPS * len(self.device_tasks))
        self.assertTrue(all(r[2] in ("AI_CORE", "AI_CPU") for r in kernels))
        # Non-kernel tasks are rows too, as msprof writes them: the runtime's PROFILING_ENABLE first, its
        # PROFILING_DISABLE last, on a stream of their own.
        control = [r for r in tt[1:] if r[1] == "N/A"]
        self.assertEqual([r[2] for r in control], ["PROFILING_ENABLE", "PROFILING_DISABLE"])
        self.assertEqual(tt[1][2], "PROFILING_ENABLE")
        self.assertEqual(tt[-1][2], "PROFILING_DISABLE")
        self.assertNotIn(control[0][3], {r[3] for r in kernels})

    def test_other_metric_groups_from_the_environment(self):
        for group, cols in (("ArithmeticUtilization", ARITH), ("Memory", MEMORY)):
            out = os.path.join(WORK, "env_" + group)
            shutil.rmtree(out, ignore_errors=True)
            opts = json.dumps({"output": out, "aic_metrics": group, "task_trace": "on"})
            run([MSAME, f"--model={WORK}/resnet18.om", "--sim_mode=timing", "--loop=2"],
                env={"PROFILING_MODE": "true", "PROFILING_OPTIONS": opts})
            prof = glob.glob(f"{out}/PROF_*")[0]
            export(prof)
            self.assertEqual(rows(prof, "op_summary")[0], BASE + cols + TAIL)

    def test_json_summaries_filters_and_per_iteration_timelines(self):
        prof = collect("filters")[0]
        export(prof, "--summary-format=json", "--model-id=0", "--iteration-id=2", "--timeline-per-iteration=on")
        out = f"{prof}/mindstudio_profiler_output"
        summary = load_json(glob.glob(f"{out}/op_summary_*.json")[0])
        self.assertEqual(len(summary), len(self.device_tasks))
        self.assertEqual(len(glob.glob(f"{out}/msprof_0_0_*_*.json")), 1)
        p = export(prof, "--model-id=0", ok=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--iteration-id", p.stdout)

    def test_query_and_diff(self):
        q = run([PROFPARSE, "--query=on", f"--output={os.path.dirname(self.prof)}"]).stdout
        self.assertIn("Iteration Number", q)
        self.assertRegex(q, rf"PROF_\S+\t\d+\t0\t{LOOPS}\t")
        d = run([PROFPARSE, "diff", self.prof, self.prof]).stdout
        self.assertIn("delta 0.000 us", d)

    def test_the_folder_as_msprof_lays_it_out(self):
        dev = f"{self.prof}/device_0"
        for name in ("info.json.0", "start_info.0", "end_info.0", "sample.json"):
            self.assertTrue(os.path.isfile(f"{dev}/{name}") and os.path.isfile(f"{dev}/{name}.done"), name)
            self.assertFalse(os.path.exists(f"{dev}/data/{name}"), "beside data/, not in it")
        info = load_json(f"{dev}/info.json.0")
        self.assertEqual(info["platform_version"], "4")  # msprof's code of the Ascend310P
        self.assertEqual(info["rank_id"], 0)
        self.assertTrue(info["hostUid"])
        self.assertEqual(info["DeviceInfo"][0]["ai_core_num"], 8)
        # The raw records are msprof's: the HWTS task log and AI Core PMU records on this chip, with the step
        # trace, and the host's compact records (no file of npukit's own layout).
        data = sorted(re.sub(r"\.slice_\d+$", "", f) for f in os.listdir(f"{dev}/data") if not f.endswith(".done"))
        self.assertEqual(sorted(set(data)), ["aicore.data.0", "hwts.data.0", "ts_track.data.0"])
        host = sorted({re.sub(r"\.slice_\d+$", "", f) for f in os.listdir(f"{self.prof}/host/data") if not f.endswith(".done")})
        self.assertEqual(host, ["aging.additional.tensor_info", "aging.compact.node_attr_info", "aging.compact.node_basic_info",
                                "aging.compact.task_track", "unaging.additional.hash_dic", "unaging.additional.type_info_dic",
                                "unaging.api_event.data"])
        # analyze/, which msprof-analyze's cluster mode wants beside mindstudio_profiler_output/: the communication
        # analysis of `msprof --analyze=on`, one entry per collective op, of which a one-device inference has none.
        for name in ("communication.json", "communication_matrix.json"):
            self.assertEqual(load_json(f"{self.prof}/analyze/{name}"), {})
        sample = load_json(f"{dev}/sample.json")
        self.assertEqual(sample["ai_core_profiling_events"], "0x8,0xa,0x9,0xb,0xc,0xd,0x54,0x55")
        # A folder of npukit 0.3 or before (its own record layout; there info.json & co. sat inside data/) is
        # refused with a code that says so, not misread.
        old = os.path.join(WORK, "old_layout", os.path.basename(self.prof))
        shutil.rmtree(os.path.dirname(old), ignore_errors=True)
        shutil.copytree(self.prof, old, ignore=shutil.ignore_patterns("mindstudio_profiler_output"))
        for name in ("info.json.0", "start_info.0", "end_info.0", "sample.json"):
            os.replace(f"{old}/device_0/{name}", f"{old}/device_0/data/{name}")
        p = export(old, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("EP0003", p.stdout)
        self.assertIn("npukit 0.3 or before", p.stdout)

    def test_damaged_raw_data(self):
        src = collect("damage_src", slice_bytes=1000)[0]
        # A slice cut short (no .done, a partial last record): export what is whole, with a warning.
        cut = os.path.join(WORK, "cut", os.path.basename(src))
        shutil.rmtree(os.path.dirname(cut), ignore_errors=True)
        shutil.copytree(src, cut)
        slices = sorted(glob.glob(f"{cut}/device_0/data/hwts.data.0.slice_*[0-9]"), key=lambda s: int(s.rsplit("_", 1)[1]))
        self.assertGreater(len(slices), 1)
        with open(slices[-1], "r+b") as f:
            f.truncate(max(os.path.getsize(slices[-1]) - 7, 1))
        p = export(cut)
        self.assertIn("incomplete", p.stdout)
        self.assertIn("[WARNING]", p.stdout)
        # Said once: the two sides of the export (timeline, summary) read the task log on two threads, and only
        # one of them writes the profile's warnings (two writers raced on the list: a fuzz run's heap corruption).
        self.assertEqual(p.stdout.count("is incomplete"), 1, p.stdout)
        # Garbage in the middle of the PMU records: skipped and counted; the export still completes.
        junk = os.path.join(WORK, "junk", os.path.basename(src))
        shutil.rmtree(os.path.dirname(junk), ignore_errors=True)
        shutil.copytree(src, junk)
        with open(f"{junk}/device_0/data/aicore.data.0.slice_1", "r+b") as f:
            f.seek(100)
            f.write(b"\xff" * 300)
        p = export(junk)
        self.assertIn("garbage", p.stdout)
        self.assertEqual(len(rows(junk, "op_summary")) - 1, LOOPS * len(self.device_tasks))
        # No info.json: a clear error naming the file, and no output files at all.
        lost = os.path.join(WORK, "lost", os.path.basename(src))
        shutil.rmtree(os.path.dirname(lost), ignore_errors=True)
        shutil.copytree(src, lost)
        os.remove(f"{lost}/device_0/info.json.0")
        p = export(lost, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("info.json.0", p.stdout)
        self.assertEqual(glob.glob(f"{lost}/mindstudio_profiler_output/*.csv*"), [])
        # Random bytes in every slice: never a crash, never a partial file.
        noise = os.path.join(WORK, "noise", os.path.basename(src))
        shutil.rmtree(os.path.dirname(noise), ignore_errors=True)
        shutil.copytree(src, noise)
        for f in glob.glob(f"{noise}/*/data/*.slice_*[0-9]"):
            with open(f, "wb") as h:
                h.write(os.urandom(os.path.getsize(f)))
        p = export(noise, ok=False)
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
        self.assertEqual(glob.glob(f"{noise}/mindstudio_profiler_output/*.tmp.*"), [])  # no temporary file left


class MultiStream(unittest.TestCase):
    """atc's default stream allocation: resnet18's downsampling shortcuts run on a second stream, next to the main
    branch, and every profiling view shows it (op_summary's Stream ID, task_time's stream_id, a timeline track per
    stream)."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        run(["/usr/bin/python3", f"{HERE}/export_calibration_models.py", WORK, "resnet18"])
        run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/resnet18_streams", "--soc_version=Ascend310P3",
             "--input_shape=input:1,3,224,224", "--log=error"])
        cls.prof, cls.msame_out = collect("streams", model="resnet18_streams")
        export(cls.prof)

    def test_shortcuts_overlap_the_main_branch_in_every_view(self):
        table = rows(self.prof, "op_summary")
        col = {c: i for i, c in enumerate(table[0])}
        first = table[1:1 + (len(table) - 1) // LOOPS]  # the first iteration
        streams = {int(r[col["Stream ID"]]) for r in first}
        self.assertEqual(streams, {0, 1})
        side = [r for r in first if r[col["Stream ID"]] == "1"]
        self.assertEqual(len(side), 3)  # the three downsampling convs
        self.assertTrue(all("downsample" in r[col["Op Name"]] for r in side), [r[col["Op Name"]] for r in side])
        main = [r for r in first if r[col["Stream ID"]] == "0"]
        for r in side:  # each shortcut runs while a main-branch task runs
            s, e = ns(r[col["Task Start Time(us)"]]), ns(r[col["Task Start Time(us)"]]) + ns(r[col["Task Duration(us)"]])
            self.assertTrue(any(ns(m[col["Task Start Time(us)"]]) < e and s < ns(m[col["Task Start Time(us)"]]) + ns(m[col["Task Duration(us)"]])
                                for m in main), r[col["Op Name"]])
        tt = rows(self.prof, "task_time")
        self.assertEqual({r[3] for r in tt[1:] if r[1] != "N/A"}, {"0", "1"})
        events = load_json(glob.glob(f"{self.prof}/mindstudio_profiler_output/msprof_*.json")[0])
        tracks = {e["tid"] for e in events if e["ph"] == "X" and e.get("args", {}).get("Iteration", 0) > 0}
        self.assertEqual(tracks, {0, 1})

    def test_one_stream_is_no_faster(self):
        run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/resnet18_single", "--soc_version=Ascend310P3",
             "--input_shape=input:1,3,224,224", "--log=error", "--enable_single_stream=true"])
        single = float(re.search(r"Simulated NPU time: ([0-9.]+) ms", run([MSAME, f"--model={WORK}/resnet18_single.om", "--sim_mode=timing"]).stdout).group(1))
        streams = float(re.search(r"Simulated NPU time: ([0-9.]+) ms", self.msame_out).group(1))
        # resnet18's shortcut conv wants every core too: on its own stream it saves its launch and pays the event
        # (the unit tests ScheduleStreams.* show branches that fit the cores side by side taking max(a, b)).
        self.assertLessEqual(streams, single)
        p = run([ATC, "--mode=6", f"--om={WORK}/resnet18_streams.om"])
        self.assertRegex(p.stdout, r"stream_num\D+2\b")
        p = run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/bad", "--soc_version=Ascend310P3",
                 "--enable_single_stream=yes"], ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--enable_single_stream", p.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
