#!/usr/bin/python3
"""aoe end to end on torchvision resnet18 and a 2-layer transformer encoder (Ascend310P3):
the bank is written; atc with TUNE_BANK_PATH gives an .om whose simulated time (msame) is lower than the
untuned one by exactly the improvement the result JSON claims; the guided search lands within 3% of the
exhaustive optimum on every tuned op while evaluating <= 5% of spaces over 1,000 points; a second run hits the
bank, REPEAT_TUNE=True re-tunes; concurrent aoe processes, one killed with SIGKILL, leave a bank that loads
with every committed record; bad input is an EG-coded error that leaves the bank untouched.
Subgraph tuning (--job_type=1): the subgraph bank is written, atc with it gives the simulated time the result
JSON claims, a second run hits it, and --reload resumes an interrupted job to the uninterrupted result.

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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD, WORK = sys.argv[1], sys.argv[2]
ATC, MSAME, AOE = (f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "aoe"))
SOC = "Ascend310P3"
SHAPES = {"resnet18": "input:1,3,224,224",
          "encoder": "input_ids:4,128;attention_mask:4,128;token_type_ids:4,128"}


run = T.call


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


def result(work, kind="opat"):
    files = glob.glob(f"{work}/aoe_result_{kind}_*_pid*.json")
    assert len(files) == 1, files
    with open(files[0]) as f:
        r = json.load(f)
    (key,) = r.keys()
    assert re.match(r"report_\d{17}_\d+$", key), key
    return r[key][0]["basic"], r[key][1][kind.upper()]


def om_ms(om):
    """msame's simulated time of an .om, in ms."""
    line = run([MSAME, f"--model={om}", "--sim_mode=timing"]).stdout
    return float(re.search(r"Simulated NPU time: ([0-9.]+) ms", line).group(1))


def simulated_ms(model, bank=None):
    out = os.path.join(WORK, f"{model}_{'tuned' if bank else 'plain'}")
    env = {"TUNE_BANK_PATH": bank} if bank else {}
    if not bank:
        env["TUNE_BANK_PATH"] = ""
    run([ATC, f"--model={WORK}/{model}.onnx", "--framework=5", f"--output={out}", f"--soc_version={SOC}",
         f"--input_shape={SHAPES[model]}"], env=env)
    return om_ms(out + ".om"), out + ".om"


def setUpModule():
    os.makedirs(WORK, exist_ok=True)
    run(["/usr/bin/python3", f"{HERE}/export_calibration_models.py", WORK, "resnet18", "encoder"])


class Aoe(unittest.TestCase):
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

    def test_singleop_descriptions_are_tuned_and_atc_singleop_takes_the_bank(self):
        ffn = {"op": "MatMulV2", "name": "ffn_out",  # a BERT-base FFN's second MatMul at batch 16, seq 128
               "input_desc": [{"format": "ND", "shape": [2048, 3072], "type": "float16"},
                              {"format": "ND", "shape": [3072, 768], "type": "float16"}],
               "output_desc": [{"format": "ND", "shape": [2048, 768], "type": "float16"}]}
        add = {"op": "Add", "input_desc": [{"format": "ND", "shape": [8, 16], "type": "float16"}] * 2,
               "output_desc": [{"format": "ND", "shape": [8, 16], "type": "float16"}]}
        ops_dir = fresh("singleop_models")
        with open(f"{ops_dir}/ops.json", "w") as f:
            json.dump([ffn, add], f)
        bank, work = fresh("bank_singleop"), fresh("w_singleop")
        run([AOE, "--job_type=2", f"--singleop={ops_dir}/ops.json", f"--soc_version={SOC}", "--progress_bar=off"],
            env={"TUNE_BANK_PATH": bank, "ASCEND_WORK_PATH": work})
        _, opat = result(work)
        (op,) = opat["operators"]  # the Add is a vector op: not tuned unless named
        self.assertEqual((op["op_name"], op["result"]), ("ffn_out", "add"))
        self.assertLess(op["performance_after_tune(us)"], op["performance_before_tune(us)"])
        times = {}
        for name, env in (("plain", {"TUNE_BANK_PATH": ""}), ("tuned", {"TUNE_BANK_PATH": bank})):
            out = os.path.join(WORK, f"singleop_{name}")
            shutil.rmtree(out, ignore_errors=True)
            run([ATC, f"--singleop={ops_dir}/ops.json", f"--output={out}", f"--soc_version={SOC}"], env=env)
            (om,) = glob.glob(f"{out}/0_MatMulV2_*.om")
            times[name] = om_ms(om)
            run([ATC, "--mode=1", f"--om={om}", f"--json={om}.json"])
            with open(f"{om}.json") as f:
                sources = {t["tiling_source"] for t in json.load(f)["task"] if t["type"] == "MatMulV2"}
            self.assertEqual(sources, {"tune_bank"} if name == "tuned" else {"builtin"})
        self.assertLess(times["tuned"], times["plain"])
        # the same description in a --model_path batch next to an ONNX model: a hit
        shutil.copy(f"{WORK}/resnet18.onnx", ops_dir)
        run([AOE, "--job_type=2", f"--model_path={ops_dir}", f"--soc_version={SOC}", "--progress_bar=off",
             f"--input_shape={SHAPES['resnet18']}"], env={"TUNE_BANK_PATH": bank, "ASCEND_WORK_PATH": fresh("w_batch")})
        with open(glob.glob(f"{WORK}/w_batch/aoe_result_opat_*.json")[0]) as f:
            reports = json.load(f)
        self.assertEqual(len(reports), 2)
        ops_report = next(v for k, v in reports.items() if k.endswith("_ops"))
        self.assertEqual(ops_report[1]["OPAT"]["repo_summary"]["repo_hit_num"], 1)

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
        p = aoe("resnet18", bank, fresh("bad4"), "--reload", ok=False)  # operator tuning has nothing to resume
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("--reload", p.stdout)
        victim = sorted(snapshot)[0]
        with open(victim, "a") as f:
            f.write("{not json\n")
        p = aoe("resnet18", bank, fresh("bad5"), ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("EG0012", p.stdout)
        self.assertIn(os.path.basename(victim), p.stdout)


def sgat(model, bank, work, *flags, env=None, ok=True):
    return aoe(model, bank, work, "--job_type=1", *flags, env=env, ok=ok)


class SubgraphTuning(unittest.TestCase):
    def test_bank_makes_atc_faster_by_the_claimed_improvement(self):
        for model in SHAPES:
            with self.subTest(model=model):
                bank, work = fresh(f"sg_bank_{model}"), fresh(f"sg_work_{model}")
                p = sgat(model, bank, work)
                self.assertRegex(p.stdout, r"Performance improved by \d+\.\d\d%")
                _, r = result(work, "sgat")
                self.assertEqual(r["sgat_tune_result"], "tune success")
                self.assertGreater(r["repo_summary"]["repo_add_num"], 0)
                with open(f"{bank}/subgraph.json") as f:
                    records = [json.loads(line) for line in f]
                self.assertEqual(len(records), r["repo_summary"]["repo_add_num"])
                for s in r["subgraphs"]:
                    self.assertLessEqual(s["model_performance_after(ms)"], s["model_performance_before(ms)"] * (1 + 1e-12))
                    if s["result"] == "add":
                        self.assertLessEqual(s["evaluations"], s["space_size"])
                plain, _ = simulated_ms(model)
                tuned, om = simulated_ms(model, bank)
                self.assertLess(tuned, plain)
                claimed = r["model_baseline_performance(ms)"] / r["model_result_performance(ms)"] - 1
                self.assertEqual(r["model_performance_improvement"], f"{claimed * 100:.2f}%")
                self.assertAlmostEqual(plain / tuned - 1, claimed, delta=0.01 * max(claimed, 0.01))
                workspace_om = glob.glob(f"{work}/aoe_workspace/{model}_*/tunespace/result/{model}_*_tune.om")
                self.assertEqual(len(workspace_om), 1)
                self.assertAlmostEqual(om_ms(workspace_om[0]), tuned, delta=1e-6)
                run([ATC, "--mode=1", f"--om={om}", f"--json={om}.json"])
                with open(f"{om}.json") as f:
                    text = f.read()
                self.assertIn("_l2_policy", text)  # the decisions travel in the .om
                self.assertIn("subgraph_bank", text)
                # off_optimize: CANN applies subgraph decisions only with buffer optimization
                run([ATC, f"--model={WORK}/{model}.onnx", "--framework=5", f"--output={WORK}/{model}_off", f"--soc_version={SOC}",
                     f"--input_shape={SHAPES[model]}", "--buffer_optimize=off_optimize"], env={"TUNE_BANK_PATH": bank})
                self.assertAlmostEqual(om_ms(f"{WORK}/{model}_off.om"), plain, delta=1e-6)

    def test_second_run_hits_the_subgraph_bank_and_repeat_tune_retunes(self):
        bank = fresh("sg_bank_rerun")
        sgat("encoder", bank, fresh("sg_first"))
        first = result(os.path.join(WORK, "sg_first"), "sgat")[1]
        sgat("encoder", bank, fresh("sg_second"))
        second = result(os.path.join(WORK, "sg_second"), "sgat")[1]
        banked = first["repo_summary"]["repo_add_num"]
        self.assertEqual(second["repo_summary"]["repo_hit_num"], banked)
        self.assertEqual(second["repo_summary"]["repo_add_num"], 0)
        self.assertTrue(all("evaluations" not in s for s in second["subgraphs"] if s["result"] == "repo_hit"))
        self.assertAlmostEqual(second["model_result_performance(ms)"], first["model_result_performance(ms)"], delta=1e-9)
        sgat("encoder", bank, fresh("sg_repeat"), env={"REPEAT_TUNE": "True"})
        again = result(os.path.join(WORK, "sg_repeat"), "sgat")[1]["repo_summary"]
        self.assertEqual(again["repo_hit_num"], 0)
        self.assertEqual(again["repo_update_num"], banked)

    def test_operator_tuning_after_subgraph_tuning_claims_what_atc_gives(self):
        bank, work_s, work_o = fresh("sg_then_op_bank"), fresh("sg_then_op_s"), fresh("sg_then_op_o")
        sgat("encoder", bank, work_s)
        aoe("encoder", bank, work_o)  # CANN's order: subgraphs first, then operators on the subgraph-tuned model
        s, o = result(work_s, "sgat")[1], result(work_o)[1]
        self.assertAlmostEqual(o["model_baseline_performance(ms)"], s["model_result_performance(ms)"], delta=1e-9)
        tuned, _ = simulated_ms("encoder", bank)
        self.assertAlmostEqual(tuned, o["model_result_performance(ms)"], delta=1e-6)
        self.assertLess(tuned, s["model_result_performance(ms)"])

    def test_sigkill_then_reload_finishes_the_job(self):
        work, bank = fresh("sg_kill"), fresh("sg_bank_kill")
        env = {**os.environ, "TUNE_BANK_PATH": bank, "ASCEND_WORK_PATH": work}
        proc = subprocess.Popen([AOE, "--job_type=1", "--framework=5", f"--model={WORK}/resnet18.onnx", f"--soc_version={SOC}",
                                 f"--input_shape={SHAPES['resnet18']}", "--progress_bar=off", "--search=exhaustive"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = None
        while proc.poll() is None and not journal:
            time.sleep(0.02)
            found = glob.glob(f"{work}/aoe_workspace/resnet18_*/progress.jsonl")
            journal = found[0] if found and os.path.getsize(found[0]) > 0 else None
        if proc.poll() is not None:
            self.skipTest("the job finished before it could be killed")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with open(journal) as f:
            done = len([line for line in f if line.endswith("\n")])
        for partial in glob.glob(f"{work}/aoe_result_sgat_*.json"):  # the killed run's report, as far as it got
            with open(partial) as f:
                self.assertEqual(len(json.load(f)), 1)  # whole JSON: it is rewritten atomically
            os.remove(partial)
        sgat("resnet18", bank, work, "--reload", "--search=exhaustive")
        r = result(work, "sgat")[1]
        self.assertGreaterEqual([x["result"] for x in r["subgraphs"]].count("resumed"), done)
        self.assertTrue(glob.glob(f"{work}/aoe_workspace/resnet18_*/tunespace/result/*_tune.om"))
        tuned, _ = simulated_ms("resnet18", bank)
        self.assertAlmostEqual(tuned, r["model_result_performance(ms)"], delta=1e-6)

    def test_guided_search_matches_exhaustive_on_fewer_evaluations(self):
        work_g, work_x = fresh("sg_guided"), fresh("sg_exhaustive")
        sgat("encoder", fresh("sg_bank_g"), work_g)
        sgat("encoder", fresh("sg_bank_x"), work_x, "--search=exhaustive")
        g, x = result(work_g, "sgat")[1], result(work_x, "sgat")[1]
        self.assertLessEqual(g["model_result_performance(ms)"], x["model_result_performance(ms)"] * 1.03)
        evaluations = lambda r: sum(s.get("evaluations", 0) for s in r["subgraphs"])
        self.assertLess(evaluations(g), evaluations(x) / 2)
        for s in x["subgraphs"]:  # every point but the built-in one, less plans equal to one already costed
            if "space_size" in s:
                self.assertLessEqual(s["evaluations"], s["space_size"] - 1)
        streams = [s for s in g["subgraphs"] if "streams=[parallel_branches]" in s["decision"]]
        self.assertTrue(streams, "no subgraph of the encoder ran its Q/K/V branches on streams")

    def test_reload_resumes_an_interrupted_job_to_the_same_result(self):
        work = fresh("sg_whole")
        sgat("resnet18", fresh("sg_bank_whole"), work)
        whole = result(work, "sgat")[1]
        (job,) = glob.glob(f"{work}/aoe_workspace/resnet18_*")
        # What a SIGKILL after three subgraphs leaves: three fsync'd journal lines and a torn fourth, no marker.
        cut = fresh("sg_cut")
        shutil.copytree(job, os.path.join(cut, "aoe_workspace", os.path.basename(job)))
        job = os.path.join(cut, "aoe_workspace", os.path.basename(job))
        os.remove(os.path.join(job, "finished"))
        shutil.rmtree(os.path.join(job, "tunespace"))
        with open(os.path.join(job, "progress.jsonl")) as f:
            lines = f.readlines()
        with open(os.path.join(job, "progress.jsonl"), "w") as f:
            f.writelines(lines[:3])
            f.write(lines[3][:10])
        p = sgat("resnet18", fresh("sg_bank_cut"), cut, "--reload")
        resumed = result(cut, "sgat")[1]
        self.assertEqual([s["result"] for s in resumed["subgraphs"][:3]], ["resumed"] * 3)
        self.assertNotIn("resumed", [s["result"] for s in resumed["subgraphs"][3:]])
        self.assertEqual([s["decision"] for s in resumed["subgraphs"]], [s["decision"] for s in whole["subgraphs"]])
        self.assertAlmostEqual(resumed["model_result_performance(ms)"], whole["model_result_performance(ms)"], delta=1e-9)
        self.assertTrue(glob.glob(f"{job}/tunespace/result/*_tune.om"), p.stdout)
        # nothing left to resume, another model's job, a folder that is no job: EG0003
        for flags, model in ((["--reload"], "resnet18"), ([f"--reload={job}"], "encoder"), ([f"--reload={WORK}"], "resnet18")):
            p = sgat(model, fresh("sg_bank_bad"), cut, *flags, ok=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("EG0003", p.stdout)

    def test_model_path_batch_tunes_the_models_and_skips_single_op_files(self):
        folder = fresh("sg_batch_models")
        shutil.copy(f"{WORK}/resnet18.onnx", folder)
        with open(f"{folder}/ops.json", "w") as f:
            json.dump([], f)
        work = fresh("sg_batch")
        run([AOE, "--job_type=1", f"--model_path={folder}", f"--soc_version={SOC}", "--progress_bar=off",
             f"--input_shape={SHAPES['resnet18']}"], env={"TUNE_BANK_PATH": fresh("sg_bank_batch"), "ASCEND_WORK_PATH": work})
        (path,) = glob.glob(f"{work}/aoe_result_sgat_*.json")
        with open(path) as f:
            (report,) = json.load(f).values()
        self.assertEqual(report[0]["basic"]["tuning_name"], "resnet18")
        self.assertEqual(report[1]["SGAT"]["sgat_tune_result"], "tune success")

    def test_a_corrupt_subgraph_bank_is_named_and_left_alone(self):
        bank = fresh("sg_bank_corrupt")
        with open(f"{bank}/subgraph.json", "w") as f:
            f.write("{not json\n")
        p = sgat("resnet18", bank, fresh("sg_corrupt"), ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("EG0012", p.stdout)
        self.assertIn("subgraph.json:1", p.stdout)
        self.assertEqual(read(f"{bank}/subgraph.json"), "{not json\n")
        p = run([ATC, f"--model={WORK}/resnet18.onnx", "--framework=5", f"--output={WORK}/corrupt", f"--soc_version={SOC}"],
                env={"TUNE_BANK_PATH": bank}, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("subgraph.json:1", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
