#!/usr/bin/python3
"""Batch jobs on a real Slurm: a single-node cluster of the test's own (slurm_cluster.py) runs npukit-slurm's
workflows as job arrays with an afterok merge, and each gives the bytes one process gives:
- msaccucmp compare in 4 shards, merged, with its HTML page;
- a failed shard: the merge never runs, `msaccucmp merge` names the missing shard, resubmitting only it (--array)
  completes the job with the same bytes;
- aoe --job_type=2 on resnet18 and a transformer encoder in 3 shards, each into its own bank, merged into the single
  process's bank, and atc with it writes the same .om bytes (an incomplete set of banks refused);
- msame over a folder of 40 inputs in 4 shards, every output file as one run writes it.
usage: test_slurm.py BUILD_DIR WORK_DIR"""
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_cluster  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:3])
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBMIT = os.path.join(SRC, "scripts/slurm/npukit-slurm")
TOOLS = ("atc", "msame", "msaccucmp", "aoe")
CLUSTER = None


def cluster_env():
    return {**CLUSTER.env, "PATH": ":".join(f"{BUILD}/tools/{t}" for t in TOOLS) + ":" + os.environ["PATH"]}


def run(argv, ok=True, env=None, cwd=None):
    """A command against the cluster; a failure shows the cluster's logs too."""
    p = T.run(*argv, env=env or cluster_env(), cwd=cwd or WORK)
    if ok and p.returncode != 0:
        raise AssertionError(f"{argv} exited {p.returncode}\n{p.stdout}{p.stderr}\n{CLUSTER.logs()}")
    return p


def job_ids(stdout):
    return [line.split()[2].rstrip(":") for line in stdout.splitlines() if line.split()[1:2] == ["job"]]


def setUpModule():
    global CLUSTER
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    os.chmod(WORK, 0o755)
    CLUSTER = slurm_cluster.Cluster(os.path.join(WORK, "cluster"))
    started = time.time()
    CLUSTER.start()
    print(f"cluster up in {time.time() - started:.1f} s")
    run(["atc", "--framework=5", f"--model={SRC}/examples/tinynet.onnx", "--output=tiny", "--soc_version=Ascend310P3",
         "--input_shape=image:1,3,32,32"])
    run(["atc", "--mode=1", "--om=tiny.om", "--json=tiny.json"])
    with open(os.path.join(WORK, "dump.json"), "w") as f:
        f.write('{"dump": {"dump_path": "%s/dump", "dump_list": [], "dump_mode": "all"}}' % WORK)
    shutil.copy(f"{SRC}/examples/tinynet.onnx", os.path.join(WORK, "reference.onnx"))
    for m in ("tiny.om", "reference.onnx"):
        run(["msame", "--model", m, "--input", f"{SRC}/examples/input.npy", "--acl_json_path", "dump.json"])


def tearDownModule():
    CLUSTER.stop()


def the_result(folder):
    (path,) = glob.glob(os.path.join(WORK, folder, "result_*.csv"))
    with open(path, "rb") as f:
        return f.read()


class Compare(unittest.TestCase):
    def setUp(self):
        (npu,) = glob.glob(f"{WORK}/dump/*/0/tiny/1/0")
        (golden,) = glob.glob(f"{WORK}/dump/*/0/reference/1/0")
        self.args = ["-m", npu, "-g", golden, "-f", f"{WORK}/tiny.json"]
        if not os.path.isdir(os.path.join(WORK, "single")):
            run(["msaccucmp", "compare", *self.args, "-out", "single", "--report", "html"])

    def test_four_shards_merge_into_the_single_run(self):
        started = time.time()
        p = run([SUBMIT, "compare", "--shards", "4", "--out", "sharded", "--report", "html", "--wait", "--", *self.args])
        print(f"4-task array + merge: {time.time() - started:.1f} s")
        self.assertEqual(len(job_ids(p.stdout)), 2, p.stdout)
        self.assertEqual(len(glob.glob(f"{WORK}/sharded/shards/result_*_shard*of4.csv")), 4)
        self.assertEqual(the_result("sharded"), the_result("single"))
        pages = [glob.glob(os.path.join(WORK, d, "result_*.html"))[0] for d in ("single", "sharded")]
        untimed = []
        for page in pages:
            with open(page) as f:
                untimed.append(re.sub(r"result_\d+\.csv", "result.csv", f.read()))  # the title names the file
        self.assertEqual(untimed[0], untimed[1])

    def test_a_failed_shard_blocks_the_merge_until_it_is_run_again(self):
        p = run([SUBMIT, "compare", "--shards", "4", "--out", "failed", "--sbatch-arg=--hold", "--", *self.args])
        array, merge = job_ids(p.stdout)
        run(["scancel", f"{array}_3"])  # shard 3 never runs, as if it had failed
        run(["scontrol", "release", array, merge])  # --hold held both
        deadline = time.time() + 30
        while "DependencyNeverSatisfied" not in run(["scontrol", "show", "job", merge]).stdout and time.time() < deadline:
            time.sleep(0.2)
        shown = run(["scontrol", "show", "job", merge]).stdout
        self.assertIn("DependencyNeverSatisfied", shown)  # the merge never starts; Slurm cancels it (--kill-on-invalid-dep)
        self.assertNotIn("JobState=COMPLETED", shown)
        self.assertFalse(glob.glob(f"{WORK}/failed/result_*.csv"))
        p = run(["msaccucmp", "merge", "-d", "failed/shards", "-out", "failed"], ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("shards 3 of 4", p.stdout)
        run([SUBMIT, "compare", "--shards", "4", "--array", "3", "--out", "failed", "--wait", "--", *self.args])
        self.assertEqual(the_result("failed"), the_result("single"))


class Aoe(unittest.TestCase):
    SHAPES = {"resnet18": "input:1,3,224,224", "encoder": "input_ids:4,128;attention_mask:4,128;token_type_ids:4,128"}

    def test_three_shards_merge_into_the_single_process_bank(self):
        run(["/usr/bin/python3", f"{SRC}/tests/e2e/export_calibration_models.py", WORK, *self.SHAPES])
        for model, shape in self.SHAPES.items():
            with self.subTest(model=model):
                flags = ["--job_type=2", "--framework=5", f"--model={WORK}/{model}.onnx", "--soc_version=Ascend310P3",
                         f"--input_shape={shape}", "--progress_bar=off"]
                single, out = os.path.join(WORK, f"bank_single_{model}"), os.path.join(WORK, f"aoe_{model}")
                os.makedirs(single)
                run(["aoe", *flags], env={**cluster_env(), "TUNE_BANK_PATH": single})
                run([SUBMIT, "aoe", "--shards", "3", "--out", out, "--wait", "--", *flags])
                files = sorted(os.path.relpath(p, single) for p in glob.glob(f"{single}/**/*.json", recursive=True))
                self.assertTrue(files)
                self.assertEqual(sorted(os.path.relpath(p, f"{out}/bank") for p in glob.glob(f"{out}/bank/**/*.json", recursive=True)), files)
                for rel in files:
                    self.assertTrue(filecmp.cmp(f"{single}/{rel}", f"{out}/bank/{rel}", shallow=False), rel)
                oms = []
                for k, bank in enumerate((single, f"{out}/bank")):  # each bank under one path (the .om names it), one command line
                    shutil.rmtree(f"{WORK}/atc_bank", ignore_errors=True)
                    shutil.copytree(bank, f"{WORK}/atc_bank")
                    run(["atc", "--framework=5", f"--model={WORK}/{model}.onnx", "--output=tuned", "--soc_version=Ascend310P3",
                         f"--input_shape={shape}"], env={**cluster_env(), "TUNE_BANK_PATH": f"{WORK}/atc_bank"})
                    oms.append(f"{WORK}/tuned_{model}_{k}.om")
                    os.replace(f"{WORK}/tuned.om", oms[-1])
                self.assertTrue(filecmp.cmp(*oms, shallow=False))
                p = run(["aoe", "bank", "merge", f"{out}/partial", f"{out}/shards/1", f"{out}/shards/3"], ok=False)
                self.assertEqual(p.returncode, 1)
                self.assertIn("shards 2 of 3", p.stdout)


class Msame(unittest.TestCase):
    def test_four_shards_write_what_one_run_writes(self):
        inputs = os.path.join(WORK, "batch")
        os.makedirs(inputs)
        rng = np.random.default_rng(3)
        for k in range(40):
            np.save(f"{inputs}/img{k:02d}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
        run(["msame", "--model", "tiny.om", "--input", inputs, "--output", "one", "--outfmt", "NPY"])
        run([SUBMIT, "msame", "--shards", "4", "--wait", "--out", "msame_logs", "--", "--model", f"{WORK}/tiny.om", "--input", inputs,
             "--output", f"{WORK}/two", "--outfmt", "NPY"])
        one, two = sorted(os.listdir(f"{WORK}/one")), sorted(os.listdir(f"{WORK}/two"))
        self.assertEqual(len(one), 40)
        self.assertEqual(one, two)
        for name in one:
            self.assertTrue(filecmp.cmp(f"{WORK}/one/{name}", f"{WORK}/two/{name}", shallow=False), name)


class OutsideAScheduler(unittest.TestCase):
    def test_shard_auto_is_a_usage_error_naming_what_it_looked_for(self):
        clean = {k: v for k, v in cluster_env().items() if not k.startswith("SLURM_") and k != "JOB_COMPLETION_INDEX"}
        (npu,) = glob.glob(f"{WORK}/dump/*/0/tiny/1/0")
        (golden,) = glob.glob(f"{WORK}/dump/*/0/reference/1/0")
        os.makedirs(f"{WORK}/one_input", exist_ok=True)
        shutil.copy(f"{SRC}/examples/input.npy", f"{WORK}/one_input/")
        for argv in (["msaccucmp", "compare", "-m", npu, "-g", golden, "-out", "auto_out", "--shard", "auto"],
                     ["msame", "--model", "tiny.om", "--input", "one_input", "--output", "auto_out", "--shard", "auto"],
                     ["aoe", "--job_type=2", "--framework=5", f"--model={SRC}/examples/tinynet.onnx", "--soc_version=Ascend310P3",
                      "--input_shape=image:1,3,32,32", "--shard", "auto"]):
            with self.subTest(tool=argv[0]):
                p = run(argv, ok=False, env=clean)
                self.assertEqual(p.returncode, 2, p.stdout)
                self.assertIn("SLURM_ARRAY_TASK_ID", p.stdout)
                self.assertIn("JOB_COMPLETION_INDEX", p.stdout)
        self.assertFalse(os.path.exists(f"{WORK}/auto_out"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
