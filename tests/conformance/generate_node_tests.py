#!/usr/bin/python3
"""Generates the ONNX backend node test cases (model.onnx + test_data_set_0/*.pb) from Debian's python3-onnx.

Debian's package strips the data; its generator predates numpy 1.24, which removed the np.float-style
aliases, so they are restored before the generator is imported.
usage: generate_node_tests.py OUT_DIR
"""
import argparse
import sys

import numpy as np

for alias, real in {"float": float, "int": int, "bool": bool, "object": object, "str": str, "complex": complex}.items():
    if alias not in np.__dict__:
        setattr(np, alias, real)

from onnx.backend.test import cmd_tools  # noqa: E402  (needs the aliases above)

if __name__ == "__main__":
    cmd_tools.generate_data(argparse.Namespace(output=sys.argv[1], op_type=None))
