#!/usr/bin/env bash
# make demo: convert the bundled example, inspect it, run it on the simulated NPU and check it against
# the fp32 reference path.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
atc=$build/tools/atc/atc msame=$build/tools/msame/msame profparse=$build/tools/profparse/profparse
out=$build/demo
rm -rf "$out" && mkdir -p "$out"

echo "== atc: ONNX -> .om (default precision mode force_fp16: the NPU computes in fp16)"
"$atc" --framework=5 --model="$here/tinynet.onnx" --output="$out/tinynet" --soc_version=Ascend310P3 \
       --input_shape="image:1,3,32,32" --explain-precision="$out/tinynet_precision.json"
echo "== atc --mode=6: what is inside"
"$atc" --mode=6 --om="$out/tinynet.om"
echo "== msame: run the .om (host time, then the simulated NPU's time)"
"$msame" --model "$out/tinynet.om" --input "$here/input.npy" --output "$out/npu" --outfmt NPY --loop 10 | tail -4
echo "== msame + profparse: profile 3 inferences, export msprof's tables"
echo '{"profiler": {"switch": "on", "output": "'"$out/prof"'", "aic_metrics": "PipeUtilization"}}' > "$out/acl.json"
"$msame" --model "$out/tinynet.om" --input "$here/input.npy" --acl_json_path "$out/acl.json" --loop 3 | grep profiling
"$profparse" --export=on --output="$out/prof" | tail -1
cut -d, -f2-8 "$out"/prof/PROF_*/mindstudio_profiler_output/op_statistic_*.csv | head -6
echo "== msame: fp32 reference path on the .onnx"
"$msame" --model "$here/tinynet.onnx" --input "$here/input.npy" --output "$out/ref" --outfmt NPY | tail -1
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
npu = np.load(f"{out}/npu/tinynet_output_0.npy"); ref = np.load(f"{out}/ref/tinynet_output_0.npy")
print("== summary")
print(f"output probs{list(npu.shape)}: top class {int(npu.argmax())} (p={npu.max():.4f}), sum {npu.sum():.6f}")
print(f".om (fp16 on the simulated Ascend310P3) vs fp32 reference: max abs error {np.abs(npu - ref).max():.3e}")
print(f"each op's dtype and the rules behind it: {out}/tinynet_precision.json")
PY
