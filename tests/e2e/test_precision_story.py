#!/usr/bin/python3
"""The precision walk of docs/atc.md, run as written: an fp16-hostile op (a sum of squares past 65504) converted with
force_fp16, dumped, compared against the .onnx golden; msaccucmp names that op as the first divergent one;
--keep_dtype fixes it, shown by a second compare.  usage: test_precision_story.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import glob
import json
import os
import re
import shutil
import sys

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = sys.argv[1:4]
ATC, MSAME, CMP = (os.path.join(BUILD, p) for p in ("tools/atc/atc", "tools/msame/msame", "tools/msaccucmp/msaccucmp"))


def sh(*args):
    r = T.run(*args, cwd=WORK)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, args))}\n{r.stdout}{r.stderr}")
    return r.stdout


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        sys.exit(1)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
sh("/usr/bin/python3", os.path.join(SRC, "examples/make_l2norm.py"), WORK)
for name, path in (("npu", "npu_dump"), ("golden", "golden")):
    json.dump({"dump": {"dump_path": path, "dump_list": [], "dump_mode": "all"}}, open(os.path.join(WORK, f"acl_{name}.json"), "w"))
sh(MSAME, "--model", "l2norm.onnx", "--input", "l2norm_input.npy", "--acl_json_path", "acl_golden.json")
(golden,) = glob.glob(os.path.join(WORK, "golden/*/0/l2norm/1/0"))
torch_out = np.load(os.path.join(WORK, "l2norm_torch.npy")).ravel().astype(np.float64)


def convert_run_compare(tag, *flags):
    sh(ATC, "--framework=5", "--model=l2norm.onnx", f"--output={tag}", "--soc_version=Ascend310P3", *flags)
    sh(ATC, "--mode=1", f"--om={tag}.om", f"--json={tag}.json")
    sh(MSAME, "--model", f"{tag}.om", "--input", "l2norm_input.npy", "--acl_json_path", "acl_npu.json", "--output", f"{tag}_out", "--outfmt", "NPY")
    (npu,) = glob.glob(os.path.join(WORK, f"npu_dump/*/0/{tag}/1/0"))
    report = sh(CMP, "compare", "-m", npu, "-g", golden, "-f", f"{tag}.json", "-out", f"{tag}_cmp")
    out = np.load(os.path.join(WORK, f"{tag}_out", f"{tag}_output_0.npy")).ravel().astype(np.float64)
    return report, float(np.abs(out - torch_out).max())


report, err = convert_run_compare("l2norm")
(npu_dir,) = glob.glob(os.path.join(WORK, "npu_dump/*/0/l2norm/1/0"))
advice = sh(CMP, "compare", "-m", npu_dir, "-g", golden, "-f", "l2norm.json", "-out", "advisor_cmp", "-advisor")
check("meets the accuracy requirement" not in advice and "FAIL 6" in advice,
      "the advisor never calls FAIL rows fine")
check(re.search(r"first divergent op: Index \d+ /ReduceSum ", report) is not None, "force_fp16: msaccucmp names /ReduceSum as the first divergent op")
check(err > 0.05, f"force_fp16: the embedding is visibly wrong (max abs error {err:.3g})")
open(os.path.join(WORK, "keep.txt"), "w").write("OpType::ReduceSum\nOpType::Sqrt\n")
report, err = convert_run_compare("l2norm_keep", "--keep_dtype=keep.txt")
check("FAIL 0" in report and "first divergent op" not in report, "keep_dtype: every compared tensor passes")
check(err < 2e-3, f"keep_dtype: the embedding matches PyTorch to fp16 rounding (max abs error {err:.3g})")
