#!/usr/bin/env bash
# make bench: every benchmark against its named peer, printing ratios.
set -euo pipefail
build=${1:-build}
/usr/bin/python3 "$(dirname "$0")/bench_ort.py" "$build" 1 2
/usr/bin/python3 "$(dirname "$0")/bench_int8.py" "$build" 1 2
/usr/bin/python3 "$(dirname "$0")/bench_resnet50.py" "$build" "${THREADS:-$(nproc)}"
/usr/bin/python3 "$(dirname "$0")/bench_tf_import.py" "$build"
/usr/bin/python3 "$(dirname "$0")/bench_msaccucmp.py" "$build"
/usr/bin/python3 "$(dirname "$0")/bench_transplt.py" "$build"
"$build/tests/cost_model_bench"
"$build/tests/fork_join"
"$build/tests/conv3x3"
"$build/tests/depthwise"
"$build/tests/gemv"
"$build/tests/logistic"
/usr/bin/python3 "$(dirname "$0")/bench_profparse.py" "$build"
