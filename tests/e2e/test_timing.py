#!/usr/bin/python3
"""The simulated clock from the command line: tilings in atc --mode=1/--mode=6, msame's timing line, batch and
chip scaling, a user's own SoC spec (--soc_spec) in atc and msame, and clear errors for bad specs and modes.

usage: test_timing.py BUILD_DIR WORK_DIR
"""
import glob
import json
import os
import re
import subprocess
import sys
import unittest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD, WORK = sys.argv[1], sys.argv[2]
ATC, MSAME = f"{BUILD}/tools/atc/atc", f"{BUILD}/tools/msame/msame"
SPEC_310P3 = f"{ROOT}/libcore/soc/specs/Ascend310P3.ini"
LINE = re.compile(r"Simulated NPU time: ([0-9.]+) ms per inference \(([0-9.]+) fps at batch (\d+), (\S+)\)")


run = T.call


def convert(name, *flags):
    run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/{name}", "--log=error", *flags])
    return f"{WORK}/{name}.om"


def simulated(om, *flags):
    out = run([MSAME, f"--model={om}", "--sim_mode=timing", *flags]).stdout
    m = LINE.search(out)
    assert m, out
    return float(m.group(1)), int(m.group(3)), m.group(4)


def write_spec(path, replace):
    with open(SPEC_310P3) as f:
        text = f.read()
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)


class Timing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        run(["/usr/bin/python3", f"{HERE}/export_calibration_models.py", WORK, "resnet18"])
        cls.b1 = convert("r18_b1", "--soc_version=Ascend310P3", "--input_shape=input:1,3,224,224")

    def test_tilings_show_in_mode_1_and_6(self):
        run([ATC, "--mode=1", f"--om={self.b1}", f"--json={WORK}/r18.json"])
        with open(f"{WORK}/r18.json") as f:
            tasks = json.load(f)["task"]
        convs = [t for t in tasks if t["type"] == "Conv2D"]
        self.assertTrue(convs)
        for t in convs:
            self.assertEqual(t["kind"], "cube")
            for key in ("block_m", "block_n", "base_m", "base_n", "base_k", "step_m", "step_n", "step_k", "db_l1", "db_l0", "order"):
                self.assertIn(key, t["tiling"])
            self.assertEqual(t["block_dim"], t["tiling"]["block_dim"])
            self.assertLessEqual(t["block_dim"], 8 * t["tiling"]["block_batch"] * 8)
        adds = [t for t in tasks if t["kind"] == "vector"]
        self.assertTrue(all("ub_tile" in t["tiling"] for t in adds))
        shown = run([ATC, "--mode=6", f"--om={self.b1}"]).stdout
        self.assertRegex(shown, r"task \d+ Conv2D \S+: cube block_dim=\d+ split=")
        self.assertRegex(shown, LINE.pattern)

    def test_msame_prints_the_line_after_a_full_run(self):
        out = run([MSAME, f"--model={self.b1}", "--loop=2"]).stdout
        m = LINE.search(out)
        self.assertTrue(m, out)
        self.assertEqual(m.group(4), "Ascend310P3")
        self.assertLess(out.index("Inference average time"), m.start())
        ms, batch, _ = simulated(self.b1)
        self.assertEqual(batch, 1)
        self.assertAlmostEqual(float(m.group(1)), ms, places=4)

    def test_log_error_silences_info_in_every_tool(self):
        for env_level, flags in (({}, ["--log=error"]), ({"ASCEND_GLOBAL_LOG_LEVEL": "3"}, [])):
            p = subprocess.run([MSAME, f"--model={self.b1}", "--loop=2", *flags], capture_output=True, text=True,
                               env={**os.environ, **env_level})
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertNotIn("[INFO]", p.stdout + p.stderr)
            self.assertRegex(p.stdout, LINE.pattern)  # results are not log lines: they stay
        self.assertIn("[INFO] msame run success", run([MSAME, f"--model={self.b1}"]).stdout)
        # ... and in the other tools: atc, msaccucmp, profparse, transplt, each also writing a log file when it logs.
        import numpy as np
        np.save(f"{WORK}/a.npy", np.ones(8, np.float32))
        prof = f"{WORK}/log_prof"
        subprocess.run(["rm", "-rf", prof])
        acl = f"{WORK}/log_acl.json"
        with open(acl, "w") as f:
            json.dump({"profiler": {"switch": "on", "output": prof}}, f)
        run([MSAME, f"--model={self.b1}", f"--acl_json_path={acl}", "--sim_mode=timing"])
        with open(f"{WORK}/train.py", "w") as f:
            f.write("import torch\nx = torch.randn(2).cuda()\n")
        logs = f"{WORK}/plogs"
        subprocess.run(["rm", "-rf", logs])
        for cmd in ([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/log_atc", "--soc_version=Ascend310P3",
                     "--input_shape=input:1,3,224,224"],
                    [f"{BUILD}/tools/msaccucmp/msaccucmp", "file_compare", "-m", f"{WORK}/a.npy", "-g", f"{WORK}/a.npy", "-out", f"{WORK}/log_fc"],
                    [f"{BUILD}/tools/profparse/profparse", "--export=on", f"--output={prof}"],
                    [f"{BUILD}/tools/transplt/transplt", "-i", f"{WORK}/train.py", "-o", f"{WORK}/log_tp", "--force"]):
            p = subprocess.run(cmd + ["--log=error"], capture_output=True, text=True, env={**os.environ, "ASCEND_PROCESS_LOG_PATH": logs})
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertNotIn("[INFO]", p.stdout + p.stderr, cmd[0])
            p = subprocess.run(cmd + ["--log=info"], capture_output=True, text=True, env={**os.environ, "ASCEND_PROCESS_LOG_PATH": logs})
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(glob.glob(f"{logs}/debug/plog/plog-*.log"))

    def test_batch_and_chip_scaling(self):
        ms1, _, _ = simulated(self.b1)
        b8 = convert("r18_b8", "--soc_version=Ascend310P3", "--input_shape=input:8,3,224,224")
        ms8, batch, _ = simulated(b8)
        self.assertEqual(batch, 8)
        self.assertGreater(ms8, ms1)  # more work per inference ...
        self.assertLess(ms8, 8 * ms1)  # ... but batching amortises launches and weight traffic
        big = convert("r18_910b", "--soc_version=Ascend910B1", "--input_shape=input:8,3,224,224")
        ms_big, _, soc = simulated(big)
        self.assertEqual(soc, "Ascend910B1")
        self.assertLess(ms_big, ms8)

    def test_own_soc_spec_in_msame_and_atc(self):
        fast = f"{WORK}/fast.ini"
        write_spec(fast, [("cube_freq=1060", "cube_freq=2120"), ("memory_bandwidth_gbps=204.8", "memory_bandwidth_gbps=409.6")])
        base, _, _ = simulated(self.b1)
        quick, _, soc = simulated(self.b1, f"--soc_spec={fast}")
        self.assertLess(quick, base)
        # A full run goes through AscendCL, which loads the model onto the same spec: the same clock.
        full = LINE.search(run([MSAME, f"--model={self.b1}", f"--soc_spec={fast}"]).stdout)
        self.assertEqual(float(full.group(1)), quick)
        mine = f"{WORK}/mychip.ini"
        write_spec(mine, [("SoC_version=Ascend310P3", "SoC_version=MyChip"), ("ai_core_cnt=8", "ai_core_cnt=4")])
        om = convert("r18_mychip", f"--soc_spec={mine}", "--input_shape=input:1,3,224,224")
        ms, _, soc = simulated(om)  # the spec travels inside the .om
        self.assertEqual(soc, "MyChip")
        self.assertGreater(ms, base)
        run([ATC, "--mode=1", f"--om={om}", f"--json={WORK}/mychip.json"])
        with open(f"{WORK}/mychip.json") as f:
            self.assertLessEqual(max(t["block_dim"] for t in json.load(f)["task"]), 4 * 4)

    def test_tilings_that_do_not_fit_another_chip_are_retiled(self):
        om = convert("r18_310", "--soc_version=Ascend310", "--input_shape=input:1,3,224,224")  # 1 MiB L1
        p = run([MSAME, f"--model={om}", "--sim_mode=timing", f"--soc_spec={ROOT}/libcore/soc/specs/Ascend910B1.ini"])
        self.assertRegex(p.stdout, r"\[WARNING\] \d+ task tiling\(s\) do not fit Ascend910B1; re-tiled")
        m = LINE.search(p.stdout)
        self.assertTrue(m and float(m.group(1)) > 0 and m.group(4) == "Ascend910B1", p.stdout)

    def test_bad_specs_and_modes_are_clear_errors(self):
        bad = f"{WORK}/bad.ini"
        write_spec(bad, [("ai_core_cnt=8", "ai_core_cnt=eight")])
        p = run([MSAME, f"--model={self.b1}", f"--soc_spec={bad}"], ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("ai_core_cnt", p.stdout)
        self.assertIn("bad.ini", p.stdout)
        p = run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/x", f"--soc_spec={bad}"], ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ai_core_cnt", p.stdout + p.stderr)
        p = run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/x", f"--soc_spec={SPEC_310P3}",
                 "--soc_version=Ascend910B1"], ok=False)
        self.assertIn("describes Ascend310P3", p.stdout + p.stderr)
        p = run([MSAME, f"--model={self.b1}", "--sim_mode=fast"], ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--sim_mode", p.stdout)
        p = run([MSAME, f"--model={WORK}/resnet18.onnx", "--sim_mode=timing"], ok=False)
        self.assertIn("reference path has no simulated clock", p.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
