#!/usr/bin/env bash
# Generates the ONNX backend node cases (once per build tree) and runs them against the expected-failures list.
set -euo pipefail
runner=$1 data=$2 expected=$3
if [ ! -f "$data/.complete" ]; then
  rm -rf "$data"
  /usr/bin/python3 "$(dirname "$0")/generate_node_tests.py" "$data"
  touch "$data/.complete"
fi
exec "$runner" "$data/node" "$expected"
