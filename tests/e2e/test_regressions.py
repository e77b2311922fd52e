#!/usr/bin/python3
"""Regression tests for the eight defects found from outside (issue 35): each ran the release binaries on a
mutated real input and crashed or misbehaved. Every case here runs the binaries the same way.
usage: test_regressions.py BUILD_DIR WORK_DIR"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TOOLS = {t: os.path.join(BUILD, f"tools/{t}/{t}") for t in ("atc", "msame", "msaccucmp", "aoe", "profparse")}
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples")


def run(tool, *args, env=None, cwd=None):
    return T.run(TOOLS[tool], *args, cwd=cwd, env={**os.environ, **(env or {})})


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def fresh(name):
    return T.fresh(os.path.join(WORK, name))


class Crashless(unittest.TestCase):
    def assertCoded(self, p, code):
        """Exit 1 with `code` on stdout: a coded error, not a signal or an abort."""
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(code, p.stdout)
        self.assertNotIn("terminate called", p.stderr)


class NamesThatAreNotUtf8(Crashless):
    """1. An op name that is not UTF-8 aborted atc in nlohmann::json (type_error.316, exit 134)."""

    def test_every_atc_mode_answers_with_a_code_and_the_report_is_json(self):
        d = fresh("utf8")
        nodes = [helper.make_node("Relu", ["x"], ["t"], name="AAAAname"), helper.make_node("Sigmoid", ["t"], ["y"], name="sig")]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])])
        data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
        model = f"{d}/bad.onnx"
        write_bytes(model, data.replace(b"AAAAname", b"\xff\xfe\xc3(name"))
        for mode in ("0", "3"):
            p = run("atc", "--framework=5", f"--mode={mode}", f"--model={model}", f"--output={d}/m", "--soc_version=Ascend310P3",
                    f"--check_report={d}/check.json", f"--explain-precision={d}/p.json")
            self.assertCoded(p, "E16005")
            self.assertIn("\\xff\\xfe", p.stdout, "the message shows the bad bytes escaped")
            self.assertFalse(os.path.exists(f"{d}/m.om"))
        report = read_json(f"{d}/check.json")  # written, and valid UTF-8 JSON
        self.assertEqual(report["op"][0]["name"], "\ufffd\ufffd\ufffd(name")
        self.assertCoded(run("atc", "--mode=1", "--framework=5", f"--om={model}", f"--json={d}/m.json"), "E16005")
        self.assertCoded(run("msame", f"--model={model}", f"--output={d}/out"), "E16005")


class BlackListedReluAfterConv(Crashless):
    """2. --modify_mixlist black-listed Relu, but UB fusion had put it in the conv's fp16 epilogue first."""

    def test_the_relu_runs_in_fp32_and_mode_1_shows_it(self):
        d = fresh("mixlist")
        rng = np.random.default_rng(0)
        init = [numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")] + \
               [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
                (("s", np.ones(8)), ("b", np.zeros(8)), ("m", np.zeros(8)), ("v", np.ones(8)))]
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
                 helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"], name="bn"),
                 helper.make_node("Relu", ["bn"], ["y"], name="relu")]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], init)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/cbr.onnx")
        write_json(f"{d}/mix.json", {"black-list": {"to-add": ["Relu"]}})
        p = run("atc", "--framework=5", f"--model={d}/cbr.onnx", f"--output={d}/cbr", "--soc_version=Ascend310P3",
                "--precision_mode=allow_mix_precision", f"--modify_mixlist={d}/mix.json")
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertNotIn("occurs nowhere", p.stdout)
        self.assertEqual(run("atc", "--mode=1", f"--om={d}/cbr.om", f"--json={d}/cbr.json").returncode, 0)
        ops = read_json(f"{d}/cbr.json")["graph"][0]["op"]
        relu = [o for o in ops if o["type"] == "Relu"]
        self.assertEqual(len(relu), 1, "the Relu is an op of its own")
        self.assertEqual(relu[0]["output_desc"][0]["dtype"], "DT_FLOAT")
        conv = next(o for o in ops if o["type"] == "Conv2D")
        self.assertEqual(conv["output_desc"][0]["dtype"], "DT_FLOAT16", "the conv stays fp16 (white list)")


class MsaccucmpLogLevel(Crashless):
    """3. ASCEND_GLOBAL_LOG_LEVEL=3 msaccucmp compare still printed [INFO] lines."""

    def test_level_error_silences_info(self):
        d = fresh("loglevel")
        np.save(f"{d}/a.npy", np.arange(16, dtype=np.float32))
        np.save(f"{d}/b.npy", np.arange(16, dtype=np.float32) + 1)
        for sub in (["file_compare", "-m", f"{d}/a.npy", "-g", f"{d}/b.npy", "--out", f"{d}/fc"],
                    ["compare", "-m", f"{d}/a.npy", "-g", f"{d}/b.npy", "--out", f"{d}/c"]):
            quiet = run("msaccucmp", *sub, env={"ASCEND_GLOBAL_LOG_LEVEL": "3"})
            self.assertEqual(quiet.returncode, 0, quiet.stdout)
            self.assertNotIn("[INFO]", quiet.stdout + quiet.stderr)
            self.assertIn("[INFO]", run("msaccucmp", *sub).stdout, "without the variable the lines are there")


class ErrorsReachThePlog(Crashless):
    """4. A failed run left nothing in the plog file although CANN's default level (error) logs errors there."""

    def test_a_failed_atc_leaves_its_error_in_the_plog(self):
        d = fresh("plog")
        p = run("atc", "--framework=5", f"--model={d}/missing.onnx", f"--output={d}/m", "--soc_version=Ascend310P3",
                env={"ASCEND_PROCESS_LOG_PATH": f"{d}/log"})
        self.assertCoded(p, "E13001")
        logs = glob.glob(f"{d}/log/debug/plog/plog-*.log")
        self.assertEqual(len(logs), 1, logs)
        text = read_bytes(logs[0]).decode()
        self.assertIn("[ERROR] ATC", text)
        self.assertIn("E13001", text)

    def test_log_level_null_keeps_the_plog_empty(self):
        d = fresh("plog_null")
        run("atc", "--framework=5", f"--model={d}/missing.onnx", f"--output={d}/m", "--soc_version=Ascend310P3", "--log=null",
            env={"ASCEND_PROCESS_LOG_PATH": f"{d}/log"})
        self.assertEqual(glob.glob(f"{d}/log/debug/plog/*.log"), [])


class SingleOpDescriptions(Crashless):
    """5. A Conv2D with one input_desc crashed in InferConv (atc), a MatMulV2 with one in aoe; a numeric format
    aborted aoe in nlohmann (type_error.302)."""

    def single_op(self, d, name, ops):
        path = f"{d}/{name}.json"
        write_json(path, ops)
        return path

    def test_arity_and_field_types_are_checked_before_inference(self):
        d = fresh("singleop")
        os.makedirs(f"{d}/bank")
        x = {"format": "NCHW", "shape": [1, 3, 8, 8], "type": "float16"}
        conv1 = self.single_op(d, "conv1", [{"op": "Conv2D", "input_desc": [x],
                                             "output_desc": [{"format": "NCHW", "shape": [1, 4, 6, 6], "type": "float16"}]}])
        p = run("atc", f"--singleop={conv1}", f"--output={d}/out", "--soc_version=Ascend310P3")
        self.assertCoded(p, "E10026")
        self.assertIn("has 1 input(s)", p.stdout)
        mm = {"format": "ND", "shape": [16, 32], "type": "float16"}
        out = [{"format": "ND", "shape": [16, 8], "type": "float16"}]
        mm1 = self.single_op(d, "mm1", [{"op": "MatMulV2", "input_desc": [mm], "output_desc": out}])
        numeric = self.single_op(d, "numeric", [{"op": "MatMulV2", "input_desc": [{**mm, "format": 5}, {**mm, "shape": [32, 8]}],
                                                 "output_desc": out}])
        env = {"TUNE_BANK_PATH": f"{d}/bank"}
        for path, needle in ((mm1, "has 1 input(s)"), (numeric, '"format" must be a string, not 5')):
            p = run("aoe", f"--singleop={path}", "--job_type=2", "--soc_version=Ascend310P3", env=env, cwd=d)
            self.assertCoded(p, "E10026")
            self.assertIn(needle, p.stdout)
        for field, value, code in (("name", 7, "E10025"), ("attr", {"a": 1}, "E10027"), ("input_desc", 3, "E10026")):
            path = self.single_op(d, field, [{"op": "MatMulV2", "input_desc": [mm, {**mm, "shape": [32, 8]}], "output_desc": out,
                                              field: value}])
            self.assertCoded(run("atc", f"--singleop={path}", f"--output={d}/out", "--soc_version=Ascend310P3"), code)


class DamagedProfiles(Crashless):
    """6. profparse crashed (SIGSEGV in RecordStream::Next) on PROF folders whose slices were cut or changed."""

    @classmethod
    def setUpClass(cls):
        d = fresh("prof")
        cls.d = d
        p = run("atc", "--framework=5", f"--model={EXAMPLES}/tinynet.onnx", f"--output={d}/tiny", "--soc_version=Ascend310P3",
                "--input_shape=image:1,3,32,32")
        assert p.returncode == 0, p.stdout
        write_json(f"{d}/acl.json", {"profiler": {"switch": "on", "output": f"{d}/raw", "aic_metrics": "PipeUtilization"}})
        p = run("msame", f"--model={d}/tiny.om", f"--input={EXAMPLES}/input.npy", f"--acl_json_path={d}/acl.json", "--loop=2")
        assert p.returncode == 0, p.stdout
        cls.prof = glob.glob(f"{d}/raw/PROF_*")[0]

    def damaged(self, tag, rel, damage):
        root = fresh(f"prof_{tag}")
        target = f"{root}/{os.path.basename(self.prof)}"
        shutil.copytree(self.prof, target)
        path = f"{target}/{rel}"
        write_bytes(path, damage(bytearray(read_bytes(path))))
        return root

    def test_cut_and_changed_slices_are_read_as_far_as_they_are_whole(self):
        slices = {"host/data/unaging.api_event.data.slice_0": None, "device_0/data/ts_track.data.0.slice_0": None,
                  "device_0/data/hwts.data.0.slice_0": None, "device_0/data/aicore.data.0.slice_0": None,
                  "host/data/aging.compact.node_basic_info.slice_0": None, "host/data/aging.compact.task_track.slice_0": None,
                  "host/data/aging.additional.tensor_info.slice_0": None, "host/data/unaging.additional.type_info_dic.slice_0": None}
        for k, rel in enumerate(slices):
            for cut in (11, 3, 1):  # a record's magic and level survive, the rest is gone
                root = self.damaged(f"cut{k}_{cut}", rel, lambda b, n=cut: b[:n])
                p = run("profparse", "--export=on", f"--output={root}")
                self.assertIn(p.returncode, (0, 1), f"{rel} cut to {cut}: {p.returncode}\n{p.stdout}{p.stderr}")
            for pos in range(0, 64, 3):  # every field of the first records, set to extremes
                root = self.damaged(f"chg{k}_{pos}", rel, lambda b, i=pos: b[:i] + b"\xff\xff\xff\xff" + b[i + 4:])
                p = run("profparse", "--export=on", f"--output={root}")
                self.assertIn(p.returncode, (0, 1), f"{rel} changed at {pos}: {p.returncode}\n{p.stdout}{p.stderr}")


class H5ThatClaimsTooMuch(Crashless):
    """7. An .h5 whose dataset header claimed a huge size aborted msaccucmp with std::bad_alloc (exit 134)."""

    def test_the_size_is_checked_against_the_file(self):
        import h5py
        d = fresh("h5")
        x = np.ones((4, 8), np.float32)
        for name in ("npu.h5", "gpu.h5"):
            with h5py.File(f"{d}/{name}", "w") as f:
                f.create_dataset("/Op/0/output/result", data=x).attrs["Type"] = 0
        data = read_bytes(f"{d}/npu.h5")
        dims = struct.pack("<QQ", 4, 8)
        self.assertIn(dims, data)
        for huge in (1 << 40, 123456789, 1 << 33):
            path = f"{d}/huge_{huge}.h5"
            write_bytes(path, data.replace(dims, struct.pack("<QQ", huge, 8), 1))
            p = run("msaccucmp", "compare", "-m", path, "-g", f"{d}/gpu.h5", "--out", f"{d}/out_{huge}")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # the row carries the reason, as for any unreadable tensor
            rows = read_bytes(glob.glob(f"{d}/out_{huge}/result_*.csv")[0]).decode()
            self.assertIn("claims", rows)


class H5ThatLibhdf5Misreads(Crashless):
    """libhdf5 reads out of bounds on some corrupt files, while it walks their groups or reads a dataset
    (fuzz/known_issues/libhdf5, found by the black-box driver; dataset_read_oob_1.h5 killed the release msaccucmp with
    SIGSEGV). msaccucmp lists and reads an .h5 in child processes: such a file compares, with the row that could not
    be read saying why, or is EC0014, never a signal."""

    def test_the_known_files_compare_or_are_a_coded_error(self):
        known = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../fuzz/known_issues/libhdf5")
        d = fresh("h5_known")
        for path in sorted(glob.glob(f"{known}/*_oob*.h5")):
            p = run("msaccucmp", "compare", "-m", path, "-g", f"{known}/golden.h5", "--out", f"{d}/out")
            self.assertIn(p.returncode, (0, 1), f"{path}: {p.returncode}\n{p.stdout}{p.stderr}")
            if p.returncode == 1:
                self.assertCoded(p, "EC0014")


class ShapesThatDoNotFit(Crashless):
    """8. --input_shape="image:1,3,32,99999999999999999999" died of SIGFPE (exit 136) on the bundled tinynet."""

    def test_every_shape_bearing_flag_refuses_with_e10002_or_its_own_code(self):
        d = fresh("shapes")
        base = ["--framework=5", f"--model={EXAMPLES}/tinynet.onnx", f"--output={d}/m", "--soc_version=Ascend310P3"]
        for flags, code in ((["--input_shape=image:1,3,32,99999999999999999999"], "E10002"),
                            (["--input_shape=image:1,3,32,9999999999999"], "E10002"),
                            (["--input_shape=image:1,3,4194304,4194304"], "E10002"),
                            (["--input_shape=image:1~99999999999999999999,3,32,32"], "E10048"),
                            (["--input_shape=image:-1,3,32,32", "--dynamic_batch_size=1,99999999999999"], "E10002"),
                            (["--input_shape=image:-1,3,32,32", "--dynamic_batch_size=1,9999999999"], "E10002"),
                            (["--input_shape=image:1,3,-1,-1", "--dynamic_image_size=32,32;4194304,4194304"], "E10002")):
            p = run("atc", *base, *flags)
            self.assertCoded(p, code)
            self.assertFalse(os.path.exists(f"{d}/m.om"))
        ops = [{"op": "Add", "input_desc": [{"format": "ND", "shape": [1 << 21, 1 << 21], "type": "float16"}] * 2,
                "output_desc": [{"format": "ND", "shape": [1 << 21, 1 << 21], "type": "float16"}]}]
        write_json(f"{d}/huge.json", ops)
        self.assertCoded(run("atc", f"--singleop={d}/huge.json", f"--output={d}/so", "--soc_version=Ascend310P3"), "E10026")
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 30, 1 << 30])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/huge.onnx")
        self.assertCoded(run("atc", "--framework=5", f"--model={d}/huge.onnx", f"--output={d}/h", "--soc_version=Ascend310P3"), "E16005")


class ConvBiasOfTheWrongLength(Crashless):
    """10. A Conv whose bias holds fewer values than output channels: every kernel read past its end (garbage, or a
    crash in a sanitizer build) while atc and msame said success. Inference now refuses it, naming the node."""

    def test_atc_and_msames_reference_path_refuse_it(self):
        d = fresh("bad_bias")
        f = numpy_helper.from_array
        graph = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], name="short_bias")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [f(np.ones((8, 4, 3, 3), np.float32), "w"), f(np.ones(3, np.float32), "b")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, f"{d}/bad.onnx")
        for p in (run("atc", "--framework=5", f"--model={d}/bad.onnx", f"--output={d}/bad", "--soc_version=Ascend310P3"),
                  run("msame", "--model", f"{d}/bad.onnx")):
            self.assertCoded(p, "E10001")
            self.assertIn("short_bias", p.stdout)
            self.assertIn("one value per output channel (8)", p.stdout)
        self.assertFalse(os.path.exists(f"{d}/bad.om"))


class SliceOfAnAxisOfUnknownLength(Crashless):
    """11. (found running swin_t on msame's reference path) shape inference sliced an axis of unknown length as if it
    were empty, so a Shape of the slice folded to zeros and a later Expand failed (with a message naming no node: a
    kernel's error now names its node). The slice now has an unknown length."""

    def test_the_slice_keeps_its_length_and_the_shape_is_computed_when_known(self):
        d = fresh("slice_unknown")
        f = numpy_helper.from_array
        nodes = [helper.make_node("Slice", ["x", "starts", "ends"], ["s"]),
                 helper.make_node("Shape", ["s"], ["shape"]),
                 helper.make_node("Expand", ["one", "shape"], ["y"])]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [f(np.array([1], np.int64), "starts"), f(np.array([4], np.int64), "ends"), f(np.ones(1, np.float32), "one")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, f"{d}/m.onnx")
        np.save(f"{d}/x.npy", np.arange(6, dtype=np.float32))
        p = run("msame", f"--model={d}/m.onnx", f"--input={d}/x.npy", f"--output={d}/out", "--outfmt=NPY")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(np.load(glob.glob(f"{d}/out/*.npy")[0]).shape, (3,))
        np.save(f"{d}/x.npy", np.zeros((2, 2), np.float32))  # the wrong rank: the error names the node
        p = run("msame", f"--model={d}/m.onnx", f"--input={d}/x.npy", f"--output={d}/out2")
        self.assertNotEqual(p.returncode, 0)
        self.assertNotIn("terminate called", p.stderr)


class NodesMissingAnInput(Crashless):
    """9. (found by fuzz/blackbox.py om_run, ASan build) an .om whose Gemm lost its first input: msame's cost model
    read the graph's values at index -1 (UBSan: a pointer overflow) before anything checked the op's inputs."""

    def test_msame_names_the_op(self):
        import importlib
        import struct
        d = fresh("missing_input")
        proto_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../libcore/frontend/ge")
        subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={d}", os.path.join(proto_dir, "ge_ir.proto")], check=True)
        sys.path.insert(0, d)
        ge = importlib.import_module("ge_ir_pb2")
        p = run("atc", "--framework=5", f"--model={EXAMPLES}/tinynet.onnx", f"--output={d}/tiny", "--soc_version=Ascend310P3")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        data = bytearray(open(f"{d}/tiny.om", "rb").read())
        count = struct.unpack_from("<I", data, 256)[0]
        base = 256 + 8 + 24 * count
        table = [struct.unpack_from("<IxxxxQQ", data, 256 + 8 + 24 * k) for k in range(count)]
        kind, off, size = table[0]
        md = ge.ModelDef()
        md.ParseFromString(bytes(data[base + off:base + off + size]))
        gemm = next(op for op in md.graph[0].op if op.type in (b"MatMulV2", b"FullyConnection") or op.name.endswith(b"Gemm"))
        gemm.input[0] = b""
        new = md.SerializeToString()
        # Same length keeps the other partitions where they are: pad the ModelDef with an unknown field.
        self.assertLessEqual(len(new), size)
        pad = size - len(new)
        if pad:  # field 1023, length-delimited: tag 0xfa 0x3f, a varint length, that many zeros
            self.assertGreaterEqual(pad, 3, "no room for the filler field")
            body = pad - 3 if pad - 3 < 128 else pad - 4
            length = bytes([body]) if body < 128 else bytes([body & 0x7F | 0x80, body >> 7])
            new += b"\xfa\x3f" + length + b"\0" * body
        data[base + off:base + off + size] = new
        data[81] = 1  # checksum unchecked, as a tool that edits a model would leave it
        open(f"{d}/broken.om", "wb").write(data)
        p = run("msame", f"--model={d}/broken.om", f"--input={EXAMPLES}/input.npy", f"--output={d}/out")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("E10003", p.stdout + p.stderr)
        self.assertIn("input 0 is missing", p.stdout + p.stderr)


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=1)
