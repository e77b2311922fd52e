#!/usr/bin/python3
"""Black-box fuzzing of the release binaries: mutate artefacts the tools themselves just produced (an ONNX
model, a .om, dumps, a PROF folder, .npy and .h5 pairs, single-op JSON, configs, Python sources, flags) and
run the tools on them. The in-process targets in fuzz/ stop at one parser; this reaches every writer behind
it, in the binaries users run.

A crash is a signal (exit > 128 or killed), a sanitizer report, or an uncaught exception ("terminate called").
Every input that crashed is kept under WORK/crashes/<surface>/ with the command that ran it.

usage: blackbox.py smoke BUILD WORK RUNS      RUNS mutated runs spread over every surface (fuzz_smoke)
       blackbox.py long  BUILD WORK SECONDS   SECONDS per surface (make fuzz BLACKBOX=1)
       BLACKBOX_SURFACES="om h5" limits the surfaces; BLACKBOX_JOBS sets the parallel runs (default: cores).
Exit 0: no crash; 1: crashes (listed); 2: the artefacts could not be made."""
import concurrent.futures as cf
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

MODE, BUILD, WORK, AMOUNT = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]), int(sys.argv[4])
HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = {t: f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse")}
SEEDS = f"{WORK}/seeds"
CORPORA = os.path.join(HERE, "../tests/data")  # real models and ATC outputs (its README)
TIMEOUT = 60  # seconds per run: a run that takes longer is a hang, reported like a crash
# E19999 and E19002: an exception or a failed allocation reached a tool's last line of defence (base/cli.h RunGuarded).
CRASH_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "terminate called",
               "Segmentation fault", "E19999", "E19002")


# On sanitizer-built tools: no leak reports, and an allocation no host could make returns null as glibc's
# malloc does in a release build (libhdf5 asks for such sizes on a corrupt file and handles the null), instead
# of ASan aborting on it. Our own code's allocations that fail are still reported: E19002 is a crash mark.
SANITIZER_ENV = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=0:allocator_may_return_null=1",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def run(cmd, cwd=None, env=None):
    e = {**os.environ, **SANITIZER_ENV, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log", "ASCEND_GLOBAL_LOG_LEVEL": "3", **(env or {})}
    return subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, timeout=TIMEOUT, check=False)


def must(cmd, **kw):
    p = run(cmd, **kw)
    if p.returncode != 0:
        sys.exit(f"blackbox: could not make the artefacts: {' '.join(cmd)}\n{p.stdout.decode()[-2000:]}{p.stderr.decode()[-2000:]}")
    return p


# ---- the artefacts, made by the tools --------------------------------------------------------------------
def make_seeds():
    shutil.rmtree(SEEDS, ignore_errors=True)
    os.makedirs(SEEDS)
    s = lambda name: f"{SEEDS}/{name}"
    shutil.copy(f"{HERE}/../examples/tinynet.onnx", s("model.onnx"))
    shutil.copy(f"{HERE}/../examples/input.npy", s("input.npy"))
    must([TOOLS["atc"], "--framework=5", f"--model={s('model.onnx')}", f"--output={s('model')}", "--soc_version=Ascend310P3",
          "--input_shape=image:1,3,32,32"])
    must([TOOLS["atc"], "--mode=1", f"--om={s('model.om')}", f"--json={s('model.json')}"])
    json.dump({"dump": {"dump_path": s("dump"), "dump_list": [], "dump_mode": "all"}}, open(s("dump_acl.json"), "w"))
    # The acl.json surface's seed names a relative folder: a run's cwd is its own folder, so whatever a mutation
    # makes of the path, msame writes below it (an absolute path, mutated, could name any folder).
    json.dump({"dump": {"dump_path": "dump", "dump_list": [], "dump_mode": "all"}}, open(s("acl_surface.json"), "w"))
    must([TOOLS["msame"], f"--model={s('model.om')}", f"--input={s('input.npy')}", f"--output={s('out')}", "--outfmt=NPY",
          f"--acl_json_path={s('dump_acl.json')}"])
    json.dump({"profiler": {"switch": "on", "output": s("prof"), "aic_metrics": "PipeUtilization"}}, open(s("prof_acl.json"), "w"))
    must([TOOLS["msame"], f"--model={s('model.om')}", f"--input={s('input.npy')}", f"--acl_json_path={s('prof_acl.json')}", "--loop=2"])
    shutil.copy(s("model.onnx"), s("reference.onnx"))  # the fp32 reference path's dump: the golden data, under its own name
    must([TOOLS["msame"], f"--model={s('reference.onnx')}", f"--input={s('input.npy')}", f"--acl_json_path={s('dump_acl.json')}"])
    np.save(s("a.npy"), np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
    np.save(s("b.npy"), np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32))
    import h5py
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    for name, noise in (("npu.h5", 1e-4), ("gpu.h5", 0)):  # the PyTorch dumper's layout: /<op>/<seq>/<input|output>/<name>
        with h5py.File(s(name), "w") as f:
            for seq, op in enumerate(["AddmmBackward", "ReluBackward"]):
                f.create_dataset(f"/{op}/{seq}/input/self", data=x).attrs["Type"] = 0
                f.create_dataset(f"/{op}/{seq}/output/result", data=(x + noise).astype(np.float16)).attrs["Type"] = 0
    json.dump([{"op": "Conv2D", "input_desc": [{"format": "NCHW", "shape": [1, 3, 8, 8], "type": "float16"},
                                              {"format": "NCHW", "shape": [4, 3, 3, 3], "type": "float16"}],
                "output_desc": [{"format": "NCHW", "shape": [1, 4, 6, 6], "type": "float16"}],
                "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 1, 1]},
                         {"name": "pads", "type": "list_int", "value": [0, 0, 0, 0]}, {"name": "groups", "type": "int", "value": 1}]},
               {"op": "MatMulV2", "input_desc": [{"format": "ND", "shape": [16, 32], "type": "float16"},
                                                {"format": "ND", "shape": [32, 8], "type": "float16"}],
                "output_desc": [{"format": "ND", "shape": [16, 8], "type": "float16"}]}], open(s("singleop.json"), "w"))
    open(s("aipp.cfg"), "w").write("aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n  src_image_size_w: 32\n"
                                    "  src_image_size_h: 32\n  mean_chn_0: 10\n  var_reci_chn_0: 0.5\n}\n")
    open(s("switch.cfg"), "w").write("ConvBatchnormFusionPass:off\nTbeConvElemwiseFusionPass:off\n")
    json.dump({"black-list": {"to-add": ["Relu"]}}, open(s("mixlist.json"), "w"))
    open(s("keep.cfg"), "w").write("OpType::Conv2D\n")
    shutil.copy(f"{HERE}/../libcore/soc/specs/Ascend310P3.ini", s("soc.ini"))
    json.dump({"tune_ops_type": ["Conv2D"], "tune_ops_name": []}, open(s("tune_ops.json"), "w"))
    os.makedirs(s("py"), exist_ok=True)
    open(s("py/train.py"), "w").write("import torch\nmodel = torch.nn.Linear(4, 2).cuda()\nx = torch.randn(3, 4).to('cuda')\n"
                                       "torch.cuda.synchronize()\nprint(model(x).sum().item())\n")
    json.dump({"rules": {"FuncNameModifyRule": [{"old_name": "synchronize", "new_name": "npu_synchronize"}],
                         "ArgsModifyRule": [{"func_name": "randn", "arg_idx": 0, "arg_new": "4"}],
                         "ModuleNameModifyRule": [{"old_name": "cuda", "new_name": "npu", "parent_module": "torch"}]}}, open(s("rules.json"), "w"))
    return s


# ---- the surfaces: a seed file, and the command that reads the mutated copy ---------------------------------
def surfaces(s):
    npu_steps, golden_steps = glob.glob(f"{s('dump')}/*/0/model/1/*"), glob.glob(f"{s('dump')}/*/0/reference/1/*")
    dumps = sorted(glob.glob(f"{npu_steps[0]}/*"))
    dump_file = next(p for p in dumps if os.path.isfile(p) and not p.endswith(".csv"))
    prof = glob.glob(f"{s('prof')}/PROF_*")[0]
    prof_files = sorted(p for p in glob.glob(f"{prof}/**/*", recursive=True)
                        if os.path.isfile(p) and "mindstudio_profiler_output" not in p)
    atc = [TOOLS["atc"], "--framework=5", "--soc_version=Ascend310P3", "--input_shape=image:1,3,32,32"]
    return {
        # name: (seed file(s), command with {in} for the mutated copy and {out} for an output path, kind of mutation)
        "onnx": ([s("model.onnx")], atc + ["--model={in}", "--output={out}/m"], "bytes"),
        "onnx_json": ([s("model.onnx")], [TOOLS["atc"], "--mode=1", "--framework=5", "--om={in}", "--json={out}/m.json"], "bytes"),
        "onnx_precheck": ([s("model.onnx")], atc[:3] + ["--mode=3", "--model={in}", "--check_report={out}/c.json"], "bytes"),
        "om": ([s("model.om")], [TOOLS["atc"], "--mode=1", "--om={in}", "--json={out}/m.json"], "om"),
        "om_run": ([s("model.om")], [TOOLS["msame"], "--model={in}", f"--input={s('input.npy')}", "--output={out}"], "om"),
        "npy_input": ([s("input.npy")], [TOOLS["msame"], f"--model={s('model.om')}", "--input={in}", "--output={out}"], "bytes"),
        "acl_json": ([s("acl_surface.json")], [TOOLS["msame"], f"--model={s('model.om')}", f"--input={s('input.npy')}",
                                             "--acl_json_path={in}", "--output={out}"], "text"),
        "dump": ([dump_file], [TOOLS["msaccucmp"], "convert", "-d", "{in}", "--out", "{out}"], "bytes"),
        "dump_compare": ([dump_file], [TOOLS["msaccucmp"], "compare", "-m", "{in}", "-g", "{in}", "--out", "{out}"], "bytes"),
        "fusion_rule": ([s("model.json")], [TOOLS["msaccucmp"], "compare", "-m", npu_steps[0], "-g", golden_steps[0], "-f", "{in}",
                                             "--out", "{out}"], "text"),
        "npy_pair": ([s("a.npy")], [TOOLS["msaccucmp"], "file_compare", "-m", "{in}", "-g", s("b.npy"), "--out", "{out}"], "bytes"),
        "h5": ([s("npu.h5")], [TOOLS["msaccucmp"], "compare", "-m", "{in}", "-g", s("gpu.h5"), "--out", "{out}"], "bytes"),
        "prof": (prof_files, [TOOLS["profparse"], "--export=on", "--output={dir}"], "bytes"),
        "singleop": ([s("singleop.json")], [TOOLS["atc"], "--singleop={in}", "--output={out}", "--soc_version=Ascend310P3"], "text"),
        "aoe_singleop": ([s("singleop.json")], [TOOLS["aoe"], "--singleop={in}", "--job_type=2", "--soc_version=Ascend310P3"], "text"),
        "aipp": ([s("aipp.cfg")], atc + [f"--model={s('model.onnx')}", "--insert_op_conf={in}", "--output={out}/m"], "text"),
        "fusion_switch": ([s("switch.cfg")], atc + [f"--model={s('model.onnx')}", "--fusion_switch_file={in}", "--output={out}/m"], "text"),
        "mixlist": ([s("mixlist.json")], atc + [f"--model={s('model.onnx')}", "--precision_mode=allow_mix_precision",
                                                 "--modify_mixlist={in}", "--output={out}/m"], "text"),
        "keep_dtype": ([s("keep.cfg")], atc + [f"--model={s('model.onnx')}", "--keep_dtype={in}", "--output={out}/m"], "text"),
        "soc_spec": ([s("soc.ini")], [TOOLS["atc"], "--framework=5", f"--model={s('model.onnx')}", "--soc_spec={in}",
                                       "--input_shape=image:1,3,32,32", "--output={out}/m"], "text"),
        "tune_ops": ([s("tune_ops.json")], [TOOLS["aoe"], f"--model={s('model.onnx')}", "--job_type=2", "--soc_version=Ascend310P3",
                                             "--tune_ops_file={in}"], "text"),
        "python": ([s("py/train.py")], [TOOLS["transplt"], "-i", "{in}", "-o", "{out}"], "text"),
        "rules": ([s("rules.json")], [TOOLS["transplt"], "-i", s("py/train.py"), "-o", "{out}", "-r", "{in}"], "text"),
        "flags": ([], atc + [f"--model={s('model.onnx')}", "--output={out}/m"], "flags"),
        # The other front ends and CANN's own .om, from the real files in tests/data.
        "tf_pb": ([f"{CORPORA}/tf/tf2onnx_fc-layers.pb"], [TOOLS["atc"], "--framework=3", "--model={in}", "--soc_version=Ascend310P3",
                                                           "--output={out}/m"], "bytes"),
        "caffe_prototxt": ([f"{CORPORA}/caffe/mtcnn_det1.prototxt"], [TOOLS["atc"], "--framework=0", "--model={in}",
                                                                      f"--weight={CORPORA}/caffe/mtcnn_det1.caffemodel",
                                                                      "--soc_version=Ascend310P3", "--output={out}/m"], "text"),
        "caffe_model": ([f"{CORPORA}/caffe/mtcnn_det1.caffemodel"], [TOOLS["atc"], "--framework=0", f"--model={CORPORA}/caffe/mtcnn_det1.prototxt",
                                                                     "--weight={in}", "--soc_version=Ascend310P3", "--output={out}/m"], "bytes"),
        "cann_om": ([f"{CORPORA}/om/a3c_pong_model.om"], [TOOLS["atc"], "--mode=1", "--om={in}", "--json={out}/m.json"], "om"),
        # A real Ascend 910's HWTS task log in the folder profparse is pointed at ({indir}: the mutated file's).
        "hwts_log": (glob.glob(f"{CORPORA}/prof_raw/ascend910_job3/hwts.log.data.*"), [TOOLS["profparse"], "--export=on",
                                                                                     "--output={indir}"], "bytes"),
    }


# ---- mutations ---------------------------------------------------------------------------------------------
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\xff", b"\x00\x00\x00\x80", b"\xff\xff\xff\x7f", b"\xfe\xff"]
TOKENS = [b"-1", b"0", b"99999999999999999999", b"2147483648", b"-9223372036854775808", b"1e400", b"nan", b"\"\"", b"[]",
          b"{}", b"null", b"\xff\xfe", b"[[[[[[[[", b"\"\xc3\x28\"", b"3.5", b"true", b"1,2,3"]


def mutate_bytes(data, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(b)) if b else 0
        if op == 0 and b:  # flip bits
            b[pos] ^= 1 << rng.randrange(8)
        elif op == 1:  # an interesting value over the bytes there
            v = rng.choice(INTERESTING)
            b[pos:pos + len(v)] = v
        elif op == 2 and b:  # cut short
            del b[rng.randrange(len(b)):]
        elif op == 3 and b:  # drop a chunk
            del b[pos:pos + rng.randint(1, 64)]
        elif op == 4 and b:  # repeat a chunk
            b[pos:pos] = b[pos:pos + rng.randint(1, 64)]
        else:  # random bytes
            b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(b)


# The .om header byte that says whether its XXH3 checksum is checked (libcore/om/om_file.h, kOffIsChecksum).
# A mutated .om almost never matches its checksum; with the flag cleared, as a file may legally have it, the
# mutations reach the partition table and the protobuf parsers behind it.
OM_CHECKSUM_FLAG = 81


def mutate_om(data, rng):
    b = bytearray(mutate_bytes(data, rng))
    if len(b) > OM_CHECKSUM_FLAG:
        b[OM_CHECKSUM_FLAG] = 1
    return bytes(b)


def mutate_text(data, rng):
    if rng.random() < 0.4:
        return mutate_bytes(data, rng)
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):  # replace a number or word with a hostile token
        starts = [i for i in range(len(b)) if chr(b[i]).isalnum() and (i == 0 or not chr(b[i - 1]).isalnum())]
        if not starts:
            break
        i = rng.choice(starts)
        j = i
        while j < len(b) and (chr(b[j]).isalnum() or b[j] in b"._"):
            j += 1
        b[i:j] = rng.choice(TOKENS)
    return bytes(b)


FLAG_VALUES = ["--input_shape=image:1,3,32,99999999999999999999", "--input_shape=image:-1,3,32,32", "--dynamic_batch_size=1,99999999999",
               "--input_shape=image:1~99999999999,3,32,32", "--out_nodes=x:99999999999", "--input_format=\xff", "--dynamic_dims=1;2",
               "--input_shape=\xff\xfe:1", "--precision_mode=\xc3\x28", "--output_type=FP16:\xff", "--input_fp16_nodes=image;image",
               "--is_input_adjust_hw_layout=true", "--log=\xff", "--external_weight=-1", "--buffer_optimize=", "--dump_after=\xff/../x"]


# ---- one run -----------------------------------------------------------------------------------------------
def one_run(name, spec, k, seed, pristine=False):
    """Runs surface `name` on a mutated copy (`pristine`: on the seed itself, which must be accepted)."""
    files, cmd, kind = spec
    rng = random.Random(seed)
    d = f"{WORK}/runs/{name}_{k}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(f"{d}/out")
    args = list(cmd)
    mutate = (lambda data, rng: data) if pristine else mutate_text if kind == "text" else mutate_om if kind == "om" else mutate_bytes
    if kind == "flags":
        args += [] if pristine else rng.sample(FLAG_VALUES, rng.randint(1, 3))
        mutated = None
    elif name == "prof":  # one file of a whole PROF folder
        prof = glob.glob(f"{SEEDS}/prof/PROF_*")[0]
        target = f"{d}/prof/{os.path.basename(prof)}"
        shutil.copytree(prof, target, ignore=shutil.ignore_patterns("mindstudio_profiler_output"))
        victim = rng.choice(files)
        mutated = target + victim[len(prof):]
        with open(victim, "rb") as f:
            data = f.read()
        with open(mutated, "wb") as f:
            f.write(mutate(data, rng))
    else:
        src = files[0]
        mutated = f"{d}/{os.path.basename(src)}"
        with open(src, "rb") as f:
            data = f.read()
        with open(mutated, "wb") as f:
            f.write(mutate(data, rng))
    args = [a.replace("{in}", mutated or "").replace("{out}", f"{d}/out").replace("{dir}", f"{d}/prof")
            .replace("{indir}", os.path.dirname(mutated or d)) for a in args]
    try:
        p = run(args, cwd=d)
        text = (p.stdout + p.stderr).decode(errors="replace")
        crashed = p.returncode < 0 or p.returncode > 128 or any(m in text for m in CRASH_MARKS)
        why = f"exit {p.returncode}" if crashed else "accepted" if p.returncode == 0 else ""
    except subprocess.TimeoutExpired:
        crashed, why, text = True, f"no answer in {TIMEOUT} s", ""
    if pristine and why != "accepted":
        print(f"blackbox: surface {name} refuses its own seed: {' '.join(args)}\n{text[-1500:]}")
    if crashed:
        keep = f"{WORK}/crashes/{name}/{k}"
        os.makedirs(keep, exist_ok=True)
        if mutated and os.path.isfile(mutated):
            shutil.copy(mutated, keep)
        open(f"{keep}/command", "w").write(" ".join(args) + f"\n# {why}\n" + text[-4000:])
    shutil.rmtree(d, ignore_errors=True)
    return name, crashed, why


def main():
    shutil.rmtree(f"{WORK}/runs", ignore_errors=True)
    s = make_seeds()
    all_surfaces = surfaces(s)
    wanted = os.environ.get("BLACKBOX_SURFACES", "").split() or list(all_surfaces)
    jobs = int(os.environ.get("BLACKBOX_JOBS", os.cpu_count() or 2))
    counts, accepted, crashes = {n: 0 for n in wanted}, {n: 0 for n in wanted}, []
    start = time.monotonic()
    with cf.ThreadPoolExecutor(jobs) as pool:
        # Each surface must accept its unmutated seed, or its mutations would test nothing but the first check.
        if not all(r[2] == "accepted" for r in pool.map(lambda n: one_run(n, all_surfaces[n], -1, 0, pristine=True), wanted)):
            return 2
        if MODE == "smoke":  # AMOUNT runs, round-robin over the surfaces, seeds fixed: the same runs every time
            futs = [pool.submit(one_run, wanted[k % len(wanted)], all_surfaces[wanted[k % len(wanted)]], k, k) for k in range(AMOUNT)]
            results = [f.result() for f in futs]
        else:  # AMOUNT seconds per surface, one surface after another, each reported as it ends
            results = []
            for n in wanted:
                deadline, k, mine = time.monotonic() + AMOUNT, 0, []
                while time.monotonic() < deadline:
                    batch = [pool.submit(one_run, n, all_surfaces[n], k + i, random.randrange(1 << 30)) for i in range(jobs * 4)]
                    mine += [f.result() for f in batch]
                    k += len(batch)
                bad = sum(r[1] for r in mine)
                print(f"  {n}: {len(mine)} runs in {AMOUNT} s, {sum(r[2] == 'accepted' for r in mine)} accepted, {bad} crash(es)", flush=True)
                results += mine
    for name, crashed, why in results:
        counts[name] += 1
        accepted[name] += why == "accepted"
        if crashed:
            crashes.append((name, why))
    total = sum(counts.values())
    print(f"blackbox {MODE}: {total} runs over {len(wanted)} surfaces in {time.monotonic() - start:.0f} s: "
          + ", ".join(f"{n} {c} ({accepted[n]} accepted)" for n, c in counts.items()))
    if crashes:
        print(f"{len(crashes)} crash(es), inputs under {WORK}/crashes/:")
        for name, why in crashes[:50]:
            print(f"  {name}: {why}")
        return 1
    print("no crash")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:  # a tool that cannot be started is a broken setup, not a finding
        print(f"blackbox: cannot run {e.filename}: {e.strerror} (is the build complete, and not being rebuilt under the run?)")
        sys.exit(2)
