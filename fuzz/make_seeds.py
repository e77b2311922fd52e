#!/usr/bin/python3
"""Seed corpora for the fuzz targets, generated from scratch with npukit's own tools (atc, msame, aoe) and
numpy/onnx/h5py: one folder per target under OUT_DIR, small inputs so that mutations stay cheap.

usage: make_seeds.py BUILD_DIR OUT_DIR
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def put(out, target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# Python's keywords and the token shapes the grammar branches on. The grammar's lexer is built without coverage
# instrumentation (fuzz/CMakeLists.txt), so libFuzzer cannot learn these from compare traces: it is given them.
PYTHON_TOKENS = ("import ", "from ", " as ", "def ", "class ", "return", "with ", "for ", " in ", "if ", "elif ",
                 "else:", "while ", "try:", "except", "finally:", "lambda", "yield", "async ", "await ", "global ",
                 "nonlocal ", "pass", "break", "continue", "not ", " and ", " or ", " is ", "None", "True", "False",
                 "del ", "raise ", "assert ", "match ", "case ", "print", "(", ")", "[", "]", "{", "}", ":", ",",
                 ".", "=", "==", "**", "->", ":=", "@", '"""', "'''", "f'", 'f"', "b'", "r'", "#", "\\\n",
                 "\n    ", "\n", "\t", ";")


def transplt_python_dict():
    """A libFuzzer dictionary for transplt_python: the Python tokens above plus every name the built-in rules
    match (torch APIs, keywords, device strings), so mutations write code the migration acts on."""
    rules = json.load(open(f"{ROOT}/tools/transplt/builtin_rules.json"))
    code_fields = ("old", "new", "function", "api", "method", "keyword", "value", "similar", "setting")
    names = set(PYTHON_TOKENS)
    for section in ("apis", "names", "keywords", "strings", "unsupported", "advice", "config_advice"):
        for rule in rules[section]:
            names.update(v for k, v in rule.items() if k in code_fields and isinstance(v, str))
    return "".join(f'"{dict_escape(n)}"\n' for n in sorted(names))


def dict_escape(token):
    r"""libFuzzer's dictionary escapes: \\, \" and \xNN, nothing else (no \n)."""
    return "".join("\\" + c if c in '"\\' else c if " " <= c <= "~" else f"\\x{ord(c):02X}" for c in token)


def pack_dir(root, last=None):
    """fuzz_input.h's directory image: { u8 name_len; name; u32 data_len LE; data }*. `last` (a relative path)
    goes at the end, where one cut of the image truncates it: how a slice is cut short in a real folder."""
    image = b""
    paths = sorted(glob.glob(os.path.join(root, "**"), recursive=True))
    if last:
        paths = [p for p in paths if os.path.relpath(p, root) != last] + [os.path.join(root, last)]
    for path in paths:
        if os.path.isfile(path):
            name = os.path.relpath(path, root).encode()
            data = open(path, "rb").read()
            image += struct.pack("<B", len(name)) + name + struct.pack("<I", len(data)) + data
    return image


def dir_image(files):
    """The same image from {relative name: bytes}, in the order given (the last file is the one a cut shortens)."""
    image = b""
    for name, data in files.items():
        image += struct.pack("<B", len(name)) + name.encode() + struct.pack("<I", len(data)) + data
    return image


def small_models():
    rng = np.random.default_rng(0)
    w = lambda name, *shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    cnn = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1, name="fc")],
        "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [w("w", 8, 3, 3, 3), w("b", 8), w("fw", 4, 8), w("fb", 4)])
    mlp = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
         helper.make_node("Add", ["m", "b"], ["a"], name="add"),
         helper.make_node("Softmax", ["a"], ["y"], axis=-1, name="softmax")],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [w("w", 16, 8), w("b", 8)])
    opset = [helper.make_opsetid("", 13)]
    return {name: helper.make_model(g, opset_imports=opset) for name, g in (("cnn", cnn), ("mlp", mlp))}


def tf_conv_graph(text=False):
    """A small NHWC net over the TF ops with layouts: Pad, Conv2D + BiasAdd + Relu, depthwise, pooling, BN."""
    sys.path.insert(0, os.path.join(ROOT, "tests/frontends"))
    import tfgraph
    from google.protobuf import text_format
    work = tempfile.mkdtemp(prefix="npukit-tfseed-")
    try:
        pb2 = tfgraph.load_pb2(work)
        rng = np.random.default_rng(0)
        b = tfgraph.Builder(pb2)
        x = b.placeholder("x", np.float32, [1, 8, 8, 3])
        p = b.op("Pad", "pad", [x, b.const("p", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))])
        c = b.op("Conv2D", "conv", [p, b.const("w", rng.standard_normal((3, 3, 3, 4)).astype(np.float32))], strides=[1, 1, 1, 1], padding="VALID")
        r = b.op("Relu", "relu", [b.op("BiasAdd", "bias", [c, b.const("b", np.ones(4, np.float32))])])
        d = b.op("DepthwiseConv2dNative", "dw", [r, b.const("dw_w", rng.standard_normal((3, 3, 4, 1)).astype(np.float32))], strides=[1, 2, 2, 1], padding="SAME")
        bn = b.op("FusedBatchNormV3", "bn", [d] + [b.const(n, np.ones(4, np.float32)) for n in ("s", "o", "m", "v")], is_training=False)
        b.op("Softmax", "out", [b.op("Mean", "gap", [b.op("MaxPool", "pool", [bn], ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME"),
                                                     b.const("axes", np.array([1, 2], np.int32))])])
        return text_format.MessageToString(b.graph).encode() if text else b.graph.SerializeToString()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def air_models():
    """The AIR nets of tests/frontends/airgraph.py (a CNN, a small transformer), as bytes."""
    sys.path.insert(0, os.path.join(ROOT, "tests/frontends"))
    import airgraph
    work = tempfile.mkdtemp(prefix="npukit-airseed-")
    try:
        ge = airgraph.load_pb2(work)
        airgraph.cnn(ge, work)
        airgraph.transformer(ge, work)
        models = {name: open(os.path.join(work, name + ".air"), "rb").read() for name in ("air_cnn", "air_transformer")}
        # One-op graphs of the GE types whose attributes need more than a scalar: a list of int lists (PadD),
        # TF's slice masks, and a FrameworkOp carrying its TF type and a node_def to unwrap.
        x = np.zeros((2, 3, 4), np.float32)
        models["ge_padd"] = airgraph.single_op(ge, "padd", "PadD", x, {}, {"paddings": [[0, 1], [1, 0], [2, 2]]}, [np.zeros((3, 4, 8), np.float32)])
        models["ge_strided_slice"] = airgraph.single_op(
            ge, "ss", "StridedSliceD", x, {}, {"begin": [0, 1, 0], "end": [2, 3, 4], "strides": [1, 1, 2], "shrink_axis_mask": 1,
                                               "new_axis_mask": 0}, [np.zeros((2, 2), np.float32)])
        models["ge_framework_op"] = airgraph.single_op(
            ge, "fwk", "FrameworkOp", x, {"shape": np.array([2, 2], np.int32)},
            {"original_type": "RandomUniform", "node_def": b"\x12\x0dRandomUniform"}, [np.zeros((2, 2), np.float32)], order=["shape"])
        return models
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(*cmd, env=None):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def main():
    build, out = sys.argv[1], sys.argv[2]
    tools = {t: f"{build}/tools/{t}/{t}" for t in ("atc", "msame", "aoe")}
    shutil.rmtree(out, ignore_errors=True)
    work = tempfile.mkdtemp(prefix="npukit-seeds-")
    try:
        for name, model in small_models().items():
            path = f"{work}/{name}.onnx"
            onnx.save(model, path)
            put(out, "onnx_import", f"{name}.onnx", open(path, "rb").read())
            for mode in ("force_fp16", "must_keep_origin_dtype"):
                run(tools["atc"], f"--model={path}", "--framework=5", f"--output={work}/{name}_{mode}",
                    "--soc_version=Ascend310P3", f"--precision_mode={mode}", "--log=error")
                put(out, "om_reader", f"{name}_{mode}.om", open(f"{work}/{name}_{mode}.om", "rb").read())
                put(out, "acl_load", f"{name}_{mode}.om", open(f"{work}/{name}_{mode}.om", "rb").read())

        om = f"{work}/cnn_force_fp16.om"
        acl = {"dump": {"dump_path": f"{work}/dump", "dump_list": [], "dump_mode": "all"}}
        json.dump(acl, open(f"{work}/acl.json", "w"))
        run(tools["msame"], f"--model={om}", f"--acl_json_path={work}/acl.json", f"--output={work}/out")
        for path in sorted(glob.glob(f"{work}/dump/**/*", recursive=True))[:12]:
            if os.path.isfile(path):
                put(out, "dump_reader", os.path.basename(path)[:100], open(path, "rb").read())
        put(out, "acl_json", "dump.json", json.dumps(acl))

        prof = {"profiler": {"switch": "on", "output": f"{work}/prof", "aic_metrics": "PipeUtilization",
                             "aicpu": "on", "task_time": "on"}}
        json.dump(prof, open(f"{work}/prof.json", "w"))
        run(tools["msame"], f"--model={om}", f"--acl_json_path={work}/prof.json", "--loop=2",
            f"--output={work}/out", env={"PROFILING_SLICE_BYTES": "512"})
        prof_dir = glob.glob(f"{work}/prof/PROF_*")[0]
        put(out, "prof_export", "resnet_like.img", pack_dir(prof_dir))
        for k, path in enumerate(sorted(glob.glob(f"{prof_dir}/**/*.slice_*", recursive=True))):
            if not path.endswith(".done"):  # each slice last once: truncations of it are one mutation away
                put(out, "prof_export", f"last_{k}.img", pack_dir(prof_dir, os.path.relpath(path, prof_dir)))
        # The STARS layout (stars_soc, ffts_profile with AIC and AIV parts) of a split-core chip.
        run(tools["atc"], f"--model={work}/cnn.onnx", "--framework=5", f"--output={work}/cnn_910b", "--soc_version=Ascend910B3", "--log=error")
        prof["profiler"]["output"] = f"{work}/prof_910b"
        json.dump(prof, open(f"{work}/prof.json", "w"))
        run(tools["msame"], f"--model={work}/cnn_910b.om", f"--acl_json_path={work}/prof.json", "--loop=2",
            f"--output={work}/out", env={"PROFILING_SLICE_BYTES": "512"})
        put(out, "prof_export", "resnet_like_910b.img", pack_dir(glob.glob(f"{work}/prof_910b/PROF_*")[0]))
        put(out, "acl_json", "profiler.json", json.dumps(prof))
        put(out, "acl_json", "both.json", json.dumps({**acl, **prof}))
        # aclInit's configuration: the same file, read by libascendcl (dump, profiler, the exception dump).
        # Its paths are relative: the target runs in its scratch folder and skips inputs that could leave it.
        init_acl = {"dump": {**acl["dump"], "dump_path": "dump"}}
        init_prof = {"profiler": {**prof["profiler"], "output": "prof"}}
        for name, cfg in (("dump.json", init_acl), ("profiler.json", init_prof), ("both.json", {**init_acl, **init_prof}),
                          ("exception.json", {"dump": {"dump_path": "exc", "dump_scene": "lite_exception"}}), ("empty.json", {})):
            put(out, "acl_init", name, json.dumps(cfg))
        # The aclprofGetOp* readers: two op records as a subscription writes them (ascendcl/src/subscribe.h).
        def op_record(model, start, end, op_type, name):
            return struct.pack("<IIQQ65s257s6x", 0x504F504E, model, start, end, op_type.encode(), name.encode())
        put(out, "acl_op_info", "two_ops.bin", op_record(1, 0, 1500, "Conv2D", "conv1") + op_record(1, 1500, 1800, "Relu", "relu1"))

        os.makedirs(f"{work}/bank")  # a MatMul whose K does not fit L1: the built-in tiling leaves room for aoe
        x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32)
        onnx.save(helper.make_model(helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 4096])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 1024])], [numpy_helper.from_array(x, "w")]),
            opset_imports=[helper.make_opsetid("", 13)]), f"{work}/big.onnx")
        run(tools["aoe"], "--job_type=2", "--framework=5", f"--model={work}/big.onnx", "--soc_version=Ascend310P3",
            "--progress_bar=off", env={"TUNE_BANK_PATH": f"{work}/bank", "ASCEND_WORK_PATH": work})
        assert glob.glob(f"{work}/bank/**/*.json", recursive=True), "aoe banked nothing for the seed"
        put(out, "tune_bank", "aoe_matmul.img", pack_dir(f"{work}/bank"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    for name, a in {"f32": np.arange(12, dtype=np.float32).reshape(3, 4), "f16": np.ones((2, 2), np.float16),
                    "i64": np.arange(5, dtype=np.int64), "u8": np.zeros((2, 3, 4), np.uint8),
                    "scalar": np.float64(1.5), "fortran": np.asfortranarray(np.ones((3, 2), np.float32)),
                    "bool": np.array([True, False]), "empty": np.zeros((0, 4), np.float32)}.items():
        path = os.path.join(out, "npy", name + ".npy")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        np.save(path, a)

    # msaccucmp result tables (the header compare writes) and --shard values with a scheduler's variables
    header = ("Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,TensorIndex,Shape,CosineSimilarity,MaxAbsoluteError,"
              "AccumulatedRelativeError,RelativeEuclideanDistance,KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,"
              "RootMeanSquareError,MaxRelativeError,MeanRelativeError,Verdict,NPUNaN,NPUInf,GoldenNaN,GoldenInf,CompareFailReason,OverFlow\n")
    rows = ('0,Conv2D,/c0 /r0,float16,0x1,/c0,float32,/c0:input:0,"[1,3,8,8]",1.000000,0,0,0,0,"(0;1),(0;1)",0,0,0.000100,0,PASS,0,0,0,0,,NO\n'
            '0,Conv2D,/c0 /r0,float16,0x2,/c0,float32,/c0:output:0,"[1,8,8,8]",0.900000,1.5,0,0,0,"(0;1),(0;1)",0,0,inf,0,FAIL,2,1,0,0,,YES\n'
            '1,Relu,/r1,float16,0x3,*,NaN,/r1:output:0,"[1,8]",NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN,SKIP,NaN,NaN,NaN,NaN,no golden data,NO\n')
    put(out, "html_report", "result.csv", header + rows)
    put(out, "html_report", "shard_slurm_step.txt", "auto\n9\n1\n15\n8\n2\n\n")
    put(out, "html_report", "shard_k8s.txt", "auto/4\n\n\n\n\n\n3\n")

    h5 = os.path.join(out, "h5", "golden.h5")
    os.makedirs(os.path.dirname(h5), exist_ok=True)
    with h5py.File(h5, "w") as f:
        f.create_dataset("/AddmmBackward/4/input/mat1", data=np.ones((2, 3), np.float32))
        f.create_dataset("/ReluBackward/5/output/0", data=np.arange(4, dtype=np.float16))

    put(out, "fusion_switch", "switch.json",
        json.dumps({"Switch": {"GraphFusion": {"ConvBatchnormFusionPass": "off"}, "UBFusion": {"TbeEltwiseFusionPass": "off"}}}))
    put(out, "fusion_switch", "switch.cfg", "ConvBatchnormFusionPass:off\nALL:on\n# comment\nMatMulBiasAddFusionPass:on\n")

    put(out, "transplt_rules", "rule.json", open(f"{ROOT}/tests/transplt/golden/custom_rules/rule.json").read())
    for path in sorted(glob.glob(f"{ROOT}/tests/transplt/golden/*/before.py")):
        put(out, "transplt_python", os.path.basename(os.path.dirname(path)) + ".py", open(path, "rb").read())
    with open(os.path.join(out, "transplt_python.dict"), "w") as f:  # fuzz/run.sh passes it as -dict
        f.write(transplt_python_dict())

    for path in sorted(glob.glob(f"{ROOT}/libcore/soc/specs/*.ini"))[:3]:
        put(out, "soc_spec", os.path.basename(path), open(path, "rb").read())

    put(out, "aipp_config", "rgb.cfg", "aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n  src_image_size_w: 32\n"
        "  src_image_size_h: 30\n  crop: true\n  load_start_pos_w: 2\n  crop_size_w: 16\n  crop_size_h: 16\n"
        "  mean_chn_0: 123\n  var_reci_chn_0: 0.0171\n}\n")
    put(out, "aipp_config", "yuv.cfg", "aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  csc_switch: true\n"
        "  matrix_r0c0: 256\n  matrix_r1c1: -88\n  input_bias_1: 128\n  rbuv_swap_switch: false\n}\n"
        "aipp_op {\n  related_input_rank: 1\n  input_format: YUV400_U8\n}\n")
    put(out, "aipp_config", "dynamic.cfg", "aipp_op {\n  aipp_mode: dynamic\n  max_src_image_size: 30000\n}\n")
    # Dynamic AIPP's block (ir/aipp_config.h: AippDynamicCommon, then one AippDynamicImage per image) for the
    # target's batch of 2 into 3x8x8: RGB888 10x9 images, each cropped 8x8 at (1, 1), with a mean and a scale.
    common = struct.pack("<IIiii4b9i3i3i", 0x50504941, 2, 3, 10, 9, 0, 0, 0, 0, *[0] * 9, 0, 0, 0, 0, 0, 0)
    image = struct.pack("<4b8i4i4f4f", 1, 0, 0, 0, 1, 1, 8, 8, 0, 0, 0, 0, 100, 110, 120, 0, 0, 0, 0, 0, 0.02, 0.02, 0.02, 1.0)
    put(out, "aipp_dynamic", "rgb_batch2.bin", common + image * 2)

    for i, spec in enumerate(["x:1,3,224,224", "a:1,128;b:1,128", "x:-1,3,-1,-1", "x:1~8,3,224,224;y:1,-1",
                              "input_ids:16,128", ":1", "x:1,,2"]):
        put(out, "input_shape", f"spec{i}.txt", spec)

    corpora = os.path.join(ROOT, "tests/data")
    job3 = f"{corpora}/prof_raw/ascend910_job3"  # a real Ascend 910's HWTS log, cut to 4096 records, with its task names
    hwts = open(glob.glob(f"{job3}/hwts.log.data.*")[0], "rb").read()[:64 * 4096]
    desc = open(glob.glob(f"{job3}/Framework.host.vm.task_desc_info.*")[0], "rb").read()
    info = open(f"{corpora}/prof_raw/ascend910_prof2023/device_0/info.json.0", "rb").read()
    put(out, "hwts_log", "job3.img", dir_image({"info.json.0": info, "Framework.host.vm.task_desc_info.0.slice_0": desc,
                                                "hwts.data.0.slice_0": hwts}))
    put(out, "hwts_log", "log_only.img", dir_image({"hwts.data.0.slice_0": hwts[:64 * 256]}))
    put(out, "om_reader", "cann_a3c_v1.om", open(f"{corpora}/om/a3c_pong_model.om", "rb").read())  # CANN's own format
    put(out, "acl_load", "cann_a3c_v1.om", open(f"{corpora}/om/a3c_pong_model.om", "rb").read())
    for name in ("tf2onnx_regression", "tf2onnx_fc-layers"):
        put(out, "tf_import", name + ".pb", open(f"{corpora}/tf/{name}.pb", "rb").read())
    put(out, "tf_import", "nhwc_convs.pb", tf_conv_graph())
    put(out, "tf_import", "nhwc_convs.pbtxt", tf_conv_graph(text=True))
    for name, data in air_models().items():
        put(out, "air_import", name + ".air", data)
    for name in ("mtcnn_det1", "lenet"):
        text = open(f"{corpora}/caffe/{name}.prototxt", "rb").read()
        weights = open(f"{corpora}/caffe/{name}.caffemodel", "rb").read()
        put(out, "caffe_import", name + ".bin", struct.pack("<I", len(text)) + text + (weights if len(weights) < 100000 else b""))

    for name in os.listdir(os.path.join(out, "onnx_import")):  # whole conversions start from the same models
        put(out, "convert", name, open(os.path.join(out, "onnx_import", name), "rb").read())
    fp16 = lambda fmt, *shape: {"format": fmt, "shape": list(shape), "type": "float16"}
    single_ops = [
        [{"op": "Add", "input_desc": [fp16("ND", 8, 16)] * 2, "output_desc": [fp16("ND", 8, 16)]}],
        [{"op": "Conv2D", "input_desc": [fp16("NCHW", 1, 3, 16, 16), fp16("NCHW", 8, 3, 3, 3)], "output_desc": [fp16("NCHW", 1, 8, 8, 8)],
          "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 2, 2]}, {"name": "pads", "type": "list_int", "value": [1, 1, 1, 1]},
                   {"name": "groups", "type": "int", "value": 1}, {"name": "data_format", "type": "str", "value": "NCHW"}]}],
        [{"op": "MatMulV2", "input_desc": [fp16("ND", 16, 32), fp16("ND", 24, 32)], "output_desc": [fp16("ND", 16, 24)],
          "attr": [{"name": "transpose_x2", "type": "bool", "value": True}]},
         {"op": "Relu", "name": "r", "input_desc": [fp16("ND", 4, 4)], "output_desc": [fp16("ND", 4, 4)]}],
    ]
    for i, ops in enumerate(single_ops):
        put(out, "singleop", f"ops{i}.json", json.dumps(ops))


if __name__ == "__main__":
    main()
