#!/usr/bin/python3
"""AscendCL on the simulated NPU: a program written for an Ascend device (tests/acl/sample, with its own
CMakeLists as Ascend's samples have one) builds against npukit's toolkit layout (DDK_PATH, NPU_HOST_LIB) and runs
unchanged: the outputs msame gives, byte for byte, for npukit's .om and a CANN-built one, loaded from a file or
from memory; the device time between two events is the simulated time msame reports; acl.json's profiler
section writes a PROF folder profparse exports; only the C interface is exported; errors reach the program.

usage: test_acl.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

import numpy as np

SOURCE, BUILD, WORK = sys.argv[1:4]
sys.path.insert(0, os.path.join(SOURCE, "tests"))
import testlib as T  # noqa: E402

ATC, MSAME, PROFPARSE = (f"{BUILD}/tools/{t}/{t}" for t in ("atc", "msame", "profparse"))
TOOLKIT = f"{BUILD}/ascend-toolkit"
# What a CANN user exports before building a sample (the samples' READMEs), pointing at npukit's toolkit.
ENV = {**os.environ, "DDK_PATH": TOOLKIT, "NPU_HOST_LIB": f"{TOOLKIT}/runtime/lib64/stub",
       "LD_LIBRARY_PATH": f"{TOOLKIT}/runtime/lib64", "PYTHONPATH": f"{TOOLKIT}/python/site-packages",
       "ASCEND_PROCESS_LOG_PATH": os.path.join(WORK, "log"), **T.sanitizer_env(BUILD)}
SAMPLE = os.path.join(WORK, "sample_build", "main")
A3C = os.path.join(T.DATA, "om", "a3c_pong_model.om")  # built by CANN's ATC (tests/data/om/README.md)

# A 40x36 RGB image cropped to tinynet's 32x32 and normalised: the static AIPP tests' config, and what the dynamic
# AIPP test gives through the setters.
AIPP_RGB_CROP = ("aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n  src_image_size_w: 40\n  src_image_size_h: 36\n"
                 "  crop: true\n  load_start_pos_w: 4\n  load_start_pos_h: 2\n  crop_size_w: 32\n  crop_size_h: 32\n"
                 "  mean_chn_0: 123\n  mean_chn_1: 117\n  mean_chn_2: 104\n"
                 "  var_reci_chn_0: 0.0171\n  var_reci_chn_1: 0.0175\n  var_reci_chn_2: 0.0174\n}\n")


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def run(cmd, ok=True):
    p = subprocess.run([str(c) for c in cmd], cwd=WORK, env=ENV, capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def msame_output(model, x_npy, name, *flags):
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    p = run([MSAME, f"--model={model}", f"--input={x_npy}", f"--output={out}", *flags])
    (path,) = glob.glob(f"{out}/**/*output_0.bin", recursive=True)
    return read(path, "rb"), p.stdout


# pyACL lines that give model `mid` (tiny.om) its description `desc` and datasets `ins` (x.bin in device memory at
# p) and `outs` (device memory at q).
TINY_DATASETS = """desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, mid)
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
n = acl.mdl.get_input_size_by_index(desc, 0); p, r = acl.rt.malloc(n, 0); acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, n))
x = np.fromfile("x.bin", np.uint8); acl.rt.memcpy(p, n, acl.util.numpy_to_ptr(x), n, 1)
n = acl.mdl.get_output_size_by_index(desc, 0); q, r = acl.rt.malloc(n, 0); acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(q, n))
"""


def pyacl_loading(om):
    """The start of a pyACL program: ok() to assert a call, AscendCL up with device 0, `om` loaded as mid and
    described in desc."""
    return f"""
import acl, numpy as np
def ok(r, what):
    assert r == 0, (what, r, acl.get_recent_err_msg())
ok(acl.init(), "init"); ok(acl.rt.set_device(0), "set_device")
mid, r = acl.mdl.load_from_file("{om}"); ok(r, "load")
desc = acl.mdl.create_desc(); ok(acl.mdl.get_desc(desc, mid), "get_desc")
"""


class Sample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        run(["cmake", "-S", os.path.join(SOURCE, "tests", "acl", "sample"), "-B", os.path.join(WORK, "sample_build"), "-DCMAKE_BUILD_TYPE=Release"])
        run(["cmake", "--build", os.path.join(WORK, "sample_build")])
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny", "--soc_version=Ascend310P3"])
        x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
        x.tofile(os.path.join(WORK, "x.bin"))
        np.save(os.path.join(WORK, "x.npy"), x)
        cls.msame_bytes, cls.msame_log = msame_output("tiny.om", "x.npy", "out_msame")

    def sample(self, *args, ok=True):
        return run([SAMPLE, *args], ok=ok)

    def test_outputs_are_msames_byte_for_byte(self):
        p = self.sample("tiny.om", "x.bin", "acl_file")
        self.assertEqual(read(os.path.join(WORK, "acl_file_0.bin"), "rb"), self.msame_bytes)
        self.assertRegex(p.stdout, r"output 0 \S+ dtype \d+ format \d+ dims 1 10\n")

    def test_loading_from_memory_gives_the_same(self):
        self.sample("tiny.om", "x.bin", "acl_mem", "--from-mem")
        self.assertEqual(read(os.path.join(WORK, "acl_mem_0.bin"), "rb"), self.msame_bytes)

    def test_a_cann_built_om_runs_as_msame_runs_it(self):
        x = np.random.default_rng(11).random((1, 42, 42, 1)).astype(np.float32)
        x.tofile(os.path.join(WORK, "a3c.bin"))
        np.save(os.path.join(WORK, "a3c.npy"), x)
        want, _ = msame_output(A3C, "a3c.npy", "out_a3c")
        self.sample(A3C, "a3c.bin", "acl_a3c")
        got = read(os.path.join(WORK, "acl_a3c_0.bin"), "rb")
        self.assertEqual(got, want)
        self.assertIn(int(np.frombuffer(got, np.int32)[0]), range(6))  # an Atari action

    def test_a_static_aipp_model_takes_the_image_as_the_device_does(self):
        with open(os.path.join(WORK, "aipp.cfg"), "w") as f:
            f.write(AIPP_RGB_CROP)
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny_aipp", "--soc_version=Ascend310P3",
             "--insert_op_conf=aipp.cfg"])
        img = np.random.default_rng(3).integers(0, 256, (1, 36, 40, 3), dtype=np.uint8)
        img.tofile(os.path.join(WORK, "img.bin"))
        want, _ = msame_output("tiny_aipp.om", "img.bin", "out_aipp")
        p = self.sample("tiny_aipp.om", "img.bin", "acl_aipp")  # the sample checks the input's size: uint8 HWC
        self.assertEqual(read(os.path.join(WORK, "acl_aipp_0.bin"), "rb"), want)
        self.assertIn("dims 1 10", p.stdout)

    def test_a_dynamic_aipp_model_takes_its_parameters_from_the_setters(self):
        """aipp_mode: dynamic: the static test's parameters given at run time through pyACL's setters give the static
        model's output byte for byte (two images, each its own crop); bad parameters are refused with their reason."""
        with open(os.path.join(WORK, "aipp_dyn.cfg"), "w") as f:
            f.write("aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 6000\n}\n")
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny_dyn", "--soc_version=Ascend310P3",
             "--insert_op_conf=aipp_dyn.cfg", "--input_shape=image:2,3,32,32"])
        with open(os.path.join(WORK, "aipp2.cfg"), "w") as f:
            f.write(AIPP_RGB_CROP)
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny_aipp2", "--soc_version=Ascend310P3",
             "--insert_op_conf=aipp2.cfg", "--input_shape=image:2,3,32,32"])
        imgs = np.random.default_rng(4).integers(0, 256, (2, 36, 40, 3), dtype=np.uint8)
        imgs.tofile(os.path.join(WORK, "imgs.bin"))
        want, _ = msame_output("tiny_aipp2.om", "imgs.bin", "out_aipp2")
        code = """
import acl, numpy as np
acl.init(); acl.rt.set_device(0)
mid, r = acl.mdl.load_from_file("tiny_dyn.om")
desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, mid)
aipp_index, r = acl.mdl.get_input_index_by_name(desc, "ascend_dynamic_aipp_data")
print(aipp_index, acl.mdl.get_aipp_type(mid, 0), acl.mdl.get_aipp_type(mid, aipp_index))
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
slots = np.zeros((2, 6000), np.uint8); slots[:, :36 * 40 * 3] = np.fromfile("imgs.bin", np.uint8).reshape(2, -1)
bufs = []
for i in range(acl.mdl.get_num_inputs(desc)):
    n = acl.mdl.get_input_size_by_index(desc, i); p, r = acl.rt.malloc(n, 0); bufs.append(p)
    acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, n))
acl.rt.memcpy(bufs[0], slots.nbytes, acl.util.numpy_to_ptr(slots), slots.nbytes, 1)
n = acl.mdl.get_output_size_by_index(desc, 0); q, r = acl.rt.malloc(n, 0); acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(q, n))
print(acl.mdl.execute(mid, ins, outs))                               # no parameters set yet
a = acl.mdl.create_aipp(2)
print(acl.mdl.set_input_aipp(mid, ins, aipp_index, a))              # no input format yet
print(acl.mdl.set_aipp_input_format(a, 3), acl.mdl.set_aipp_src_image_size(a, 40, 36), acl.mdl.set_aipp_csc_params(a, 0, *[0] * 15))
print(acl.mdl.set_aipp_scf_params(a, 1, 40, 36, 32, 32, 0), acl.mdl.set_aipp_padding_params(a, 1, 40, 0, 0, 0, 0))  # resize; padding > 32
for b in range(2):
    acl.mdl.set_aipp_crop_params(a, 1, 4, 2, 32, 32, b)
    acl.mdl.set_aipp_dtc_pixel_mean(a, 123, 117, 104, 0, b)
    acl.mdl.set_aipp_pixel_var_reci(a, 0.0171, 0.0175, 0.0174, 1.0, b)
print(acl.mdl.set_aipp_crop_params(a, 1, 4, 2, 32, 32, 2))          # batch index past the set
print(acl.mdl.set_input_aipp(mid, ins, 0, a), acl.mdl.set_aipp_by_input_index(mid, ins, 0, a))
print(acl.mdl.execute(mid, ins, outs))
y = np.zeros(n // 4, np.float32); acl.rt.memcpy(acl.util.numpy_to_ptr(y), n, q, n, 2)
y.tofile("dyn_out.bin")
acl.mdl.set_aipp_crop_params(a, 1, 10, 2, 32, 32, 1)                # image 1's crop leaves the 40-wide image
print(acl.mdl.set_input_aipp(mid, ins, aipp_index, a), acl.mdl.execute(mid, ins, outs))
print(acl.get_recent_err_msg())
print(acl.mdl.destroy_aipp(a), acl.mdl.destroy_aipp(a))
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines[0], "1 (2, 1, 0) (3, 4294967295, 0)", "image input: dynamic AIPP attached at 1; input 1: the parameters")
        self.assertNotEqual(lines[1], "0", "executing before the parameters are set fails")
        self.assertEqual(lines[2:6], ["100000", "0 0 0", "100000 100000", "100000"])
        self.assertEqual(lines[6], "100000 0", "index 0 is the image, not the parameters' input; by input index it is")
        self.assertEqual(lines[7], "0")
        self.assertEqual(read(os.path.join(WORK, "dyn_out.bin"), "rb"), want)
        self.assertEqual(lines[8].split()[0], "0")
        self.assertNotEqual(lines[8].split()[1], "0")
        self.assertIn("image 1's crop leaves the 40x36 source image", "\n".join(lines[9:-1]))
        self.assertEqual(lines[-1], "0 100000")
        code = """
import acl, json
acl.init(); acl.rt.set_device(0)
ids = {m: acl.mdl.load_from_file(m + ".om")[0] for m in ("tiny_aipp2", "tiny_dyn", "tiny")}
info, ret = acl.mdl.get_first_aipp_info(ids["tiny_aipp2"], 0)
print(ret, json.dumps(info))
print(acl.mdl.get_first_aipp_info(ids["tiny_dyn"], 0)[1], acl.mdl.get_first_aipp_info(ids["tiny"], 0)[1], acl.mdl.get_first_aipp_info(99, 0)[1])
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        ret, info = lines[0].split(" ", 1)
        info = json.loads(info)
        self.assertEqual(ret, "0")
        self.assertEqual((info["inputFormat"], info["srcImageSizeW"], info["srcImageSizeH"]), (3, 40, 36), "RGB888_U8, as aipp2.cfg says")
        self.assertEqual((info["cropSwitch"], info["loadStartPosW"], info["loadStartPosH"], info["cropSizeW"], info["cropSizeH"]), (1, 4, 2, 32, 32))
        self.assertEqual(info["meanChn"][:3], [123, 117, 104])
        self.assertAlmostEqual(info["varReciChn"][0], 0.0171, places=6)
        self.assertEqual((info["src_dims"], info["aipp_out_dims"]), ([2, 36, 40, 3], [2, 3, 32, 32]))
        self.assertEqual(info["srcSize"], 2 * 36 * 40 * 3)
        self.assertEqual(lines[1], "145015 145015 145003", "dynamic AIPP and no AIPP: ACL_ERROR_GE_AIPP_NOT_EXIST; no such model")

    def test_device_time_between_events_is_the_simulated_time(self):
        p = self.sample("tiny.om", "x.bin", "acl_time")
        acl_ms = float(re.search(r"device time ([0-9.]+) ms", p.stdout).group(1))
        sim_ms = float(re.search(r"Simulated NPU time: ([0-9.]+) ms", self.msame_log).group(1))
        self.assertGreater(acl_ms, 0)
        self.assertAlmostEqual(acl_ms, sim_ms, delta=1e-3)

    def test_profiling_from_the_acl_json_of_aclinit(self):
        prof = os.path.join(WORK, "prof")
        shutil.rmtree(prof, ignore_errors=True)
        with open(os.path.join(WORK, "acl.json"), "w") as f:
            json.dump({"profiler": {"switch": "on", "output": prof, "aic_metrics": "PipeUtilization"}}, f)
        self.sample("tiny.om", "x.bin", "acl_prof", "acl.json")
        (folder,) = glob.glob(f"{prof}/PROF_*")
        run([PROFPARSE, "--export=on", f"--output={folder}", "--stamp=20260101000000"])
        summary = read(glob.glob(f"{folder}/mindstudio_profiler_output/op_summary_*.csv")[0]).splitlines()
        self.assertGreater(len(summary), 1)
        api = read(glob.glob(f"{folder}/mindstudio_profiler_output/api_statistic_*.csv")[0])
        self.assertIn("acl,aclmdlExecute", api)
        self.assertIn("acl,aclrtMemcpy", api)  # every AscendCL call the program made
        # One HostToDevice arrow, from the call that launched the model to its first task (not from aclrtMemcpy).
        events = json.loads(read(glob.glob(f"{folder}/mindstudio_profiler_output/msprof_*.json")[0]))
        starts = [e for e in events if e.get("cat") == "HostToDevice" and e["ph"] == "s"]
        self.assertEqual(len(starts), 1)
        launch = [e for e in events if e["ph"] == "X" and e["name"].startswith("AscendCL@") and e["ts"] == starts[0]["ts"]]
        self.assertEqual([e["name"] for e in launch], ["AscendCL@aclmdlExecute"])

    def test_dumps_from_the_acl_json_of_aclinit_are_msames(self):
        dumps = {}
        for who in ("acl", "msame"):
            path = os.path.join(WORK, f"dump_{who}")
            shutil.rmtree(path, ignore_errors=True)
            with open(os.path.join(WORK, f"dump_{who}.json"), "w") as f:
                json.dump({"dump": {"dump_path": path, "dump_list": [], "dump_mode": "all"}}, f)
            if who == "acl":
                self.sample("tiny.om", "x.bin", "acl_dump", f"dump_{who}.json")
            else:
                run([MSAME, "--model=tiny.om", "--input=x.npy", f"--acl_json_path=dump_{who}.json", "--output=out_dump"])
            (step,) = glob.glob(f"{path}/*/0/tiny/1/0")  # {dump_path}/{time}/{device}/{model}/{model id}/{step}
            npy = os.path.join(WORK, f"npy_{who}")
            shutil.rmtree(npy, ignore_errors=True)
            run([f"{BUILD}/tools/msaccucmp/msaccucmp", "convert", "-d", step, "-out", npy, "-t", "npy"])
            # Each tensor as msaccucmp converts it, named without the dump's timestamp.
            dumps[who] = {re.sub(r"\.\d{10,}\.", ".", os.path.basename(p)): np.load(p) for p in glob.glob(f"{npy}/*.npy")}
        self.assertGreater(len(dumps["acl"]), 10)
        self.assertEqual(sorted(dumps["acl"]), sorted(dumps["msame"]))
        for name, a in dumps["acl"].items():
            self.assertEqual(a.tobytes(), dumps["msame"][name].tobytes(), name)

    def test_the_dump_api_dumps_what_the_acl_json_dumps(self):
        """aclmdlInitDump / SetDump / FinalizeDump: a model loaded after SetDump dumps the tensors aclInit's dump
        section gives (msame's), byte for byte; after FinalizeDump it dumps nothing; misuse returns CANN's codes."""
        path = os.path.join(WORK, "dump_api")
        shutil.rmtree(path, ignore_errors=True)
        with open(os.path.join(WORK, "dump_api.json"), "w") as f:
            json.dump({"dump": {"dump_path": path, "dump_list": [], "dump_mode": "all"}}, f)
        code = """
import acl, glob, numpy as np
acl.init(); acl.rt.set_device(0)
print(acl.mdl.set_dump("dump_api.json"), acl.mdl.finalize_dump())   # before aclmdlInitDump: ACL_ERROR_DUMP_NOT_RUN
print(acl.mdl.init_dump(), acl.mdl.init_dump(), acl.mdl.set_dump("no_such.json"), acl.mdl.set_dump("dump_api.json"))
mid, r = acl.mdl.load_from_file("tiny.om")
""" + TINY_DATASETS + """acl.mdl.execute(mid, ins, outs)
files = len(glob.glob("dump_api/**/*.*", recursive=True))
print(acl.mdl.finalize_dump())
acl.mdl.execute(mid, ins, outs)
print(files > 10, len(glob.glob("dump_api/**/*.*", recursive=True)) == files)
"""
        self.assertEqual(run([T.PY, "-c", code]).stdout.splitlines(), ["100045 100045", "0 100002 100009 0", "0", "True True"])
        shutil.rmtree(os.path.join(WORK, "dump_init"), ignore_errors=True)
        with open(os.path.join(WORK, "dump_init.json"), "w") as f:
            json.dump({"dump": {"dump_path": os.path.join(WORK, "dump_init"), "dump_list": [], "dump_mode": "all"}}, f)
        code = 'import acl\nacl.init("dump_init.json")\nprint(acl.mdl.init_dump(), acl.mdl.set_dump("dump_api.json"))\n'
        self.assertEqual(run([T.PY, "-c", code]).stdout.split(), ["0", "100044"], "aclInit set the dump already")
        run([MSAME, "--model=tiny.om", "--input=x.npy", "--acl_json_path=dump_init.json", "--output=out_dump_init"])
        dumps = []
        for folder in (path, os.path.join(WORK, "dump_init")):
            (step,) = glob.glob(f"{folder}/*/0/tiny/1/0")
            npy = folder + "_npy"
            shutil.rmtree(npy, ignore_errors=True)
            run([f"{BUILD}/tools/msaccucmp/msaccucmp", "convert", "-d", step, "-out", npy, "-t", "npy"])
            dumps.append({re.sub(r"\.\d{10,}\.", ".", os.path.basename(p)): np.load(p) for p in glob.glob(f"{npy}/*.npy")})
        got, want = dumps
        self.assertEqual(sorted(got), sorted(want))
        for name, a in got.items():
            self.assertEqual(a.tobytes(), want[name].tobytes(), name)

    def test_the_profiling_api_profiles_models_loaded_before_its_start(self):
        prof = os.path.join(WORK, "prof_api")
        shutil.rmtree(prof, ignore_errors=True)
        os.makedirs(prof)
        code = f"""
import acl, numpy as np
acl.init(); acl.rt.set_device(0)
mid, r = acl.mdl.load_from_file("tiny.om")          # loaded before the collection starts
print(acl.prof.init("{prof}"))
cfg = acl.prof.create_config([0], 1, 0, 0x1 | 0x2 | 0x4 | 0x8)
print(acl.prof.stop(cfg))                             # not started: ACL_ERROR_PROF_NOT_RUN
print(acl.prof.start(cfg), acl.prof.start(cfg))       # twice: ACL_ERROR_PROF_ALREADY_RUN
desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, mid)
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
for i in range(acl.mdl.get_num_inputs(desc)):
    n = acl.mdl.get_input_size_by_index(desc, i); p, r = acl.rt.malloc(n, 0); acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, n))
n = acl.mdl.get_output_size_by_index(desc, 0); q, r = acl.rt.malloc(n, 0); acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(q, n))
for _ in range(3):
    acl.mdl.execute(mid, ins, outs)
print(acl.prof.stop(cfg), acl.prof.destroy_config(cfg), acl.prof.finalize())
"""
        self.assertEqual(run([T.PY, "-c", code]).stdout.splitlines(), ["0", "100043", "0 100042", "0 0 0"])
        (folder,) = glob.glob(f"{prof}/PROF_*")
        run([PROFPARSE, "--export=on", f"--output={folder}", "--stamp=20260101000000"])
        out = f"{folder}/mindstudio_profiler_output"
        steps = read(glob.glob(f"{out}/step_trace_*.csv")[0]).splitlines()
        self.assertEqual(len(steps) - 1, 3, "three executions")
        api = read(glob.glob(f"{out}/api_statistic_*.csv")[0])
        for call in ("acl,aclmdlExecute,", "acl,aclrtMalloc,", "acl,aclmdlGetDesc,"):
            self.assertIn(call, api)
        self.assertNotIn("aclmdlLoadFromFile", api, "it ran before the collection started")

    def test_a_subscribed_model_writes_its_ops_to_the_pipe(self):
        """aclprofModelSubscribe: one record per task of each execution through the user's pipe, decoded with the
        aclprofGetOp* readers: the .om's ops, back to back on the simulated clock, ending at msame's simulated time."""
        code = """
import acl, json, os, time, numpy as np
acl.init(); acl.rt.set_device(0)
mid, r = acl.mdl.load_from_file("tiny.om")
rfd, wfd = os.pipe()
os.set_blocking(rfd, False)
def drain(want=None, quiet=1.0):  # what the pipe gives until it stays quiet (or `want` bytes came)
    got, last = b"", time.time()
    while time.time() - last < quiet and (want is None or len(got) < want):
        try:
            got += os.read(rfd, 1 << 16)
            last = time.time()
        except BlockingIOError:
            time.sleep(0.01)
    return got
cfg = acl.prof.create_subscribe_config(1, 1, wfd)
print(acl.prof.model_subscribe(99, cfg), acl.prof.model_unsubscribe(mid))   # no such model; not subscribed
print(acl.prof.model_subscribe(mid, cfg), acl.prof.model_subscribe(mid, cfg))  # twice: ACL_ERROR_PROF_REPEAT_SUBSCRIBE
""" + TINY_DATASETS + """acl.mdl.execute(mid, ins, outs)
size, r = acl.prof.get_op_desc_size()
data = np.frombuffer(drain(), np.uint8).copy()
ptr, length = acl.util.numpy_to_ptr(data), data.size
count, r = acl.prof.get_op_num(ptr, length)
ops = [dict(name=acl.prof.get_op_name_v2(ptr, length, i)[0], type=acl.prof.get_op_type_v2(ptr, length, i)[0],
            start=acl.prof.get_op_start(ptr, length, i), end=acl.prof.get_op_end(ptr, length, i),
            us=acl.prof.get_op_duration(ptr, length, i), model=acl.prof.get_model_id(ptr, length, i)) for i in range(count)]
print(json.dumps(dict(size=size, length=length, ops=ops)))
print(acl.prof.get_op_num(ptr, 5)[1], acl.prof.get_op_start(ptr, length, count))  # not whole records; past the end
rets = [acl.mdl.execute(mid, ins, outs) for _ in range(30)]  # their records outgrow the pipe: no execution waits
print(rets == [0] * 30, len(drain(30 * length, quiet=10)) == 30 * length)
print(acl.prof.model_unsubscribe(mid), acl.prof.destroy_subscribe_config(cfg))
acl.mdl.execute(mid, ins, outs)
print("nothing after unsubscribe" if not drain() else "written after unsubscribe")
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines[0:2], ["100011 100043", "0 148046"])
        got = json.loads(lines[2])
        self.assertEqual(got["length"] % got["size"], 0)
        ops = got["ops"]
        self.assertEqual(len(ops), got["length"] // got["size"])
        run([ATC, "--mode=1", "--om=tiny.om", "--json=tiny_sub.json"])
        tasks = [op["name"] for op in T.model_ops(os.path.join(WORK, "tiny_sub.json"))]
        self.assertEqual(sorted(o["name"] for o in ops), sorted(tasks))
        for o in ops:
            self.assertGreaterEqual(o["end"], o["start"], o)
            self.assertEqual(o["us"], (o["end"] - o["start"]) // 1000)
            self.assertEqual(o["model"], 1)
            self.assertTrue(o["type"], o)
        sim_ms = float(re.search(r"Simulated NPU time: ([0-9.]+) ms", self.msame_log).group(1))
        self.assertAlmostEqual(max(o["end"] for o in ops) / 1e6, sim_ms, delta=1e-3)
        self.assertEqual(lines[3:], ["100000 0", "True True", "0 0", "nothing after unsubscribe"])

    def test_errors_reach_the_program_with_their_message(self):
        p = self.sample("missing.om", "x.bin", "acl_err", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("aclmdlLoadFromFile(argv[1], &model_id) failed: 145002", p.stderr)
        self.assertIn("missing.om: no such file", p.stderr)
        with open(os.path.join(WORK, "short.bin"), "wb") as f:
            f.write(b"\0" * 8)
        p = self.sample("tiny.om", "short.bin", "acl_err", ok=False)
        self.assertIn("input file has 8 bytes", p.stderr)

    def test_a_pyacl_program_gives_the_same(self):
        p = run([T.PY, os.path.join(SOURCE, "tests", "acl", "sample_py", "classify.py"), "tiny.om", "x.npy", "py_out.npy"])
        y = np.load(os.path.join(WORK, "py_out.npy"))
        self.assertEqual(y.tobytes(), self.msame_bytes)
        self.assertEqual(y.shape, (1, 10))
        self.assertIn(f"top class {int(y.argmax())}", p.stdout)

    def test_pyacl_conventions(self):
        code = """
import acl, numpy as np
print(acl.rt.set_device(0))                       # before acl.init: ret only
print(acl.init(), acl.rt.set_device(0))
ctx, ret = acl.rt.create_context(0); print(type(ctx).__name__, ret)
p, ret = acl.rt.malloc(16, 0); print(ret)
a = np.arange(4, dtype=np.float32)
print(acl.rt.memcpy(p, 16, acl.util.numpy_to_ptr(a), 16, 1))
h, ret = acl.rt.malloc_host(16)
print(acl.rt.memcpy(h, 16, p, 16, 2), acl.util.ptr_to_numpy(h, (4,), np.dtype(np.float32).num).tolist())
print(acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(b"npu"), 3))
print(acl.rt.free(p), acl.rt.free(p), "double free" in acl.get_recent_err_msg())
print("bytes_to_ptr" in dir(acl.util))
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines, ["100001", "0 0", "int 0", "0", "0", "0 [0.0, 1.0, 2.0, 3.0]", "b'npu'", "0 107000 True", "True"])

    def test_two_streams_ordered_by_an_event(self):
        code = """
import acl, numpy as np
acl.init(); acl.rt.set_device(0); ctx, r = acl.rt.create_context(0)
mid, r = acl.mdl.load_from_file("tiny.om")
desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, mid)
x = np.load("x.npy")
def dataset(size, data=None):
    ds = acl.mdl.create_dataset(); p, r = acl.rt.malloc(size, 0)
    if data is not None: acl.rt.memcpy(p, size, acl.util.numpy_to_ptr(data), size, 1)
    acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(p, size)); return ds, p
n_in, n_out = acl.mdl.get_input_size_by_index(desc, 0), acl.mdl.get_output_size_by_index(desc, 0)
(in1, _), (in2, _) = dataset(n_in, x), dataset(n_in, x)
(out1, o1), (out2, o2) = dataset(n_out), dataset(n_out)
s1, r = acl.rt.create_stream(); s2, r = acl.rt.create_stream()
start, r = acl.rt.create_event(); done1, r = acl.rt.create_event(); done2, r = acl.rt.create_event()
acl.rt.record_event(start, s1)
print(acl.mdl.execute_async(mid, in1, out1, s1), acl.rt.record_event(done1, s1))
print(acl.rt.stream_wait_event(s2, done1))               # s2's work starts after s1's
print(acl.mdl.execute_async(mid, in2, out2, s2), acl.rt.record_event(done2, s2))
print(acl.rt.synchronize_stream(s1), acl.rt.synchronize_stream(s2))
one, r = acl.rt.event_elapsed_time(start, done1); two, r = acl.rt.event_elapsed_time(start, done2)
print(round(two / one, 6))                                # two executions, one after the other
a = acl.util.ptr_to_bytes(o1, n_out); b = acl.util.ptr_to_bytes(o2, n_out)
print(a == b, len(a))
print(acl.rt.stream_wait_event(s2, 12345))                 # not an event
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines[:5], ["0 0", "0", "0 0", "0 0", "2.0"])
        self.assertEqual(lines[5], f"True {len(self.msame_bytes)}")
        self.assertEqual(lines[6], "107000")

    def test_a_dynamic_batch_model_runs_the_batch_the_program_sets(self):
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny_dyn", "--soc_version=Ascend310P3",
             "--input_shape=image:-1,3,32,32", "--dynamic_batch_size=1,2,4"])
        x = np.random.default_rng(7).standard_normal((2, 3, 32, 32)).astype(np.float32)
        np.save(os.path.join(WORK, "x2.npy"), x)
        want, _ = msame_output("tiny_dyn.om", "x2.npy", "out_dyn", "--dymBatch=2")
        code = pyacl_loading("tiny_dyn.om") + """
sel, r = acl.mdl.get_input_index_by_name(desc, acl.ACL_DYNAMIC_TENSOR_NAME); ok(r, "index")
print("soc", acl.rt.get_soc_name())
print("dims", acl.mdl.get_input_dims(desc, 0)[0]["dims"], "size", acl.mdl.get_input_size_by_index(desc, 0),
      "batches", acl.mdl.get_dynamic_batch(desc)[0]["batch"])
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
for i in range(acl.mdl.get_num_inputs(desc)):
    size = acl.mdl.get_input_size_by_index(desc, i); p, r = acl.rt.malloc(size, 0); ok(r, "malloc")
    acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, size))
x = np.load("x2.npy")
dev0 = acl.get_data_buffer_addr(acl.mdl.get_dataset_buffer(ins, 0))
ok(acl.rt.memcpy(dev0, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes, 1), "memcpy")
size = acl.mdl.get_output_size_by_index(desc, 0); p, r = acl.rt.malloc(size, 0)
acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(p, size))
r = acl.mdl.execute(mid, ins, outs); print("unset", r, "aclmdlSetDynamicBatchSize" in acl.get_recent_err_msg())
r = acl.mdl.set_dynamic_batch_size(mid, ins, sel, 3); print("batch 3", r, "batch 4" in acl.get_recent_err_msg())
ok(acl.mdl.set_dynamic_batch_size(mid, ins, sel, 2), "set batch")
ok(acl.mdl.execute(mid, ins, outs), "execute")
dims, r = acl.mdl.get_cur_output_dims(desc, 0); print("cur", dims["dims"])
n = int(np.prod(dims["dims"])) * 4
h, r = acl.rt.malloc_host(n); ok(acl.rt.memcpy(h, n, p, n, 2), "d2h")
open("dyn_out.bin", "wb").write(acl.util.ptr_to_bytes(h, n))
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines.pop(0), "soc Ascend310P3")
        self.assertEqual(lines[0], f"dims [-1, 3, 32, 32] size {4 * 3 * 32 * 32 * 4} batches [1, 2, 4]", "the largest profile's bytes")
        self.assertEqual(lines[1], "unset 100000 True")
        self.assertEqual(lines[2], "batch 3 100000 True")
        self.assertEqual(lines[3], "cur [2, 10]")
        self.assertEqual(read(os.path.join(WORK, "dyn_out.bin"), "rb"), want)

    def test_a_dynamic_shape_model_takes_its_dims_from_a_tensor_description(self):
        run([ATC, "--framework=5", f"--model={T.EXAMPLES}/tinynet.onnx", "--output=tiny_range", "--soc_version=Ascend310P3",
             "--input_shape=image:1~4,3,32,32"])
        x = np.random.default_rng(8).standard_normal((3, 3, 32, 32)).astype(np.float32)
        np.save(os.path.join(WORK, "x3.npy"), x)
        want, _ = msame_output("tiny_range.om", "x3.npy", "out_range")
        code = pyacl_loading("tiny_range.om") + """
print("sizes", acl.mdl.get_input_size_by_index(desc, 0), acl.mdl.get_output_size_by_index(desc, 0))
x = np.load("x3.npy")
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
p, r = acl.rt.malloc(x.nbytes, 0); ok(acl.rt.memcpy(p, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes, 1), "memcpy")
acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, x.nbytes))
out = acl.create_data_buffer(0, 0)                      # left empty: the runtime allocates the output
acl.mdl.add_dataset_buffer(outs, out)
r = acl.mdl.execute(mid, ins, outs); print("no dims", r, "aclmdlSetDatasetTensorDesc" in acl.get_recent_err_msg())
def given(dims):
    d = acl.create_tensor_desc(acl.mdl.get_input_data_type(desc, 0), dims, acl.mdl.get_input_format(desc, 0))
    ok(acl.mdl.set_dataset_tensor_desc(ins, d, 0), "set desc"); acl.destroy_tensor_desc(d)
given([3, 3, 16, 16]); r = acl.mdl.execute(mid, ins, outs); print("16x16", r, "its description gives [3,3,16,16]" in acl.get_recent_err_msg())
given([3, 3, 32, 32]); ok(acl.mdl.execute(mid, ins, outs), "execute")
od = acl.mdl.get_dataset_tensor_desc(outs, 0)
print("out", [acl.get_tensor_desc_dim_v2(od, i)[0] for i in range(acl.get_tensor_desc_num_dims(od))], acl.get_tensor_desc_size(od))
n = acl.get_tensor_desc_size(od); dev = acl.get_data_buffer_addr(out)
h, r = acl.rt.malloc_host(n); ok(acl.rt.memcpy(h, n, dev, n, 2), "d2h")
open("range_out.bin", "wb").write(acl.util.ptr_to_bytes(h, n))
ok(acl.rt.free(dev), "free the runtime's output"); ok(acl.update_data_buffer(out, 0, 0), "reset")
print("again", acl.mdl.execute(mid, ins, outs))
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertEqual(lines, ["sizes 0 0", "no dims 100000 True", "16x16 100000 True", "out [3, 10] 120", "again 0"])
        self.assertEqual(read(os.path.join(WORK, "range_out.bin"), "rb"), want)

    def test_a_faulting_task_is_the_ai_core_exception_with_an_exception_dump(self):
        import onnx
        from onnx import TensorProto, helper
        table = helper.make_tensor("table", TensorProto.FLOAT, [4, 3], [float(v) for v in range(12)])
        graph = helper.make_graph([helper.make_node("Gather", ["table", "idx"], ["rows"], name="lookup", axis=0)], "lookup",
                                  [helper.make_tensor_value_info("idx", TensorProto.INT64, [2])],
                                  [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [2, 3])], [table])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(WORK, "lookup.onnx"))
        run([ATC, "--framework=5", "--model=lookup.onnx", "--output=lookup", "--soc_version=Ascend310P3"])
        dump = os.path.join(WORK, "exception_dump")
        shutil.rmtree(dump, ignore_errors=True)
        with open(os.path.join(WORK, "exception.json"), "w") as f:
            json.dump({"dump": {"dump_path": dump, "dump_scene": "lite_exception"}}, f)
        code = """
import acl, numpy as np
acl.init("exception.json"); acl.rt.set_device(0)
mid, r = acl.mdl.load_from_file("lookup.om")
desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, mid)
ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
idx = np.array([1, 7], np.int64)                  # 7: past the table's 4 rows
p, r = acl.rt.malloc(16, 0); acl.rt.memcpy(p, 16, acl.util.numpy_to_ptr(idx), 16, 1)
acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(p, 16))
q, r = acl.rt.malloc(24, 0); acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(q, 24))
print(acl.mdl.execute(mid, ins, outs))
print(acl.get_recent_err_msg().replace("\\n", " "))
idx[1] = 3
acl.rt.memcpy(p, 16, acl.util.numpy_to_ptr(idx), 16, 1)
print(acl.mdl.execute(mid, ins, outs))             # the model still runs on good data
h, r = acl.rt.malloc_host(24); acl.rt.memcpy(h, 24, q, 24, 2)
print(acl.util.ptr_to_numpy(h, (2, 3), np.dtype(np.float32).num).tolist())
"""
        lines = run([T.PY, "-c", code]).stdout.splitlines()
        self.assertIn(lines[0], ("507015", "507018"), "ACL_ERROR_RT_AICORE_EXCEPTION (or the AI CPU's)")
        self.assertRegex(lines[1], r"(AI Core|AI CPU) exception in task \d+ on stream \d+")
        self.assertIn("lookup", lines[1])
        self.assertIn("index 7 out of range", lines[1])
        self.assertIn(dump, lines[1], "the message says where the exception dump is")
        self.assertEqual(lines[2], "0")
        self.assertEqual(lines[3], "[[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]")
        # The exception dump: the faulting op's inputs (and its unwritten output), which msaccucmp converts.
        (folder,) = glob.glob(f"{dump}/0")
        npy = os.path.join(WORK, "exception_npy")
        shutil.rmtree(npy, ignore_errors=True)
        run([f"{BUILD}/tools/msaccucmp/msaccucmp", "convert", "-d", folder, "-out", npy, "-t", "npy"])
        arrays = {os.path.basename(p): np.load(p) for p in glob.glob(f"{npy}/*.npy")}
        (idx_file,) = [n for n in arrays if n.endswith(".input.1.npy")]
        self.assertEqual(arrays[idx_file].tolist(), [1, 7])
        self.assertTrue(any(n.endswith(".output.0.npy") for n in arrays), sorted(arrays))
        # msame with the same acl.json: the same exception, the same dump.
        np.save(os.path.join(WORK, "bad_idx.npy"), np.array([1, 7], np.int64))
        shutil.rmtree(dump, ignore_errors=True)
        p = run([MSAME, "--model=lookup.om", "--input=bad_idx.npy", "--acl_json_path=exception.json", "--output=out_exc"], ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("EH0003", p.stdout + p.stderr)
        self.assertIn("AI Core exception in task", p.stdout + p.stderr)
        self.assertEqual(len(glob.glob(f"{dump}/0/*")), 1)

    def test_only_the_c_interface_is_exported(self):
        names = run(["nm", "-D", "--defined-only", f"{TOOLKIT}/runtime/lib64/libascendcl.so"]).stdout.split()[2::3]
        self.assertIn("aclmdlExecute", names)
        # C names are AscendCL's; C++ names only the standard library's unique template symbols, none of npukit's.
        self.assertEqual([n for n in names if not n.startswith(("acl", "_Z"))], [])
        self.assertEqual([n for n in names if "3npu" in n], [], "npukit's own symbols stay inside")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
