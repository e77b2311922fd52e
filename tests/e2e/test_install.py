#!/usr/bin/python3
"""The installed toolchain: `cmake --install` into a prefix, the prefix moved elsewhere, and the pipeline
atc -> msame (dump + profile) -> msaccucmp -> profparse run from there with a PATH that holds no build tree;
then `cpack -G DEB` and `dpkg-deb -I` on the package.
usage: test_install.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import glob
import json
import os
import shutil
import sys
import unittest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib as T  # noqa: E402  (what every Python test repeats: tests/testlib.py)

SRC, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
TOOLS = ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse")


def run(cmd, env=None, cwd=None):
    """A command that must succeed, in exactly the environment given (the installed prefix's PATH, nothing else)."""
    p = T.run(*cmd, cwd=cwd, env=env)
    assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}"
    return p


class Installed(unittest.TestCase):
    def test_a_moved_prefix_runs_the_pipeline(self):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        first, moved = f"{WORK}/first", f"{WORK}/moved"
        run(["cmake", "--install", BUILD, "--prefix", first])
        os.rename(first, moved)
        for t in TOOLS:
            self.assertTrue(os.access(f"{moved}/bin/{t}", os.X_OK), t)
            dyn = run(["readelf", "-d", f"{moved}/bin/{t}"]).stdout
            self.assertNotIn(BUILD, dyn, f"{t} has an RPATH into the build tree")
        for data in ("soc_specs/Ascend310P3.ini", "mixlist/ascend310p.json", "transplt/builtin_rules.json"):
            self.assertTrue(os.path.isfile(f"{moved}/share/npukit/{data}"), data)
        env = {"PATH": f"{moved}/bin:/usr/bin:/bin", "HOME": WORK, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log", **T.sanitizer_env(BUILD)}
        w = f"{WORK}/run"
        os.makedirs(w)
        shutil.copy(f"{SRC}/examples/tinynet.onnx", w)
        shutil.copy(f"{SRC}/examples/input.npy", w)
        run(["atc", "--framework=5", "--model=tinynet.onnx", "--output=tiny", "--soc_version=Ascend310P3",
             "--input_shape=image:1,3,32,32"], env, w)
        run(["atc", "--mode=1", "--om=tiny.om", "--json=tiny.json"], env, w)
        with open(f"{w}/acl.json", "w") as f:
            json.dump({"dump": {"dump_path": "dump", "dump_list": [], "dump_mode": "all"},
                       "profiler": {"switch": "on", "output": "prof", "aic_metrics": "PipeUtilization"}}, f)
        run(["msame", "--model=tiny.om", "--input=input.npy", "--acl_json_path=acl.json", "--output=out"], env, w)
        shutil.copy(f"{w}/tinynet.onnx", f"{w}/golden.onnx")
        with open(f"{w}/gold.json", "w") as f:
            json.dump({"dump": {"dump_path": "dump", "dump_list": [], "dump_mode": "all"}}, f)
        run(["msame", "--model=golden.onnx", "--input=input.npy", "--acl_json_path=gold.json", "--output=ref"], env, w)
        (npu,), (gold,) = glob.glob(f"{w}/dump/*/0/tiny/1/*"), glob.glob(f"{w}/dump/*/0/golden/1/*")
        run(["msaccucmp", "compare", "-m", npu, "-g", gold, "-f", "tiny.json", "--out", "cmp"], env, w)
        self.assertEqual(len(glob.glob(f"{w}/cmp/result_*.csv")), 1)
        run(["profparse", "--export=on", "--output=prof"], env, w)
        self.assertTrue(glob.glob(f"{w}/prof/PROF_*/mindstudio_profiler_output/op_summary_*.csv"))
        for t in TOOLS:
            self.assertIn("npukit", run([t, "--version"], env, w).stdout)
        # The AscendCL toolkit as CANN lays it out: `source set_env.sh`, then a program builds with its own
        # CMakeLists and runs, and a pyACL program imports acl, with no path into the build tree.
        for lib in ("runtime/lib64/libascendcl.so", "runtime/lib64/stub/libascendcl.so"):
            self.assertNotIn(BUILD, run(["readelf", "-d", f"{moved}/{lib}"]).stdout)
        (pyacl,) = glob.glob(f"{moved}/python/site-packages/acl.*.so")
        self.assertNotIn(BUILD, run(["readelf", "-d", pyacl]).stdout)
        script = (f"source {moved}/set_env.sh && cmake -S {SRC}/tests/acl/sample -B sample >/dev/null && cmake --build sample >/dev/null && "
                  "/usr/bin/python3 -c \"import numpy as np; np.load('input.npy').astype(np.float32).tofile('x.bin')\" && "
                  "sample/main tiny.om x.bin acl_out && "
                  f"/usr/bin/python3 {SRC}/tests/acl/sample_py/classify.py tiny.om input.npy py_out.npy && echo $ASCEND_TOOLKIT_HOME")
        p = run(["bash", "-c", script], env, w)
        self.assertEqual(p.stdout.strip().splitlines()[-1], moved)
        (msame_out,) = glob.glob(f"{w}/out/**/*output_0.bin", recursive=True)
        with open(f"{w}/acl_out_0.bin", "rb") as a, open(msame_out, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_acl_samples_from_the_installed_prefix_print_torchs_top5(self):
        """Ascend's quick-start flow against an installed npukit: `source set_env.sh`, build the C++ sample with its
        own CMakeLists, run it and the pyACL sample on a resnet converted by atc (fp32, force_fp16, and static AIPP
        fed a uint8 RGB image); each prints the top-5 torch gives on the same preprocessing."""
        import numpy as np
        import torch
        import torchvision
        prefix = f"{WORK}_acl/prefix"
        w = f"{WORK}_acl/run"
        shutil.rmtree(f"{WORK}_acl", ignore_errors=True)
        os.makedirs(w)
        run(["cmake", "--install", BUILD, "--prefix", prefix])
        torch.manual_seed(0)
        net = torchvision.models.resnet18().eval()
        torch.onnx.export(net, torch.zeros(1, 3, 224, 224), f"{w}/resnet18.onnx", input_names=["input"], output_names=["logits"], opset_version=13)
        mean = np.array([124, 116, 104], np.float32)                                      # AIPP's integer means
        scale = np.array([1 / (0.229 * 255), 1 / (0.224 * 255), 1 / (0.225 * 255)], np.float32)  # its var_reci
        with open(f"{w}/aipp.cfg", "w") as f:
            f.write("aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n  src_image_size_w: 224\n  src_image_size_h: 224\n" +
                    "".join(f"  mean_chn_{c}: {int(mean[c])}\n  var_reci_chn_{c}: {scale[c]:.8f}\n" for c in range(3)) + "}\n")
        # An image whose top-5 is well separated in torch's fp32 logits (fp16 numerics move a logit by ~1e-3).
        for seed in range(50):
            img = np.random.default_rng(seed).integers(0, 256, (1, 224, 224, 3), dtype=np.uint8)
            x = ((img.astype(np.float32) - mean) * scale).transpose(0, 3, 1, 2).copy()
            with torch.no_grad():
                logits = net(torch.from_numpy(x)).numpy().ravel()
            top = np.argsort(-logits)[:6]
            if np.min(-np.diff(logits[top])) > 0.02:
                break
        want = " ".join(str(int(c)) for c in top[:5])
        np.save(f"{w}/x.npy", x)
        x.tofile(f"{w}/x.bin")
        np.save(f"{w}/img.npy", img)
        img.tofile(f"{w}/img.bin")
        env = {"PATH": "/usr/bin:/bin", "HOME": WORK, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log", **T.sanitizer_env(BUILD)}
        script = (f"source {prefix}/set_env.sh && cd {w} && "
                  f"cmake -S {SRC}/tests/acl/sample -B sample >/dev/null && cmake --build sample >/dev/null && "
                  "atc --framework=5 --model=resnet18.onnx --output=r18_fp32 --soc_version=Ascend310P3 --precision_mode=must_keep_origin_dtype >/dev/null && "
                  "atc --framework=5 --model=resnet18.onnx --output=r18_fp16 --soc_version=Ascend310P3 --precision_mode=force_fp16 >/dev/null && "
                  "atc --framework=5 --model=resnet18.onnx --output=r18_aipp --soc_version=Ascend310P3 --insert_op_conf=aipp.cfg "
                  "--precision_mode=must_keep_origin_dtype >/dev/null && "
                  "for m in fp32 fp16; do sample/main r18_$m.om x.bin out_$m | grep top5; python3 "
                  f"{SRC}/tests/acl/sample_py/classify.py r18_$m.om x.npy py_$m.npy | grep top5; done && "
                  f"sample/main r18_aipp.om img.bin out_aipp | grep top5 && python3 {SRC}/tests/acl/sample_py/classify.py r18_aipp.om img.npy py_aipp.npy | grep top5")
        lines = run(["bash", "-c", script], env).stdout.splitlines()
        self.assertEqual(lines, [f"top5 {want}"] * 6, "C++ and pyACL, fp32, force_fp16 and AIPP: torch's top-5")

    def test_cpack_makes_a_deb_that_lists_its_dependencies(self):
        out = f"{WORK}_deb"
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        run(["cpack", "-G", "DEB", "--config", f"{BUILD}/CPackConfig.cmake", "-B", out], cwd=out)
        (deb,) = glob.glob(f"{out}/npukit_*.deb")
        info = run(["dpkg-deb", "-I", deb]).stdout
        self.assertIn("Package: npukit", info)
        depends = next(line for line in info.splitlines() if line.strip().startswith("Depends:"))
        for lib in ("libprotobuf", "libhdf5", "libc6"):
            self.assertIn(lib, depends)
        files = run(["dpkg-deb", "-c", deb]).stdout
        for t in TOOLS:
            self.assertIn(f"./usr/bin/{t}", files)
        for f in ("./usr/set_env.sh", "./usr/runtime/include/acl/acl.h", "./usr/runtime/lib64/libascendcl.so",
                  "./usr/runtime/lib64/stub/libascendcl.so"):
            self.assertIn(f, files)
        self.assertRegex(files, r"\./usr/python/site-packages/acl\.cpython-\d+-[\w-]+\.so")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
