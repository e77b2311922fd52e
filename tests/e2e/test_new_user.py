#!/usr/bin/python3
"""What a new user stumbled on (issue 49), each as the command they typed and what it must answer now.
usage: test_new_user.py BUILD_DIR WORK_DIR"""
import glob
import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402

BUILD, WORK = T.paths()
ATC, MSAME, CMP, AOE, PROF, TRANSPLT = (T.tool(BUILD, t) for t in ("atc", "msame", "msaccucmp", "aoe", "profparse", "transplt"))
TINY = os.path.join(T.EXAMPLES, "tinynet.onnx")
INPUT = os.path.join(T.EXAMPLES, "input.npy")


def fresh(name):
    return T.fresh(os.path.join(WORK, name))


class NewUser(unittest.TestCase):
    def test_01_a_glob_that_matched_two_folders_is_named(self):
        d = fresh("glob")
        os.makedirs(f"{d}/dump/1/0")
        os.makedirs(f"{d}/dump/2/0")
        r = T.run(CMP, "compare", "-m", "dump/1/0", "dump/2/0", "-g", "dump/1/0", "-out", "r", cwd=d)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("-m takes one value; 2 were given", r.stdout)
        self.assertNotIn("unknown flag", r.stdout)
        self.assertFalse(os.path.exists(f"{d}/r"), "nothing is written before the inputs check out")

    def test_02_transplt_checks_its_input_before_it_says_it_migrates(self):
        d = fresh("transplt")
        r = T.run(TRANSPLT, "-i", "no_such_project/", "-o", "out/", "--log", "info", cwd=d)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("migrating", r.stdout + r.stderr)
        os.makedirs(f"{d}/proj")
        with open(f"{d}/proj/train.py", "w") as f:
            f.write("import torch\nx = torch.zeros(2).cuda()\n")
        r = T.run(TRANSPLT, "-i", "proj/", "-o", "out/", "--log", "info", cwd=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("into " + os.path.join(d, "out", "proj_msft"), r.stderr)
        self.assertTrue(os.path.isfile(f"{d}/out/proj_msft/transplant_result_file/change_list.csv"))

    def test_03_aoe_reload_with_nothing_to_resume_writes_nothing(self):
        d = fresh("aoe_reload")
        bank = fresh("aoe_reload_bank")
        env = dict(os.environ, TUNE_BANK_PATH=bank, ASCEND_WORK_PATH=d)
        r = T.run(AOE, "--job_type=1", "--framework=5", f"--model={TINY}", "--soc_version=Ascend310P3", "--reload", cwd=d, env=env)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no unfinished subgraph tuning job", r.stdout)
        self.assertEqual(glob.glob(f"{d}/aoe_result_*"), [], "no result file for a run that did not start")
        self.assertEqual(os.listdir(bank), [])

    def test_04_quantize_finds_msame_on_path_from_a_copied_examples_folder(self):
        d = fresh("quantize")
        shutil.copytree(T.EXAMPLES, f"{d}/examples")
        env = dict(os.environ, PATH=f"{BUILD}/bin:/usr/bin:/bin")
        r = T.run(T.PY, "examples/quantize.py", "examples/tinynet.onnx", "t8", "--calib", "2", cwd=d, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.isfile(f"{d}/t8_deploy.onnx"))
        r = T.run(T.PY, "examples/quantize.py", "examples/tinynet.onnx", "t9", cwd=d, env=dict(os.environ, PATH="/usr/bin:/bin"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot run msame", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_06_a_fused_dump_says_which_golden_it_fits(self):
        d = fresh("fused")
        with open(f"{d}/dump.json", "w") as f:
            json.dump({"dump": {"dump_path": "dump", "dump_list": [], "dump_mode": "all"}}, f)
        T.must(ATC, "--framework=5", f"--model={TINY}", "--output=tiny", "--soc_version=Ascend310P3", cwd=d)
        T.must(MSAME, "--model", "tiny.om", "--input", INPUT, "--acl_json_path", "dump.json", cwd=d)
        shutil.copy(TINY, f"{d}/reference.onnx")
        T.must(MSAME, "--model", "reference.onnx", "--input", INPUT, "--acl_json_path", "dump.json", cwd=d)
        conv = glob.glob(f"{d}/dump/*/0/tiny/1/0/Conv2D._stem_stem_0_Conv.*")[0]
        golden_conv = glob.glob(f"{d}/dump/*/0/reference/1/0/_stem_stem_0_Conv.0.*.npy")[0]
        r = T.run(CMP, "compare", "-m", conv, "-g", golden_conv, cwd=d)
        self.assertIn("[WARNING] the dump of", r.stdout)
        self.assertIn("/stem/stem.2/Relu", r.stdout)
        self.assertIn("_stem_stem_2_Relu.0.*.npy", r.stdout)
        # The fusion rule of another model (CANN's A3C .om) is refused, not used to match nothing.
        T.must(ATC, "--mode=1", f"--om={T.DATA}/om/a3c_pong_model.om", "--json=a3c.json", cwd=d)
        npu, golden = glob.glob(f"{d}/dump/*/0/tiny/1/0")[0], glob.glob(f"{d}/dump/*/0/reference/1/0")[0]
        r = T.run(CMP, "compare", "-m", npu, "-g", golden, "-f", "a3c.json", "-out", "cmp", cwd=d)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("it is the fusion rule of another model", r.stdout)

    def test_07_bank_merge_names_the_missing_folders(self):
        d = fresh("merge")
        r = T.run(AOE, "bank", "merge", "merged", "s1", "s2", cwd=d)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("EG0012", r.stdout)
        self.assertIn("s1, s2", r.stdout)
        self.assertIn("2 of the 2 bank folder(s) to merge do not exist", r.stdout)
        self.assertNotIn("model not found", r.stdout)

    def test_08_profparse_diff_blames_its_own_arguments(self):
        r = T.run(PROF, "diff", "prof_a", "prof_b", cwd=fresh("diff"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("[diff A]", r.stdout)
        self.assertIn("[diff B]", r.stdout)
        self.assertNotIn("--output", r.stdout)

    def test_09_a_value_left_off_is_one_error(self):
        r = T.run(PROF, "--export", "--output=../prof", cwd=fresh("export"))
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertEqual(r.stdout.count("[ERROR]"), 1, r.stdout)
        self.assertIn("--export takes on or off", r.stdout)

    def test_10_stray_values_and_near_flags(self):
        d = fresh("flags")
        r = T.run(MSAME, "--model", TINY, "--output_dir", "o", cwd=d)
        self.assertEqual(r.returncode, 2)
        self.assertIn("[--output_dir]", r.stdout)
        self.assertIn("Did you mean --output?", r.stdout)
        self.assertNotIn("[o]", r.stdout, "the unknown flag's value is not a second error")
        for tool, typo, near in ((ATC, "--input-shape=x:1", "--input_shape"), (MSAME, "--input-shape=x:1", "--input_shape"),
                                 (CMP, "--output_pth=x", None), (AOE, "--job-type=2", "--job_type"),
                                 (PROF, "--exprt=on", "--export")):
            args = ["compare", "-m", "a", "-g", "b", typo] if tool == CMP else [typo]
            r = T.run(tool, *args, cwd=d)
            self.assertEqual(r.returncode, 2, f"{tool} {typo}: {r.stdout}")
            if near:
                self.assertIn(f"Did you mean {near}?", r.stdout, f"{tool} {typo}")

    def test_11_help_names_every_framework(self):
        out = T.must(ATC, "--help")
        self.assertNotIn("convert ONNX models", out)
        for what in ("1 (MindSpore AIR)", "0 (Caffe)", "3 (TensorFlow)", "5 (ONNX)", ".air"):
            self.assertIn(what, out)
        self.assertIn(".air", T.must(MSAME, "--help"))

    def test_13_om_suffix_tasks_and_locks(self):
        d = fresh("suffix")
        T.must(ATC, "--framework=5", f"--model={TINY}", "--output=tiny.om", "--soc_version=Ascend310P3", cwd=d)
        self.assertTrue(os.path.isfile(f"{d}/tiny.om"))
        self.assertFalse(os.path.exists(f"{d}/tiny.om.om"))
        out = T.must(ATC, "--mode=6", "--om=tiny.om", cwd=d)
        header = [l for l in out.splitlines() if "tasks[" in l][0]
        listed = sum(1 for l in out.splitlines() if l.startswith("  task "))
        self.assertIn(f"tasks[{listed}]", header)
        bank = fresh("suffix_bank")
        env = dict(os.environ, TUNE_BANK_PATH=bank, ASCEND_WORK_PATH=d)
        T.must(AOE, "--job_type=2", "--framework=5", f"--model={TINY}", "--soc_version=Ascend310P3", cwd=d, env=env)
        left = [p for p in glob.glob(f"{bank}/**/*", recursive=True) if p.endswith(".lock")]
        self.assertEqual(left, [], "aoe leaves no lock files in the bank")

    def test_13_make_demo_prints_the_demo_not_make(self):
        if os.environ.get("NPUKIT_SKIP_MAKE_DEMO"):
            self.skipTest("NPUKIT_SKIP_MAKE_DEMO is set")
        r = T.run("make", "demo", f"BUILD={BUILD}", "JOBS=1", cwd=T.SOURCE)  # as a user types it, in the clone
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("Entering directory", r.stdout + r.stderr)
        self.assertNotIn("Built target", r.stdout, "the build's own lines go to its log")
        self.assertIn("== summary", r.stdout)

if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
