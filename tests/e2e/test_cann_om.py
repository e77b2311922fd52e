#!/usr/bin/python3
"""The .om files CANN's ATC writes: atc --mode=6 and --mode=1 on the real A3C .om (tests/data/om), msame
running it against npukit's own conversion of the .pb it was built from, the same model rewritten into the v2 and
current header generations, and every header or ModelDef lie as a coded error (written with Python protobuf classes from libcore/frontend/ge/ge_ir.proto, not npukit's reader).
usage: test_cann_om.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import functools
import glob
import importlib
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SOURCE, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
ATC = os.path.join(BUILD, "tools/atc/atc")
MSAME = os.path.join(BUILD, "tools/msame/msame")
CMP = os.path.join(BUILD, "tools/msaccucmp/msaccucmp")
REAL = os.path.join(T.DATA, "om/a3c_pong_model.om")
PB = os.path.join(T.DATA, "tf/a3c_pong_model.pb")
HEADER = 256
ge = task_pb2 = None


run = functools.partial(T.run, cwd=WORK)  # every command runs in the work folder


def atc(*args):
    return run(ATC, *args)


must = functools.partial(T.must, cwd=WORK)


def dumped(folder, op, tensor):
    """One tensor of an op's dump in `folder` (msaccucmp convert -f NCHW), as an array."""
    (path,) = glob.glob(os.path.join(WORK, folder, "*/0/*/1/0", f"*.{op}.*"))
    out = os.path.join(WORK, folder + "_npy", op)
    fmt = ["-f", "NCHW"] if op.startswith("W_0_conv") else []
    must(CMP, "convert", "-d", path, "--out", out, *fmt)
    (npy,) = glob.glob(os.path.join(out, f"*.{tensor}.*npy"))
    return np.load(npy).astype(np.float32)


def parts_of(data):
    """(header, [(type, bytes)]) of a v1 file (12-byte table)."""
    count = struct.unpack_from("<I", data, HEADER)[0]
    table = [struct.unpack_from("<III", data, HEADER + 4 + 12 * k) for k in range(count)]
    base = HEADER + 4 + 12 * count
    return data[:HEADER], [(t, data[base + off:base + off + size]) for t, off, size in table]


def build(header, parts, generation="v1", count=None, models=1):
    """A file of `parts` with a header of the given generation (ge_formats.md §3); models > 1 repeats the table
    and partitions that many times (model_num)."""
    h = bytearray(header)
    platform = bytes(h[156:176])
    body = b"".join(p for _, p in parts)
    n = len(parts) if count is None else count
    if generation == "current":
        table = struct.pack("<II", n, 0)
        off = 0
        for t, p in parts:
            table += struct.pack("<IIQQ", t, 0, off, len(p))
            off += len(p)
    else:
        table = struct.pack("<I", n)
        off = 0
        for t, p in parts:
            table += struct.pack("<III", t, off, len(p))
            off += len(p)
    if generation != "v1":
        struct.pack_into("<I", h, 8, 0x20000000)
        h[156:160] = struct.pack("<I", models)  # model_num
        h[160:180] = platform
        h[180] = 1
    rest = (table + body) * models
    struct.pack_into("<I", h, 76, len(rest))
    struct.pack_into("<Q", h, 184, len(rest) if generation == "current" else 0)
    return bytes(h) + rest


class RealOm(unittest.TestCase):
    def test_mode6(self):
        r = atc("--mode=6", f"--om={REAL}")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for text in ("atc_version[1.75.22.0.220]", "soc_version[Ascend310]", "weight_size[320000 B]", "tbe_kernels_size[20918 B]",
                     "input  s: float32[1,42,42,1] NHWC", "output out_a: int32[1]", "v1 header"):
            self.assertIn(text, r.stdout)

    def test_mode1_json(self):
        r = atc("--mode=1", f"--om={REAL}", "--json=real.json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        model = json.load(open(os.path.join(WORK, "real.json")))
        g = model["graph"][0]
        # Netron's 14 ops: these 12, the Data op (graph input) and NetOutput (graph output); and the 11 Consts
        self.assertEqual([o["type"] for o in T.model_ops(model)], ["Cast", "TransData", "Conv2D", "Conv2D", "Conv2D", "TransData", "TransData",
                                                                   "MatMulV2", "MatMulV2", "SoftmaxV2", "TransData", "ArgMaxD"])
        types = [o["type"] for o in g["op"]]
        self.assertEqual((types[0], types[-1], types.count("Const")), ("Data", "NetOutput", 11))
        self.assertEqual([o["name"] for o in g["op"] if o["type"] == "Data"], ["s"])
        self.assertEqual(g["op"][-1]["input"][0], "out_a:0")
        data = g["op"][0]
        self.assertEqual(T.attr(data, "is_first_node"), {"b": True}, "a stored bool is printed as a bool")
        self.assertEqual(data["output_desc"][0]["dtype"], "DT_FLOAT")
        conv = next(o for o in g["op"] if o["name"].startswith("W_0/conv1"))
        names = next(a["value"]["list"]["s"] for a in conv["attr"] if a["key"] == "_datadump_original_op_names")
        self.assertIn("W_0/conv1/Conv2D", names)
        self.assertIn("W_0/conv1/Relu", names)

    def test_other_header_generations(self):
        header, parts = parts_of(open(REAL, "rb").read())
        for generation in ("v2", "current"):
            with self.subTest(generation=generation):
                path = os.path.join(WORK, f"a3c_{generation}.om")
                open(path, "wb").write(build(header, parts, generation))
                r = atc("--mode=6", f"--om={path}")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn(f"({generation} header)", r.stdout)
                self.assertIn("soc_version[Ascend310]", r.stdout)

    def test_several_models_in_one_file(self):
        header, parts = parts_of(open(REAL, "rb").read())
        path = os.path.join(WORK, "a3c_two_models.om")
        open(path, "wb").write(build(header, parts, "current", models=2))
        r = atc("--mode=6", f"--om={path}")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("holds 2 models", r.stdout)
        must(MSAME, "--model", path, "--output", "out_two_models")
        broken = bytearray(build(header, parts, "current", models=2))
        table2 = HEADER + (8 + 24 * len(parts)) + sum(len(p) for _, p in parts)
        struct.pack_into("<I", broken, table2, 9)  # the second model's partition count
        open(path, "wb").write(broken)
        r = atc("--mode=6", f"--om={path}")
        self.assertIn("model 1: partition count 9", r.stdout + r.stderr)


class RealOmRuns(unittest.TestCase):
    """msame runs the real .om with npukit's kernels (TBE ops mapped, weights read back from FRACTAL_Z/FRACTAL_NZ,
    strides recovered from the shapes): on the same input it computes what npukit's own force_fp16 conversion of
    the .pb computes, and its dumps compare with the .pb's golden dumps through the real .om's own JSON."""

    @classmethod
    def setUpClass(cls):
        x = np.random.default_rng(11).random((1, 42, 42, 1)).astype(np.float32)
        np.save(os.path.join(WORK, "run_in.npy"), x)
        for name in ("real", "own", "golden"):
            json.dump({"dump": {"dump_path": f"d_{name}", "dump_list": [], "dump_mode": "all"}}, open(os.path.join(WORK, f"{name}.json"), "w"))
        must(ATC, "--framework=3", f"--model={PB}", "--output=own", "--soc_version=Ascend310", "--precision_mode=force_fp16")
        cls.real_run = must(MSAME, "--model", REAL, "--input", "run_in.npy", "--acl_json_path", "real.json", "--output", "out_real")
        must(MSAME, "--model", "own.om", "--input", "run_in.npy", "--acl_json_path", "own.json", "--output", "out_own")
        must(MSAME, "--model", PB, "--input", "run_in.npy", "--acl_json_path", "golden.json", "--output", "out_golden")

    def test_runs_on_zeros_with_the_models_soc(self):
        out = must(MSAME, "--model", REAL, "--output", "out_zeros")
        self.assertIn("Ascend310", out)
        (path,) = glob.glob(os.path.join(WORK, "out_zeros/*output_0.bin"))
        (action,) = np.fromfile(path, dtype=np.int32)
        self.assertIn(action, range(6))

    def test_matches_npukits_own_conversion(self):
        (real,) = [np.fromfile(p, dtype=np.int32) for p in glob.glob(os.path.join(WORK, "out_real/*output_0.bin"))]
        (own,) = [np.fromfile(p, dtype=np.int32) for p in glob.glob(os.path.join(WORK, "out_own/*output_0.bin"))]
        self.assertEqual(list(real), list(own))
        # Every layer on the way, not only the argmax: the convs (NC1HWC0 dumps in NCHW) and the softmax.
        for real_op, own_op in (("W_0_conv1_Conv2DW_0_conv1_Relu", "W_0_conv1_Conv2D"), ("W_0_conv3_Conv2DW_0_conv3_Relu", "W_0_conv3_Conv2D"),
                                ("W_0_actor_ap_Softmax", "W_0_actor_ap_Softmax")):
            a, b = dumped("d_real", real_op, "output.0"), dumped("d_own", own_op, "output.0")
            self.assertEqual(a.shape, b.shape, real_op)
            np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3, err_msg=real_op)
        softmax = dumped("d_real", "W_0_actor_ap_Softmax", "output.0").reshape(-1)[:6]
        self.assertAlmostEqual(float(softmax.sum()), 1.0, delta=5e-3)

    def test_compare_with_the_real_json(self):
        must(ATC, "--mode=1", f"--om={REAL}", "--json=real_rule.json")
        (npu,) = glob.glob(os.path.join(WORK, "d_real/*/0/*/1/0"))
        (golden,) = glob.glob(os.path.join(WORK, "d_golden/*/0/*/1/0"))
        report = must(CMP, "compare", "-m", npu, "-g", golden, "-f", "real_rule.json", "-out", "cmp_real")
        self.assertIn("FAIL 0", report)
        import csv
        rows = {r["TensorIndex"]: r for c in glob.glob(os.path.join(WORK, "cmp_real/*.csv")) for r in csv.DictReader(open(c))}
        for conv in ("W_0/conv1/Conv2DW_0/conv1/Relu:output:0", "W_0/conv3/Conv2DW_0/conv3/Relu:output:0", "W_0/actor/ap/Softmax:output:0"):
            self.assertGreater(float(rows[conv]["CosineSimilarity"]), 0.999, conv)

    def test_mode6_says_it_runs(self):
        out = must(ATC, "--mode=6", f"--om={REAL}")
        self.assertIn("runs its ops with its own kernels", out)
        self.assertIn("Simulated NPU time", out)

    def test_compressed_attributes(self):
        """Newer CANN's attribute compression: names and string values replaced by indices into model lists."""
        header, parts = parts_of(open(REAL, "rb").read())
        md = ge.ModelDef()
        md.ParseFromString(dict(parts)[0])
        # 100 names no op uses first, so the real ones get two-digit (base 127) indices too
        names, values, string_valued = [f"unused_{k}" for k in range(100)], [], [False] * 100

        def encode(index):
            key = "\0"
            while True:
                key += chr(index % 127 + 1)
                index //= 127
                if not index:
                    return key

        def compress(attrs):
            for k in list(attrs.keys()):
                a = ge.AttrDef()
                a.CopyFrom(attrs[k])
                if k not in names:
                    names.append(k)
                    string_valued.append(a.WhichOneof("value") == "s" or (a.WhichOneof("value") == "list" and len(a.list.s) > 0))
                if string_valued[names.index(k)]:
                    strings = [a.s.decode()] if a.WhichOneof("value") == "s" else [x.decode() for x in a.list.s]
                    idx = [values.index(x) if x in values else (values.append(x) or len(values) - 1) for x in strings]
                    if a.WhichOneof("value") == "s":
                        a.i = idx[0]
                    else:
                        del a.list.s[:]
                        a.list.i.extend(idx)
                del attrs[k]
                attrs[encode(names.index(k))].CopyFrom(a)

        for op in md.graph[0].op:
            compress(op.attr)
            for d in list(op.input_desc) + list(op.output_desc):
                compress(d.attr)
        md.attr["om_compress_version"].i = 1
        md.attr["attr_name_enum"].list.s.extend(n.encode() for n in names)
        md.attr["attr_value_enum"].list.s.extend(v.encode() for v in values)
        md.attr["attrs_use_string_value"].list.b.extend(string_valued)
        self.assertGreater(len(names), 127)
        path = os.path.join(WORK, "compressed.om")
        open(path, "wb").write(build(header, [(0, md.SerializeToString())] + parts[1:]))
        must(ATC, "--mode=1", f"--om={path}", "--json=compressed.json")
        must(ATC, "--mode=1", f"--om={REAL}", "--json=plain.json")
        plain, compressed = (json.load(open(os.path.join(WORK, f))) for f in ("plain.json", "compressed.json"))
        self.assertEqual(plain["graph"], compressed["graph"])
        out = must(MSAME, "--model", path, "--input", "run_in.npy", "--output", "out_compressed")
        self.assertIn("success", out)
        (a,) = [np.fromfile(p, dtype=np.int32) for p in glob.glob(os.path.join(WORK, "out_compressed/*output_0.bin"))]
        (b,) = [np.fromfile(p, dtype=np.int32) for p in glob.glob(os.path.join(WORK, "out_real/*output_0.bin"))]
        self.assertEqual(list(a), list(b))
        md.attr["attr_name_enum"].list.s.pop()
        open(path, "wb").write(build(header, [(0, md.SerializeToString())] + parts[1:]))
        r = run(ATC, "--mode=6", f"--om={path}")
        self.assertIn("E10003", r.stdout + r.stderr)
        self.assertIn("is past attr_name_enum", r.stdout + r.stderr)

    def test_ops_without_a_kernel_are_listed_at_once(self):
        header, parts = parts_of(open(REAL, "rb").read())
        md = ge.ModelDef()
        md.ParseFromString(dict(parts)[0])
        for op in md.graph[0].op:
            if op.type in (b"SoftmaxV2", b"ArgMaxD"):
                op.type = b"Npukit" + op.type + b"Unknown"
        path = os.path.join(WORK, "unknown_ops.om")
        open(path, "wb").write(build(header, [(0, md.SerializeToString())] + parts[1:]))
        r = run(MSAME, "--model", path, "--output", "out_unknown")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("E10003", r.stdout + r.stderr)
        self.assertIn("NpukitSoftmaxV2Unknown", r.stdout + r.stderr)
        self.assertIn("NpukitArgMaxDUnknown", r.stdout + r.stderr)
        self.assertIn("msame cannot run it", must(ATC, "--mode=6", f"--om={path}"))


def device_layout(w, layout):
    """numpy's own FRACTAL_Z of an OIHW weight and FRACTAL_NZ of a matrix (reference/atc.md §5): C0 = 16 for
    2- and 4-byte types, blocks zero-padded."""
    c0 = 32 if w.dtype.itemsize == 1 else 16
    up = lambda n, b: -(-n // b) * b
    if layout == "FRACTAL_Z":
        n, c, h, ww = w.shape
        p = np.zeros((up(n, 16), up(c, c0), h, ww), w.dtype)
        p[:n, :c] = w
        # (N1, N0, C1, C0, H, W) -> (C1, H, W, N1, N0, C0) -> (C1*H*W, N1, N0, C0)
        return p.reshape(up(n, 16) // 16, 16, up(c, c0) // c0, c0, h, ww).transpose(2, 4, 5, 0, 1, 3).reshape(-1, up(n, 16) // 16, 16, c0)
    if layout == "FRACTAL_NZ":
        r, c = w.shape
        p = np.zeros((up(r, 16), up(c, c0)), w.dtype)
        p[:r, :c] = w
        return p.reshape(up(r, 16) // 16, 16, up(c, c0) // c0, c0).transpose(2, 0, 1, 3)
    raise AssertionError("unexpected layout " + layout)


def partitions(data):
    """{type: bytes} of an npukit .om (current header, 24-byte table)."""
    count = struct.unpack_from("<I", data, HEADER)[0]
    base = HEADER + 8 + 24 * count
    out = {}
    for k in range(count):
        t, off, size = struct.unpack_from("<IxxxxQQ", data, HEADER + 8 + 24 * k)
        out[t] = data[base + off:base + off + size]
    return out


class NpukitOmIsModelDef(unittest.TestCase):
    """npukit's MODEL_DEF is a ge.proto.ModelDef: other decoders (protoc, Python protobuf) read it."""

    @classmethod
    def setUpClass(cls):
        import onnx
        cls.onnx = onnx.load(os.path.join(SOURCE, "examples/tinynet.onnx"))
        for mode in ("must_keep_origin_dtype", "force_fp16"):
            r = atc("--framework=5", f"--model={SOURCE}/examples/tinynet.onnx", f"--output=tiny_{mode}", "--soc_version=Ascend310P3",
                    f"--precision_mode={mode}")
            assert r.returncode == 0, r.stdout + r.stderr
            r = atc("--mode=1", f"--om=tiny_{mode}.om", f"--json=tiny_{mode}.json")
            assert r.returncode == 0, r.stdout + r.stderr

    def model_def(self, mode):
        parts = partitions(open(os.path.join(WORK, f"tiny_{mode}.om"), "rb").read())
        md = ge.ModelDef()
        md.ParseFromString(parts[0])
        return md, parts.get(1, b"")

    def test_protoc_decodes_every_op(self):
        for mode in ("must_keep_origin_dtype", "force_fp16"):
            md, _ = self.model_def(mode)
            proto_dir = os.path.join(SOURCE, "libcore/frontend/ge")
            text = subprocess.run(["protoc", f"-I{proto_dir}", "--decode=npukit.ge.ModelDef", os.path.join(proto_dir, "ge_ir.proto")],
                                  input=md.SerializeToString(), capture_output=True, check=True).stdout.decode()
            ops = json.load(open(os.path.join(WORK, f"tiny_{mode}.json")))["graph"][0]["op"]
            for op in ops:
                self.assertIn(f'name: "{op["name"]}"', text)
                self.assertIn(f'type: "{op["type"]}"', text)
                for d in op.get("output_desc", []):
                    self.assertIn(f'layout: "{d["layout"]}"', text)

    def test_shape_only_ops_are_not_listed(self):
        """GE removes static shape-only ops from the graph it saves; so does npukit: tinynet's Flatten is gone, the
        MatMulV2 reads the tensor before it through a desc of the flattened shape, every op listed has a task, and
        msame gives the same outputs as on the .onnx."""
        md, _ = self.model_def("must_keep_origin_dtype")
        ops = [op for op in md.graph[0].op if op.type not in (b"Data", b"Const", b"NetOutput")]
        self.assertFalse([op.name for op in ops if op.type in (b"Reshape", b"Flatten", b"Squeeze", b"Unsqueeze", b"ExpandDims", b"Identity")])
        gemm = next(op for op in ops if op.type == b"MatMulV2")
        self.assertEqual(list(gemm.input_desc[0].shape.dim), [1, 16])
        producer = next(op for op in ops if op.name == gemm.input[0].rsplit(b":", 1)[0])
        self.assertEqual(list(producer.output_desc[0].shape.dim), [1, 16, 1, 1])
        parts = partitions(open(os.path.join(WORK, "tiny_must_keep_origin_dtype.om"), "rb").read())
        td = task_pb2.ModelTaskDef()
        td.ParseFromString(parts[2])
        self.assertEqual(len(td.task), len(ops))
        outs = []
        for model in ("tiny_must_keep_origin_dtype.om", os.path.join(SOURCE, "examples/tinynet.onnx")):
            out = os.path.join(WORK, "shape_only_" + os.path.basename(model))
            r = subprocess.run([MSAME, f"--model={model}", f"--input={SOURCE}/examples/input.npy", f"--output={out}", "--outfmt=NPY"],
                               cwd=WORK, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            outs.append(np.load(sorted(glob.glob(f"{out}/*.npy"))[0]))
        np.testing.assert_allclose(outs[0], outs[1], atol=1e-6)

    def test_task_info_is_domi_model_task_def(self):
        parts = partitions(open(os.path.join(WORK, "tiny_force_fp16.om"), "rb").read())
        md, _ = self.model_def("force_fp16")
        td = task_pb2.ModelTaskDef()
        td.ParseFromString(parts[2])
        tasks = json.load(open(os.path.join(WORK, "tiny_force_fp16.json")))["task"]
        self.assertEqual(len(td.task), len(tasks))
        computing = [op for op in md.graph[0].op if op.type not in (b"Data", b"Const", b"NetOutput")]
        for t, j in zip(td.task, tasks):
            index = t.kernel_ex.op_index if t.type == 5 else t.kernel.context.op_index
            self.assertEqual(computing[index].name.decode(), j["op"])
            self.assertEqual(t.stream_id, j["stream_id"])
            if t.type == 0:
                self.assertEqual(t.kernel.block_dim, j["block_dim"])
        self.assertGreaterEqual(td.stream_num, 1)
        self.assertGreater(td.memory_size, 0)
        self.assertEqual(td.memory_size % 512, 0)
        self.assertEqual(md.attr["memory_size"].i, td.memory_size)
        self.assertEqual(list(md.attr["om_info_list"].list.i), [len(parts[0]), len(parts[1]), 0, 0, len(parts[2])])
        r = atc("--mode=6", "--om=tiny_force_fp16.om")
        self.assertIn(f"memory_size[{td.memory_size} B]", r.stdout)

    def test_python_finds_ops_inputs_and_weights(self):
        import numpy as np
        from onnx import numpy_helper
        initializers = {t.name: numpy_helper.to_array(t) for t in self.onnx.graph.initializer}
        md, weights = self.model_def("must_keep_origin_dtype")
        ops = {op.name.decode(): op for op in md.graph[0].op}
        types = [op.type.decode() for op in md.graph[0].op]
        self.assertEqual(types[0], "Data")
        self.assertEqual(types[-1], "NetOutput")
        for op in md.graph[0].op:  # every input names an op before it
            for i in op.input:
                if i:
                    self.assertIn(i.decode().rsplit(":", 1)[0], ops)
        found = set()
        for mode, dtype in (("must_keep_origin_dtype", np.float32), ("force_fp16", np.float16)):
            md, weights = self.model_def(mode)
            for op in md.graph[0].op:
                # a weight atc cast or laid out in a device format is named after it: <initializer>_float16_FRACTAL_Z
                name = op.name.decode().removesuffix("_FRACTAL_Z").removesuffix("_FRACTAL_NZ").removesuffix("_float16")
                if op.type != b"Const" or name not in initializers:
                    continue
                d = op.attr["value"].t.desc
                if d.attr["_npukit_sub_format"].i > 1:  # grouped FRACTAL_Z (block-diagonal groups): the unit tests' layout
                    continue
                ref = initializers[name].astype(dtype)
                layout = d.layout.decode()
                data = np.frombuffer(weights[d.data_offset:d.data_offset + d.weight_size], dtype=dtype)
                expect = ref if layout in ("ND", "NCHW") else device_layout(ref, layout)
                np.testing.assert_array_equal(data.reshape(expect.shape), expect, err_msg=f"{op.name.decode()} ({layout}, {mode})")
                found.add(layout)
        self.assertIn("FRACTAL_Z", found, "no conv weight in its device layout")


def value_kind(v):
    """The kind of an attribute value in ATC's JSON: "i", "f", "s", "b", "t", "list(i)", ..., or "null"."""
    if not v:
        return "null"
    (k,) = v.keys()
    return f"list({','.join(sorted(x for x in v['list'] if x != 'val_type'))})" if k == "list" and v["list"] else k


class Mode1JsonAsAtcPrintsIt(unittest.TestCase):
    """atc --mode=1 of an npukit .om has the shape of real ATC's JSON (tests/data/om_json: an AMCT-quantized TF
    ResNet-50 built by CANN's ATC): for every op type both have, the same OpDef fields, the same tensor desc fields,
    and the same kind of value for every attribute both have; floats as "%g" text, bools as bools, enums by name.
    Known differences, each with its reason: `input_name` (GE keeps the placeholder names of its subgraph
    partition on some ops; npukit has no such partition), a desc's `name` (npukit names its tensors: the loader and
    the dump files use the names), top-level `custom_version` (the user's model version, which no atc flag sets)
    and `task` (npukit's tilings, which ATC's JSON does not show)."""

    REAL_JSON = os.path.join(T.DATA, "om_json/amct_tf_resnet50_v1_quantized.json")
    FLAGS = {"input_tensor", "reuse_input", "reuse_input_index"}  # desc flags stored where they hold

    @classmethod
    def setUpClass(cls):
        must(ATC, "--framework=5", f"--model={os.path.join(SOURCE, 'examples/tinynet.onnx')}", "--output=shape_tiny",
             "--soc_version=Ascend310P3")
        must(ATC, "--mode=1", "--om=shape_tiny.om", "--json=shape_tiny.json")
        cls.ours = json.load(open(os.path.join(WORK, "shape_tiny.json")))
        cls.real = json.load(open(cls.REAL_JSON))

    def by_type(self, model):
        out = {}
        for op in T.model_ops(model, compute_only=False):
            out.setdefault(op["type"], op)
        return out

    def test_top_level_and_graph_keys(self):
        self.assertEqual(set(self.ours) - {"task"}, set(self.real) - {"custom_version"})
        self.assertEqual(set(self.ours["graph"][0]) - {"attr"}, set(self.real["graph"][0]) - {"attr"})

    def test_op_fields(self):
        ours, real = self.by_type(self.ours), self.by_type(self.real)
        shared = set(ours) & set(real)
        self.assertTrue({"Data", "Const", "Cast", "TransData", "Conv2D", "SoftmaxV2", "NetOutput"} <= shared, shared)
        for t in sorted(shared):
            with self.subTest(op=t):
                self.assertEqual(set(ours[t]) - {"input_name"}, set(real[t]) - {"input_name"})
                for field in ("input_desc", "output_desc"):
                    for mine, theirs in zip(ours[t].get(field, []), real[t].get(field, [])):
                        self.assertEqual(set(mine) - {"name"} - self.FLAGS, set(theirs) - self.FLAGS)
                self.assertTrue(all(isinstance(x, bool) for x in ours[t].get("is_input_const", [])))

    def test_attribute_kinds(self):
        ours, real = self.by_type(self.ours), self.by_type(self.real)
        compared = 0
        for t in set(ours) & set(real):
            theirs = {a["key"]: value_kind(a["value"]) for a in real[t].get("attr", [])}
            for a in ours[t].get("attr", []):
                if a["key"] in theirs and theirs[a["key"]] != "null" and value_kind(a["value"]) != "null":
                    compared += 1
                    self.assertEqual(value_kind(a["value"]), theirs[a["key"]], f"{t}.{a['key']}")
        self.assertGreater(compared, 0)
        const = self.by_type(self.ours)["Const"]
        self.assertEqual(set(T.attr(const, "value")["t"]), {"desc"}, "a Const's tensor shows its desc, not its bytes")
        for model in (self.ours, self.real):
            for op in T.model_ops(model, compute_only=False):
                for d in op.get("input_desc", []) + op.get("output_desc", []):
                    self.assertTrue(d.get("dtype", "DT_UNDEFINED").startswith("DT_"), d)  # DT_UNDEFINED is 0: not stored
                    origin_shape = T.attr(d, "origin_shape")
                    if origin_shape and origin_shape["list"].get("i"):
                        self.assertEqual(origin_shape["list"]["val_type"], "VT_LIST_INT")

    def test_float_attrs_print_as_atc_prints_them(self):
        floats = [a["value"]["f"] for op in T.model_ops(self.real, compute_only=False) for a in op.get("attr", [])
                  if a["value"] and "f" in a["value"]]
        self.assertTrue(floats and all(isinstance(f, str) for f in floats), floats)
        import onnx
        from onnx import TensorProto, helper
        om = os.path.join(WORK, "leaky.onnx")
        g = helper.make_graph([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.2, name="leaky")], "leaky",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), om)
        must(ATC, "--framework=5", f"--model={om}", "--output=leaky", "--soc_version=Ascend310P3")
        must(ATC, "--mode=1", "--om=leaky.om", "--json=leaky.json")
        (op,) = [o for o in T.model_ops(os.path.join(WORK, "leaky.json")) if o["name"] == "leaky"]
        self.assertEqual(T.attr(op, "alpha") or T.attr(op, "negative_slope"), {"f": "0.2"})


class Lies(unittest.TestCase):
    """Every lie of the header or the ModelDef is E10003, exit 1; nothing crashes."""

    def expect(self, data, why):
        path = os.path.join(WORK, "lie.om")
        open(path, "wb").write(data)
        r = atc("--mode=6", f"--om={path}")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("E10003", r.stdout + r.stderr)
        self.assertIn(why, r.stdout + r.stderr)

    def test_header_lies(self):
        data = open(REAL, "rb").read()
        header, parts = parts_of(data)
        self.expect(data[:-10], "length field")
        self.expect(data + b"\0" * 4, "length field")
        encrypted = bytearray(data)
        encrypted[80] = 1
        self.expect(bytes(encrypted), "encrypted")
        self.expect(b"PK\x03\x04" + data[4:], "OM2")
        self.expect(build(header, []), "partition count 0")
        nine = bytearray(data)
        struct.pack_into("<I", nine, HEADER, 9)
        self.expect(bytes(nine), "partition count 9")
        past = bytearray(data)
        struct.pack_into("<I", past, HEADER + 4 + 12 + 4, 10**8)  # second partition's offset
        self.expect(bytes(past), "outside the file or overlaps")
        overlap = bytearray(data)
        struct.pack_into("<I", overlap, HEADER + 4 + 12 + 4, 16)
        self.expect(bytes(overlap), "overlaps")

    def test_model_def_lies(self):
        data = open(REAL, "rb").read()
        header, parts = parts_of(data)
        model = dict(parts)[0]
        self.expect(build(header, [(0, b"\xff" * 64)] + parts[1:]), "not a ge.proto.ModelDef")
        md = ge.ModelDef()
        md.ParseFromString(model)
        conv = next(op for op in md.graph[0].op if op.type == b"Conv2D")
        conv.input[0] = b"ghost:0"
        self.expect(build(header, [(0, md.SerializeToString())] + parts[1:]), "'ghost:0', which no earlier op makes")
        md.ParseFromString(model)
        const = next(op for op in md.graph[0].op if op.type == b"Const")
        const.attr["value"].t.desc.data_offset = 10**7
        self.expect(build(header, [(0, md.SerializeToString())] + parts[1:]), "passes the end of WEIGHTS_DATA")
        md.ParseFromString(model)
        md.graph[0].op[0].output_desc[0].dtype = 99
        self.expect(build(header, [(0, md.SerializeToString())] + parts[1:]), "data type 99")


if __name__ == "__main__":
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    proto_dir = os.path.join(SOURCE, "libcore/frontend/ge")
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={WORK}", os.path.join(proto_dir, "ge_ir.proto")], check=True)
    sys.path.insert(0, WORK)
    ge = importlib.import_module("ge_ir_pb2")
    subprocess.run(["protoc", f"-I{SOURCE}/libcore/om", f"--python_out={WORK}", f"{SOURCE}/libcore/om/task.proto"], check=True)
    task_pb2 = importlib.import_module("task_pb2")
    unittest.main(argv=sys.argv[:1], verbosity=2)
