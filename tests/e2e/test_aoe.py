#!/usr/bin/python3
"""aoe end to end on torchvision resnet18 and a 2-layer transformer encoder (Ascend310P3):
the bank is written; atc with TUNE_BANK_PATH gives an .om whose simulated time (msame) is lower than the
untuned one by exactly the improvement the result JSON claims; the guided search lands within 3% of the
exhaustive optimum on every tuned op while evaluating <= 5% of spaces over 1,000 points; a second run hits the
bank, REPEAT_TUNE=True re-tunes; concurrent aoe processes, one killed with SIGKILL, leave a bank that loads
with every committed record; bad input is an EG-coded error that leaves the bank untouched.

usage: test_aoe.py BUILD_DIR WORK_DIR
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD, WORK = sys.argv[1], sys.argv[2]
ATC, MSAME, AOE = (f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "aoe"))
SOC = "Ascend310P3"
SHAPES = {"resnet18": "input:1,3,224,224",
          "encoder": "input_ids:4,128;attention_mask:4,128;token_type_ids:4,128"}


def run(cmd, env=None, ok=True):
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if ok and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def aoe(model, bank, work, *flags, env=None, ok=True):
    e = {"TUNE_BANK_PATH": bank, "ASCEND_WORK_PATH": work, **(env or {})}
    job = [] if any(f.startswith("--job_type") for f in flags) else ["--job_type=2"]
    return run([AOE, *job, "--framework=5", f"--model={WORK}/{model}.onnx", f"--soc_version={SOC}",
                f"--input_shape={SHAPES[model]}", "--progress_bar=off", *flags], env=e, ok=ok)


def read(path):
    with open(path) as f:
        return f.read()


def result(work):
    files = glob.glob(f"{work}/aoe_result_opat_*_pid*.json")
    assert len(files) == 1, files
    with open(files[0]) as f:
        r = json.load(f)
    (key,) = r.keys()
    assert re.match(r"report_\d{17}_\d+$", key), key
    return r[key][0]["basic"], r[key][1]["OPAT"]


def simulated_ms(model, bank=None):
    out = os.path.join(WORK, f"{model}_{'tuned' if bank else 'plain'}")
    env = {"TUNE_BANK_PATH": bank} if bank else {}
    if not bank:
        env["TUNE_BANK_PATH"] = ""
    run([ATC, f"--model={WORK}/{model}.onnx", "--framework=5", f"--output={out}", f"--soc_version={SOC}",
         f"--input_shape={SHAPES[model]}"], env=env)
    line = run([MSAME, f"--model={out}.om", "--sim_mode=timing"]).stdout
    return float(re.search(r"Simulated NPU time: ([0-9.]+) ms", line).group(1)), out + ".om"


class Aoe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        run(["/usr/bin/python3", f"{HERE}/export_calibration_models.py", WORK, "resnet18", "encoder"])

    def test_bank_makes_atc_faster_by_the_claimed_improvement(self):
        for model in SHAPES:
            with self.subTest(model=model):
                bank, work = fresh(f"bank_{model}"), fresh(f"work_{model}")
                p = aoe(model, bank, work)
                self.assertIn("Tuning process finished.", p.stdout)
                self.assertRegex(p.stdout, r"Performance improved by \d+\.\d\d%")
                self.assertRegex(p.stdout, r"\[Aoe\]Aoe process finished,cost time \d+s\.")
                basic, opat = result(work)
                self.assertEqual(opat["opat_tune_result"], "tune success")
                self.assertGreater(opat["repo_summary"]["repo_add_num"], 0)
                self.assertTrue(glob.glob(f"{bank}/{SOC}/unified_bank/{SOC}_8_AiCore_*_runtime_kb.json"))
                for op in opat["repo_modified_operators"]["add_repo_operators"]:
                    before, after = op["performance_before_tune(us)"], op["performance_after_tune(us)"]
                    self.assertLess(after, before)
                    self.assertEqual(op["performance_improvement"], f"{(before / after - 1) * 100:.2f}%")
                    for key in ("evaluations", "space_size", "predicted_cycles_before", "predicted_cycles_after", "bound_after"):
                        self.assertIn(key, op)
                plain, _ = simulated_ms(model)
                tuned, om = simulated_ms(model, bank)
                self.assertLess(tuned, plain)
                claimed = opat["model_baseline_performance(ms)"] / opat["model_result_performance(ms)"] - 1
                self.assertAlmostEqual(plain / tuned - 1, claimed, delta=0.01 * max(claimed, 0.01))
                self.assertAlmostEqual(opat["model_baseline_performance(ms)"], plain, delta=1e-3)
                run([ATC, "--mode=1", f"--om={om}", f"--json={om}.json"])
                with open(f"{om}.json") as f:
                    sources = {t["tiling_source"] for t in json.load(f)["task"]}
                self.assertIn("tune_bank", sources)

    def test_guided_search_is_near_exhaustive_on_a_fraction_of_the_space(self):
        for model in SHAPES:
            with self.subTest(model=model):
                work_g, work_x = fresh(f"g_{model}"), fresh(f"x_{model}")
                aoe(model, fresh(f"bg_{model}"), work_g)
                aoe(model, fresh(f"bx_{model}"), work_x, "--search=exhaustive")
                g, x = result(work_g)[1]["operators"], result(work_x)[1]["operators"]
                self.assertEqual([o["tiling_key"] for o in g], [o["tiling_key"] for o in x])
                for a, b in zip(g, x):
                    self.assertLessEqual(a["performance_after_tune(us)"], b["performance_after_tune(us)"] * 1.03, a["op_name"])
                    self.assertLessEqual(b["performance_after_tune(us)"], a["performance_after_tune(us)"] * (1 + 1e-9))
                    if a["space_size"] > 1000:
                        self.assertLessEqual(a["evaluations"], 0.05 * a["space_size"], a["op_name"])
                        self.assertGreaterEqual(b["evaluations"], b["space_size"] * 0.99)

    def test_second_run_hits_the_bank_and_repeat_tune_retunes(self):
        bank = fresh("bank_rerun")
        t0 = time.time()
        aoe("resnet18", bank, fresh("first"), "--search=exhaustive")
        first = time.time() - t0
        added = result(os.path.join(WORK, "first"))[1]["repo_summary"]["repo_add_num"]
        t0 = time.time()
        aoe("resnet18", bank, fresh("second"), "--search=exhaustive")
        second = time.time() - t0
        s = result(os.path.join(WORK, "second"))[1]["repo_summary"]
        self.assertEqual(s["repo_hit_num"], added)
        self.assertEqual(s["repo_add_num"], 0)
        self.assertLess(second, first)
        aoe("resnet18", bank, fresh("repeat"), env={"REPEAT_TUNE": "True"})
        s = result(os.path.join(WORK, "repeat"))[1]["repo_summary"]
        self.assertEqual(s["repo_hit_num"], 0)
        self.assertEqual(s["total_num"], s["repo_add_num"] + s["repo_update_num"] + s["repo_unsatisfied_num"])

    def test_concurrent_runs_and_sigkill_leave_a_loadable_bank(self):
        bank = fresh("bank_shared")
        env = {**os.environ, "TUNE_BANK_PATH": bank}
        procs = []
        for i, model in enumerate(["resnet18", "encoder", "resnet18"]):
            env_i = {**env, "ASCEND_WORK_PATH": fresh(f"conc_{i}"), "REPEAT_TUNE": "True"}
            procs.append(subprocess.Popen([AOE, "--job_type=2", "--framework=5", f"--model={WORK}/{model}.onnx", f"--soc_version={SOC}",
                                           f"--input_shape={SHAPES[model]}", "--progress_bar=off", "--search=exhaustive"],
                                          env=env_i, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1.0)
        procs[2].send_signal(signal.SIGKILL)
        for p in procs[:2]:
            self.assertEqual(p.wait(timeout=300), 0)
        procs[2].wait()
        files = glob.glob(f"{bank}/{SOC}/unified_bank/*_runtime_kb.json")
        self.assertTrue(files)
        keys = set()
        for f in files:
            with open(f) as h:
                for line in h:
                    keys.add(json.loads(line)["info_dict"]["key"])  # every line parses
        for i in (0, 1):  # every record the finished runs committed is there
            for op in result(os.path.join(WORK, f"conc_{i}"))[1]["operators"]:
                if op["result"] in ("add", "update"):
                    self.assertIn(op["tiling_key"], keys)
        self.assertEqual(glob.glob(f"{bank}/{SOC}/unified_bank/*.tmp*"), [])
        run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/after_kill", f"--soc_version={SOC}",
             f"--input_shape={SHAPES['resnet18']}"], env={"TUNE_BANK_PATH": bank})

    def test_shards_merge_into_the_single_run_bank_byte_for_byte(self):
        single = fresh("bank_single")
        aoe("resnet18", single, fresh("w_single"))
        shards = []
        for k in (1, 2, 3):
            shards.append(fresh(f"bank_shard{k}"))
            aoe("resnet18", shards[-1], fresh(f"w_shard{k}"), f"--shard={k}/3")
        merged = os.path.join(WORK, "bank_merged")
        shutil.rmtree(merged, ignore_errors=True)
        run([AOE, "bank", "merge", merged, *shards])
        self.assertIn("all well-formed", run([AOE, "bank", "verify", merged]).stdout)
        single_files = sorted(glob.glob(f"{single}/**/*_runtime_kb.json", recursive=True))
        self.assertTrue(single_files)
        for f in single_files:
            self.assertEqual(read(f), read(f.replace(single, merged)))
        self.assertEqual(run([AOE, "bank", "diff", single, merged]).returncode, 0)
        self.assertEqual(run([AOE, "bank", "diff", single, shards[0]], ok=False).returncode, 3)
        p = aoe("resnet18", single, fresh("w_bad_shard"), "--shard=4/3", ok=False)
        self.assertIn("--shard", p.stdout)

    def test_bad_input_is_coded_and_leaves_the_bank_alone(self):
        bank = fresh("bank_bad")
        aoe("resnet18", bank, fresh("bad0"))
        snapshot = {f: read(f) for f in glob.glob(f"{bank}/**/*.json", recursive=True)}
        p = aoe("resnet18", os.path.join(WORK, "no_such_dir"), fresh("bad1"), ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("EG0002", p.stdout)
        bad_ops = os.path.join(WORK, "ops.json")
        for text, code in (('{"tune_ops_name": "conv"}', "EG0001"), ('[1, 2]', "EG0001"), ('{"ops": ["a"]}', "EG0001")):
            with open(bad_ops, "w") as f:
                f.write(text)
            p = aoe("resnet18", bank, fresh("bad2"), f"--tune_ops_file={bad_ops}", ok=False)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn(code, p.stdout)
        with open(bad_ops, "w") as f:
            json.dump({"tune_ops_name": ["no_such_op"], "tune_ops_type": ["Conv2D"]}, f)
        p = aoe("resnet18", bank, fresh("bad3"), f"--tune_ops_file={bad_ops}")
        self.assertIn("tune_ops_name no_such_op is not a tunable op", p.stdout)
        for f, text in snapshot.items():  # hits only: nothing rewritten
            self.assertEqual(read(f), text)
        p = aoe("resnet18", bank, fresh("bad4"), "--job_type=1", ok=False)
        self.assertIn("subgraph tuning is not built", p.stdout)
        victim = sorted(snapshot)[0]
        with open(victim, "a") as f:
            f.write("{not json\n")
        p = aoe("resnet18", bank, fresh("bad5"), ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("EG0011", p.stdout)
        self.assertIn(os.path.basename(victim), p.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
