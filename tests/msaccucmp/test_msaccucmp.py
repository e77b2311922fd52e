"""msaccucmp end to end on generated data: every metric against the numpy reference for many dtypes and
edge cases, corrupt dumps, convert with layouts, file_compare, h5, mapping/-op/-r, advisor, shards.
Usage: test_msaccucmp.py SRC_DIR BUILD_DIR WORK_DIR"""
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import dumpgen as dg  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
CMP = os.path.join(BUILD, "tools/msaccucmp/msaccucmp")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
pb = dg.load_proto(SRC, os.path.join(WORK, "proto"))
rng = np.random.default_rng(7)
checks = T.Checks()
check, failures = checks.check, checks.failures




def run(*args, expect=0):
    p = subprocess.run([CMP, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append(f"exit {p.returncode} != {expect}: msaccucmp {' '.join(args)}\n{p.stdout}{p.stderr}")
        print(failures[-1])
    return p


def json_rows(out_dir):
    (path,) = glob.glob(os.path.join(out_dir, "result_*.json"))
    with open(path) as f:
        return json.load(f)["rows"]


def close(a, b):
    if a is None or (isinstance(a, str) and a == "NaN"):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, str):
        a = float(a)
    if math.isnan(b) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-6 * abs(b) + 1e-15


# ---- 1. every metric against numpy, many dtypes and edge cases -----------------------------------
def case_data():
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = (x + rng.standard_normal(n).astype(np.float32) * 1e-3).astype(np.float32)
    with_nan = x.copy(); with_nan[3] = np.nan
    with_inf = x.copy(); with_inf[5] = np.inf
    big = rng.standard_normal(3_000_000).astype(np.float32)
    bits = dg.bf16_bits(x)
    cases = {
        "f32": (x, y), "zeros": (np.zeros(64, np.float32), np.zeros(64, np.float32)),
        "npu_zero": (np.zeros(64, np.float32), y[:64]), "golden_zero": (y[:64], np.zeros(64, np.float32)),
        "nan": (with_nan, y), "inf": (with_inf, y), "same": (x, x),
        "f16": (x.astype(np.float16), y.astype(np.float16)),
        "bf16": (bits, dg.bf16_value(dg.bf16_bits(y))),
        "i8": (rng.integers(-128, 127, n).astype(np.int8), rng.integers(-128, 127, n).astype(np.int8)),
        "u8": (rng.integers(0, 255, n).astype(np.uint8), rng.integers(0, 255, n).astype(np.uint8)),
        "i32": (rng.integers(-1000, 1000, n).astype(np.int32), rng.integers(-1000, 1000, n).astype(np.int32)),
        "bool": (rng.random(n) > 0.5, rng.random(n) > 0.5),
        "scalar": (np.array(1.5, np.float32), np.array(1.25, np.float32)),
        "empty": (np.zeros((0,), np.float32), np.zeros((0,), np.float32)),
        "f64": (x.astype(np.float64) * 1e-3, y.astype(np.float64) * 1e-3),
        "constant": (np.full(50, 3.0, np.float32), np.full(50, 2.0, np.float32)),
        "large": (big, big + np.float32(1e-4)),
        "huge_f16": (rng.standard_normal(17_000_000).astype(np.float16), rng.standard_normal(17_000_000).astype(np.float16)),
    }
    return cases


def metrics_suite():
    npu, gold, out = (os.path.join(WORK, d) for d in ("m_npu", "m_gold", "m_out"))
    os.makedirs(npu); os.makedirs(gold)
    cases = case_data()
    for task, (name, (x, y)) in enumerate(cases.items()):
        t = {"arr": x, "code": dg.BF16} if name == "bf16" else {"arr": x}
        dg.write_dump(pb, f"{npu}/Op.{name}.{task}.0.{1000 + task}", name, outputs=[t], original=name)
        np.save(f"{gold}/{name}.0.{2000 + task}.npy", y)
    run("compare", "-m", npu, "-g", gold, "-out", out, "--format", "json", "--precision", "full")
    rows = {r["NPUDump"]: r for r in json_rows(out)}
    for name, (x, y) in cases.items():
        r = rows.get(name)
        check(r is not None, f"metrics: no row for {name}")
        if r is None:
            continue
        xv = dg.bf16_value(x) if name == "bf16" else x
        ref = dg.reference_metrics(xv, y, boolean=x.dtype == np.bool_)
        for k in dg.NAMES:
            if k == "StandardDeviation":
                if ref[k] != ref[k] or name in ("empty",) or x.dtype == np.bool_:
                    continue
                if r[k] is None:
                    check(False, f"metrics {name} {k}: missing ({r['CompareFailReason']})")
                    continue
                got = r[k].replace("(", "").replace(")", "").replace(";", ",").split(",")
                want = [*ref[k][0], *ref[k][1]]
                check(all(close(g, w) for g, w in zip(got, want)), f"metrics {name} {k}: {r[k]} vs {want}")
                continue
            check(close(r[k], ref[k]), f"metrics {name} {k}: got {r[k]} want {ref[k]}")
        check((r["NPUNaN"] or 0) == int(np.isnan(xv.astype(np.float64)).sum()) if xv.size else True, f"{name}: NaN count")
    check("scalar" in rows and "scalar" in rows["scalar"]["CompareFailReason"], "scalar tensors say so")
    check(rows["nan"]["Verdict"] == "FAIL" and rows["same"]["Verdict"] == "PASS", "verdicts: NaN mismatch fails, identical passes")
    check("Boolean" in rows["bool"]["CompareFailReason"], "bool tensors name the unsupported metrics")


# ---- 2. corrupt input: every bad file gets a row with a reason, the good rows are still there -----
def corrupt_suite():
    npu, gold, out = (os.path.join(WORK, d) for d in ("c_npu", "c_gold", "c_out"))
    os.makedirs(npu); os.makedirs(gold)
    x = rng.standard_normal(100).astype(np.float32)
    specs = {
        "good": {}, "truncated": {"truncate": 60}, "hlen_past_end": {"header_len": 1 << 40},
        "size_lies": {"size": 4 * 1000}, "size_small": {"size": 4 * 10}, "bad_dtype": {"code": 99},
        "shape_mismatch": {},
    }
    for task, (name, spec) in enumerate(specs.items()):
        t = {"arr": x}
        if "size" in spec: t["size"] = spec["size"]
        if "code" in spec: t["code"] = spec["code"]
        dg.write_dump(pb, f"{npu}/Op.{name}.{task}.0.{100 + task}", name, outputs=[t], original=name,
                      header_len=spec.get("header_len"), truncate=spec.get("truncate"))
        np.save(f"{gold}/{name}.0.{200 + task}.npy", x[:50] if name == "shape_mismatch" else x)
    with open(f"{WORK}/bad.h5", "wb") as f:
        f.write(b"not hdf5 at all")
    run("compare", "-m", npu, "-g", gold, "-out", out, "--format", "json")
    rows = json_rows(out)
    names = {r["TensorIndex"].split(":")[0]: r for r in rows}
    check(names.get("good", {}).get("Verdict") == "PASS", "corrupt: the good dump still compares")
    for name in specs:
        if name == "good":
            continue
        r = names.get(name)
        check(r is not None and r["CompareFailReason"], f"corrupt: {name} has a row with a reason ({r})")
    p = run("compare", "-m", f"{WORK}/bad.h5", "-g", f"{WORK}/bad.h5", "-out", out, expect=1)
    check("EC0014" in p.stdout, "unreadable h5 is a clear error")


# ---- 3. layouts: convert back to NCHW/ND must equal the original data ------------------------------
def to_nc1hwc0(a):
    n, c, h, w = a.shape
    c1 = (c + 15) // 16
    p = np.zeros((n, c1 * 16, h, w), a.dtype); p[:, :c] = a
    return p.reshape(n, c1, 16, h, w).transpose(0, 1, 3, 4, 2).copy()


def to_fractal_z(a):
    n, c, h, w = a.shape
    c1, n1 = (c + 15) // 16, (n + 15) // 16
    p = np.zeros((n1 * 16, c1 * 16, h, w), a.dtype); p[:n, :c] = a
    # (N1,N0,C1,C0,H,W) -> (C1,H,W,N1,N0,C0)
    return p.reshape(n1, 16, c1, 16, h, w).transpose(2, 4, 5, 0, 1, 3).reshape(c1 * h * w, n1, 16, 16).copy()


def to_fractal_nz(a):
    b, r, c = a.shape
    c1, r1 = (c + 15) // 16, (r + 15) // 16
    p = np.zeros((b, r1 * 16, c1 * 16), a.dtype); p[:, :r, :c] = a
    return p.reshape(b, r1, 16, c1, 16).transpose(0, 3, 1, 2, 4).copy()


def layout_suite():
    d, out = os.path.join(WORK, "l_dump"), os.path.join(WORK, "l_out")
    os.makedirs(d)
    act = rng.standard_normal((2, 20, 3, 5)).astype(np.float32)
    wgt = rng.standard_normal((18, 20, 3, 3)).astype(np.float16)
    mat = rng.standard_normal((2, 20, 33)).astype(np.float32)
    cases = [("5hd", to_nc1hwc0(act), 3, act), ("fz", to_fractal_z(wgt), 4, wgt), ("nz", to_fractal_nz(mat), 29, mat),
             ("nhwc", act.transpose(0, 2, 3, 1).copy(), 1, act), ("hwcn", act.transpose(2, 3, 1, 0).copy(), 16, act)]
    for i, (name, dev, fmt, orig) in enumerate(cases):
        dg.write_dump(pb, f"{d}/Op.{name}.{i}.0.{i + 1}", name, outputs=[{"arr": dev, "fmt": fmt, "orig_shape": orig.shape}])
    for i, (name, dev, fmt, orig) in enumerate(cases):
        target = "ND" if fmt == 29 else "NCHW"
        o = f"{out}_{name}"
        run("convert", "-d", f"{d}/Op.{name}.{i}.0.{i + 1}", "-out", o, "-f", target)
        files = glob.glob(f"{o}/*.npy")
        check(len(files) == 1 and np.array_equal(np.load(files[0]), orig), f"layout {name} -> {target}")
    # plain conversions: npy, bin, txt
    run("convert", "-d", d, "-out", f"{out}_npy")
    check(len(glob.glob(f"{out}_npy/*.output.0.npy")) == len(cases), "convert: one npy per tensor")
    run("convert", "-d", f"{d}/Op.5hd.0.0.1", "-out", f"{out}_txt", "-t", "txt")
    (txt,) = glob.glob(f"{out}_txt/*.txt")
    check(np.allclose(np.loadtxt(txt), cases[0][1].ravel(), rtol=1e-7), "convert: txt holds one value per line")
    run("convert", "-d", f"{d}/Op.5hd.0.0.1", "-out", f"{out}_bin", "-t", "bin")
    (b,) = glob.glob(f"{out}_bin/*.bin")
    check(b.endswith(".2_2_3_5_16.float32.NC1HWC0.bin") and np.array_equal(np.fromfile(b, np.float32), cases[0][1].ravel()), "convert: bin name and bytes")
    # a dump whose NPU tensor is NC1HWC0 compares with an NCHW golden after conversion
    g = os.path.join(WORK, "l_gold"); os.makedirs(g)
    np.save(f"{g}/5hd.0.1.npy", act)
    dg.write_dump(pb, f"{d}/Op.5hd.0.0.1", "5hd", outputs=[{"arr": cases[0][1], "fmt": 3, "orig_shape": act.shape}], original="5hd")
    run("compare", "-m", f"{d}/Op.5hd.0.0.1", "-g", f"{g}/5hd.0.1.npy", "-out", f"{out}_cmp")
    rows = open(glob.glob(f"{out}_cmp/result_*.csv")[0]).read()
    check(",1.000000,0.000000," in rows, "compare converts NC1HWC0 before comparing")


# ---- 4. h5 (PyTorch dumper layout) ----------------------------------------------------------------
def h5_suite():
    import h5py
    a, b, out = f"{WORK}/npu.h5", f"{WORK}/gpu.h5", f"{WORK}/h5_out"
    x = rng.standard_normal((4, 8)).astype(np.float32)
    for path, noise in ((a, 1e-4), (b, 0)):
        with h5py.File(path, "w") as f:
            for seq, op in enumerate(["AddmmBackward", "ReluBackward"]):
                ds = f.create_dataset(f"/{op}/{seq}/input/self", data=x)
                ds.attrs["Type"] = 0
                f.create_dataset(f"/{op}/{seq}/output/result", data=(x + noise).astype(np.float16)).attrs["Type"] = 0
                f.create_dataset(f"/{op}/{seq}/input/alpha", data=np.array([1])).attrs["Type"] = 3  # not a tensor
    run("compare", "-m", a, "-g", b, "-out", out)
    lines = open(glob.glob(f"{out}/result_*.csv")[0]).read().splitlines()
    check(lines[0].startswith("Index,NPUDump,NPUDumpPath,GroundTruthPath,DataType,Shape,CosineSimilarity"), "h5 header")
    check(len(lines) == 5 and "/alpha" not in "".join(lines), f"h5: four tensor rows ({len(lines) - 1})")
    run("compare", "-m", a, "-g", b, "-out", out)  # again, within the same second as a rule
    check(len(glob.glob(f"{out}/result_*.csv")) == 2, "two compares leave two result files")
    # -p 1: the rows of cosine <= 0.95 (here the one output that went negative) and their tensors
    bad = f"{WORK}/npu_bad.h5"
    with h5py.File(bad, "w") as f:
        for seq, op in enumerate(["AddmmBackward", "ReluBackward"]):
            f.create_dataset(f"/{op}/{seq}/input/self", data=x).attrs["Type"] = 0
            f.create_dataset(f"/{op}/{seq}/output/result", data=(-x if seq else x).astype(np.float16)).attrs["Type"] = 0
    pout = f"{WORK}/h5_post"
    run("compare", "-m", bad, "-g", b, "-out", pout, "-p", "1")
    (filtered,) = glob.glob(f"{pout}/result_*_filtered")
    rows = open(f"{filtered}/filtered_result.csv").read().splitlines()
    check(len(rows) == 2 and "/ReluBackward/1/output/result" in rows[1], f"-p 1 keeps the one row under cosine 0.95 ({len(rows) - 1})")
    arrays = sorted(os.listdir(filtered))
    check(len(arrays) == 3 and np.array_equal(np.load(f"{filtered}/{arrays[0]}"), np.load(f"{filtered}/{arrays[1]}") * -1 if "golden" in arrays[0] else np.load(f"{filtered}/{arrays[1]}") * -1),
          f"-p 1 writes the pair of tensors as .npy: {arrays}")
    p = run("compare", "-m", bad, "-g", b, "-out", pout, "-p", "2", expect=1)
    check("[-p]" in p.stdout, "-p takes 0 or 1")
    # The listing comes back from a child process (libhdf5 may fault on a corrupt file): names with spaces, a
    # slash inside the tensor's name and non-ASCII letters survive the trip.
    odd = "/Conv Backward/7/output/grad/input ä"
    pair = []
    for name in ("npu_odd.h5", "gpu_odd.h5"):
        pair.append(f"{WORK}/{name}")
        with h5py.File(pair[-1], "w") as f:
            f.create_dataset(odd, data=x).attrs["Type"] = 0
    oout = f"{WORK}/h5_odd"
    run("compare", "-m", pair[0], "-g", pair[1], "-out", oout)
    rows = open(glob.glob(f"{oout}/result_*.csv")[0], encoding="utf-8").read().splitlines()
    check(len(rows) == 2 and odd in rows[1], f"an odd dataset name is listed and compared: {rows[1:]}")


# ---- 5. file_compare, -map, -op, -r, advisor, overflow column, shards -----------------------------
def misc_suite():
    x = rng.standard_normal(256).astype(np.float32)
    np.save(f"{WORK}/a.npy", x); np.save(f"{WORK}/b.npy", x * 1.001)
    run("file_compare", "-m", f"{WORK}/a.npy", "-g", f"{WORK}/b.npy", "-out", f"{WORK}/fc")
    text = open(glob.glob(f"{WORK}/fc/file_result_*.txt")[0]).read()
    check(text.count("\n") == 8 and "KullbackLeibler" not in text and "CosineSimilarity: 1.000000" in text, "file_compare: 8 metrics")
    for _ in range(2):  # the same second, twice more: each run keeps its own file
        run("file_compare", "-m", f"{WORK}/a.npy", "-g", f"{WORK}/b.npy", "-out", f"{WORK}/fc")
    check(len(glob.glob(f"{WORK}/fc/file_result_*.txt")) == 3, "three file_compare runs leave three result files")
    # a small network: dumps + goldens + fusion rule with a fused op (two original names)
    npu, gold = f"{WORK}/n_npu", f"{WORK}/n_gold"
    os.makedirs(npu); os.makedirs(gold)
    ops, inputs = [], "data"
    t = rng.standard_normal(1000).astype(np.float16)
    np.save(f"{gold}/data.0.1.npy", t)
    for k in range(40):
        name, prev = f"op{k}", t
        t = (t * np.float16(1.01)).astype(np.float16)
        bad, golden = t.copy(), t.copy()
        if k == 20:
            bad[0] = golden[0] = np.float16(65504)  # fp16 overflow at op20 (both sides), not fed on
        if k >= 30:
            bad = (bad + np.float16(0.5)).astype(np.float16)  # diverges from op30 on
        dg.write_dump(pb, f"{npu}/Mul.{name}.{k}.0.{10 + k}", name, inputs=[{"arr": prev if k < 31 else (prev + np.float16(0.5)).astype(np.float16)}],
                      outputs=[{"arr": bad}], original=f"orig{k}")
        np.save(f"{gold}/orig{k}.0.{100 + k}.npy", golden)
        ops.append({"name": name, "type": "Mul", "id": k, "input": [inputs],
                    "attr": [{"key": "_datadump_original_op_names", "value": {"list": {"s": [f"orig{k}"]}}}],
                    "output_desc": [{}]})
        inputs = f"{name}:0"
    fusion = f"{WORK}/net.json"
    json.dump({"graph": [{"op": ops}]}, open(fusion, "w"))
    p = run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", f"{WORK}/n_full", "-advisor")
    check("first divergent op: Index 30 op30" in p.stdout, "first divergent op is op30:\n" + p.stdout)
    check("FP16 Overflow" in open(f"{WORK}/n_full/advisor_summary.txt").read(), "advisor finds the fp16 overflow")
    full = open(glob.glob(f"{WORK}/n_full/result_*.csv")[0]).read()
    check(",YES," in full and full.count("\n") == 81, "OverFlow column and 80 rows")
    for n in (1, 2, 3, 7):
        sd = f"{WORK}/shards{n}"
        for k in range(1, n + 1):
            run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", sd, "-advisor", "--shard", f"{k}/{n}")
        run("merge", "-d", sd, "-out", f"{sd}/merged")
        merged = open(glob.glob(f"{sd}/merged/result_*.csv")[0]).read()
        check(merged == full, f"--shard K/{n} merged equals the single run byte for byte")
    run("merge", "-d", glob.glob(f"{WORK}/shards3/result_*shard1of3.csv")[0], "-out", f"{WORK}/m_bad", expect=1)
    run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", f"{WORK}/n_map", "-map")
    m = open(glob.glob(f"{WORK}/n_map/mapping_*.csv")[0]).read().splitlines()
    check(m[0] == "Index,OpType,NPUDump,GroundTruth,TensorIndex,NPUDumpPath,GroundTruthPath" and len(m) == 81, "-map table")
    run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", f"{WORK}/n_r", "-r", "2,10,4")
    r = open(glob.glob(f"{WORK}/n_r/result_*.csv")[0]).read().splitlines()
    check(r[0].startswith("Index,OpSequence,") and [x.split(",")[1] for x in r[1:]] == ["2", "2", "6", "6", "10", "10"], "-r selects ops 2,6,10")
    run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", f"{WORK}/n_op", "-op", "op35", "-n", "5")
    top = open(f"{WORK}/n_op/op35_output_0_absolute_error_topn.csv").read().splitlines()
    check(top[0] == "Index,D0,NPUDump,GroundTruth,AbsoluteError,RelativeError" and len(top) == 6, "-op top-N file")
    check(os.path.exists(f"{WORK}/n_op/op35_output_0_0.csv") and os.path.exists(f"{WORK}/n_op/op35_output_0_summary.txt"), "-op detail files")
    # bad options are clear errors
    for args in (["-alg", "Nope"], ["-max", "-1"], ["-r", "5,1,1"], ["--shard", "4/3"], ["--format", "xml"]):
        p = run("compare", "-m", npu, "-g", gold, "-f", fusion, "-out", f"{WORK}/n_bad", *args, expect=1)
        check("[ERROR] E10001" in p.stdout, f"bad option {args} is E10001: {p.stdout}")
    # many-to-one: a fused op made of two framework ops compares against the golden of the last one
    fz, fg = f"{WORK}/f_npu", f"{WORK}/f_gold"
    os.makedirs(fz); os.makedirs(fg)
    v = rng.standard_normal(64).astype(np.float32)
    dg.write_dump(pb, f"{fz}/ConvRelu.fused.0.0.1", "fused", outputs=[{"arr": v}], original="relu1")
    np.save(f"{fg}/conv1.0.1.npy", -v); np.save(f"{fg}/relu1.0.2.npy", v)
    json.dump({"graph": [{"op": [{"name": "fused", "type": "ConvRelu", "id": 0, "input": [],
                                  "attr": [{"key": "_datadump_original_op_names", "value": {"list": {"s": ["conv1", "relu1"]}}}],
                                  "output_desc": [{}]}]}]}, open(f"{WORK}/fused.json", "w"))
    run("compare", "-m", fz, "-g", fg, "-f", f"{WORK}/fused.json", "-out", f"{WORK}/f_out")
    fr = open(glob.glob(f"{WORK}/f_out/result_*.csv")[0]).read().splitlines()
    check(len(fr) == 2 and '"conv1,relu1"' in fr[1] and ",PASS," in fr[1], "many-to-one fusion matches the last original op: " + fr[-1])
    p = run("compare", "-m", npu, "-g", gold, "-f", f"{WORK}/a.npy", "-out", f"{WORK}/n_bad", expect=1)
    check("EC0012" in p.stdout, "a broken fusion rule is EC0012")
    p = run("compare", "-m", f"{WORK}/nope", "-g", gold, expect=1)
    check("E13001" in p.stdout, "missing -m path")


# ---- 6. -c custom metrics (CANN's algorithm/alg_<Name>.py) ------------------------------------------
def custom_suite():
    root = f"{WORK}/custom"
    os.makedirs(f"{root}/algorithm", exist_ok=True)
    scripts = {
        "SignFlips": "import numpy as np\ndef compare(my, golden, args):\n    print('chatter on stdout')\n"
                     "    n = int(np.sum(np.sign(my) != np.sign(golden)))\n    return str(n), f'{n} flipped' if n else ''\n",
        "Raises": "def compare(my, golden, args):\n    raise ValueError('no luck')\n",
    }
    for name, text in scripts.items():
        open(f"{root}/algorithm/alg_{name}.py", "w").write(text)
        os.chmod(f"{root}/algorithm/alg_{name}.py", 0o644)
    x = rng.standard_normal(64).astype(np.float32)
    y = x.copy()
    y[:5] *= -1
    np.save(f"{WORK}/c_npu.npy", x), np.save(f"{WORK}/c_gold.npy", y)
    out = f"{WORK}/custom_out"
    run("compare", "-m", f"{WORK}/c_npu.npy", "-g", f"{WORK}/c_gold.npy", "-out", out, "-c", root, "-alg", "0,SignFlips")
    header, row = open(glob.glob(f"{out}/result_*.csv")[0]).read().splitlines()[:2]
    cells = dict(zip(header.split(","), row.split(",")))
    check(cells.get("SignFlips") == "5", f"-c: the custom metric's value is a column ({cells.get('SignFlips')})")
    check(cells.get("Raises") == "NaN" and "Raises: ValueError: no luck" in cells.get("CompareFailReason", ""),
          "-c: a script that raises gives NaN and says why")
    check("MaxAbsoluteError" not in cells, "-alg still selects the built-in metrics")
    spaced = f"{WORK}/custom_spaced"
    os.makedirs(f"{spaced}/algorithm", exist_ok=True)
    open(f"{spaced}/algorithm/alg_Two Words.py", "w").write("def compare(my, golden, args):\n    return '1', ''\n")
    os.chmod(f"{spaced}/algorithm/alg_Two Words.py", 0o644)
    run("compare", "-m", f"{WORK}/c_npu.npy", "-g", f"{WORK}/c_gold.npy", "-out", f"{out}_spaced", "-c", spaced)
    with open(glob.glob(f"{out}_spaced/result_*.csv")[0], newline="") as f:
        cells = next(csv.DictReader(f))
    check(cells.get("Two Words") == "1", f"-c: a metric whose name holds a space is one column ({cells.get('Two Words')})")
    open(f"{root}/algorithm/alg_TwoArgs.py", "w").write("def compare(my, golden):\n    return '0', ''\n")
    os.chmod(f"{root}/algorithm/alg_TwoArgs.py", 0o644)
    p = run("compare", "-m", f"{WORK}/c_npu.npy", "-g", f"{WORK}/c_gold.npy", "-out", out, "-c", root, expect=1)
    check("[-c]" in p.stdout and "exactly three parameters" in p.stdout, "-c: compare() must take (my, golden, args)")
    os.chmod(f"{root}/algorithm/alg_TwoArgs.py", 0o666)
    p = run("compare", "-m", f"{WORK}/c_npu.npy", "-g", f"{WORK}/c_gold.npy", "-out", out, "-c", root, expect=1)
    check("anyone may write it" in p.stdout, "-c: an other-writable script is refused")


# ---- 7. -c format_convert/convert_<SRC>_to_<DST>.py (CANN's custom layout conversions) -----------------
def format_script_suite():
    root, d = f"{WORK}/fmt_scripts", f"{WORK}/fmt_dump"
    os.makedirs(f"{root}/format_convert"), os.makedirs(d)
    def script(pair, body):
        path = f"{root}/format_convert/convert_{pair}.py"
        open(path, "w").write("import numpy as np\n" + body)
        os.chmod(path, 0o644)
    # A pair npukit lacks (NC1HWC0 -> NHWC) and one that replaces a built-in (NC1HWC0 -> NCHW, here scaled by 2
    # so the test can tell whose conversion ran).
    script("NC1HWC0_to_NHWC", "def convert(shape_from, shape_to, array):\n"
           "    n, c1, h, w, c0 = shape_from\n    c = shape_to[1]\n"
           "    return array.transpose(0, 2, 3, 1, 4).reshape(n, h, w, c1 * c0)[..., :c]\n")
    script("NC1HWC0_to_NCHW", "def convert(shape_from, shape_to, array):\n"
           "    n, c1, h, w, c0 = shape_from\n"
           "    return (2 * array.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :shape_to[1]]).astype(array.dtype)\n")
    act = rng.standard_normal((1, 20, 3, 5)).astype(np.float32)
    dump = f"{d}/Conv2D.conv.1.0.1"
    dg.write_dump(pb, dump, "conv", outputs=[{"arr": to_nc1hwc0(act), "fmt": 3, "orig_shape": act.shape}], original="conv")
    out = f"{WORK}/fmt_out"
    run("convert", "-d", dump, "-out", f"{out}_nhwc", "-f", "NHWC", "-c", root)
    files = glob.glob(f"{out}_nhwc/*.npy")
    check(len(files) == 1 and np.array_equal(np.load(files[0]), act.transpose(0, 2, 3, 1)), "convert -c: a script adds NC1HWC0 -> NHWC")
    run("convert", "-d", dump, "-out", f"{out}_nchw", "-f", "NCHW", "-c", root)
    files = glob.glob(f"{out}_nchw/*.npy")
    check(len(files) == 1 and np.array_equal(np.load(files[0]), 2 * act), "convert -c: a script replaces the built-in NC1HWC0 -> NCHW")
    p = run("convert", "-d", dump, "-out", f"{out}_hwcn", "-f", "HWCN", "-c", root, expect=1)
    check("NC1HWC0" in p.stdout and "HWCN" in p.stdout, "convert -c: a pair no script or built-in covers is an error naming both formats")
    p = run("convert", "-d", dump, "-out", f"{out}_x", "-f", "NHWC", expect=1)
    check("[-f]" in p.stdout and "format_convert/convert_<SRC>_to_NHWC.py" in p.stdout, "convert -f NHWC without -c says which script would do it")
    # compare applies the same script before the metrics: the doubled tensor against the golden.
    g = f"{WORK}/fmt_gold"
    os.makedirs(g)
    np.save(f"{g}/conv.0.1.npy", 2 * act)
    run("compare", "-m", dump, "-g", f"{g}/conv.0.1.npy", "-out", f"{out}_cmp", "-c", root)
    rows = open(glob.glob(f"{out}_cmp/result_*.csv")[0]).read()
    check(",1.000000,0.000000," in rows, "compare -c: the NPU tensor goes through the user's NC1HWC0 -> NCHW script")
    # A script that raises or changes the type is the row's reason, not a crash.
    script("NC1HWC0_to_NCHW", "def convert(shape_from, shape_to, array):\n    return array.astype(np.float64)\n")
    run("compare", "-m", dump, "-g", f"{g}/conv.0.1.npy", "-out", f"{out}_cmp2", "-c", root)
    rows = open(glob.glob(f"{out}_cmp2/result_*.csv")[0]).read()
    check("keeps the type" in rows, "compare -c: a script that returns another dtype is the row's reason")
    script("NCHW_to_BOGUS", "def convert(a, b, c):\n    return c\n")
    p = run("convert", "-d", dump, "-out", f"{out}_bad", "-f", "NCHW", "-c", root, expect=1)
    check("convert_NCHW_to_BOGUS.py" in p.stdout, "-c: a script named after an unknown format is refused, by name")


metrics_suite()
corrupt_suite()
layout_suite()
h5_suite()
misc_suite()
custom_suite()
format_script_suite()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
