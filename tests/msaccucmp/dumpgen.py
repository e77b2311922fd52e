"""Test helpers: write CANN dump files with an independent encoder (protoc-generated Python classes for
libcore/dump/dump.proto), golden .npy files, and the reference metric formulas in numpy."""
import os
import subprocess
import sys

import numpy as np

CODES = {np.dtype("float32"): 1, np.dtype("float16"): 2, np.dtype("int8"): 3, np.dtype("uint8"): 4,
         np.dtype("int16"): 5, np.dtype("int32"): 7, np.dtype("int64"): 8, np.dtype("bool"): 11,
         np.dtype("float64"): 12}
BF16 = 27


def load_proto(src_dir, work):
    os.makedirs(work, exist_ok=True)
    subprocess.run(["protoc", f"--python_out={work}", f"-I{src_dir}/libcore/dump", "dump.proto"], check=True)
    sys.path.insert(0, work)
    import dump_pb2  # noqa: E402
    return dump_pb2


def bf16_bits(a):
    """float32 array -> bfloat16 bit patterns (round to nearest even), as uint16."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tensor_desc(msg, arr, code=None, fmt=2, shape=None, orig_shape=None, size=None):
    msg.data_type = code if code is not None else CODES[arr.dtype]
    msg.format = fmt
    msg.shape.dim.extend(list(arr.shape if shape is None else shape))
    if orig_shape is not None:
        msg.original_shape.dim.extend(list(orig_shape))
    msg.size = arr.nbytes if size is None else size


def write_dump(pb, path, op_name, inputs=(), outputs=(), original=None, header_len=None, truncate=None):
    """inputs/outputs: lists of dicts {arr, code?, fmt?, shape?, orig_shape?, size?}."""
    d = pb.DumpData(version="2.0", dump_time=1, op_name=op_name)
    payload = b""
    for t in inputs:
        tensor_desc(d.input.add(), t["arr"], t.get("code"), t.get("fmt", 2), t.get("shape"), t.get("orig_shape"), t.get("size"))
        payload += t["arr"].tobytes()
    for i, t in enumerate(outputs):
        o = d.output.add()
        tensor_desc(o, t["arr"], t.get("code"), t.get("fmt", 2), t.get("shape"), t.get("orig_shape"), t.get("size"))
        if original:
            o.original_op.name = original
            o.original_op.output_index = i
        payload += t["arr"].tobytes()
    h = d.SerializeToString()
    blob = np.uint64(len(h) if header_len is None else header_len).tobytes() + h + payload
    if truncate:
        blob = blob[:truncate]
    with open(path, "wb") as f:
        f.write(blob)


EPS = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps
NAMES = ["CosineSimilarity", "MaxAbsoluteError", "AccumulatedRelativeError", "RelativeEuclideanDistance",
         "KullbackLeiblerDivergence", "StandardDeviation", "MeanAbsoluteError", "RootMeanSquareError",
         "MaxRelativeError", "MeanRelativeError"]


def reference_metrics(x, y, boolean=False):
    """The reference formulas (docs/reference notes), in float64 numpy. Returns name -> value
    (StandardDeviation -> ((mean, std), (mean, std)))."""
    x = np.asarray(x, np.float64).ravel()
    y = np.asarray(y, np.float64).ravel()
    n = x.size
    nan = float("nan")
    if n == 0:
        return {k: nan for k in NAMES}
    r = {}
    with np.errstate(all="ignore"):
        if n == 1:
            r["CosineSimilarity"] = 1.0
        else:
            nx, ny = np.sqrt(np.sum(x * x)), np.sqrt(np.sum(y * y))
            if nx <= EPS and ny < EPS:
                r["CosineSimilarity"] = 1.0
            elif np.sqrt(nx) <= EPS or np.sqrt(ny) <= EPS:
                r["CosineSimilarity"] = nan
            else:
                c = float(np.sum((x / nx) * (y / ny)))
                r["CosineSimilarity"] = c if np.isnan(c) else min(c, 1.0)
        d = x - y
        rel = np.where(np.abs(y) > EPS, np.abs(x / y - 1), 0.0)
        r["MaxAbsoluteError"] = float(np.max(np.abs(d)))
        r["AccumulatedRelativeError"] = float(np.sum(rel))
        syy = np.sum(y * y)
        r["RelativeEuclideanDistance"] = 0.0 if np.sqrt(syy) <= EPS else float(np.sqrt(np.sum(d * d) / syy))
        r["KullbackLeiblerDivergence"] = kl(x, y)
        r["StandardDeviation"] = ((float(np.mean(x)), float(np.std(x))), (float(np.mean(y)), float(np.std(y))))
        r["MeanAbsoluteError"] = float(np.mean(np.abs(d)))
        r["RootMeanSquareError"] = float(np.sqrt(np.mean(d * d)))
        r["MaxRelativeError"] = float(np.max(rel))
        r["MeanRelativeError"] = float(np.mean(rel))
    if boolean:
        for k in NAMES:
            if k not in ("CosineSimilarity", "RelativeEuclideanDistance"):
                r[k] = nan
    return r


def kl(x, y):
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return float("nan")
    ps = []
    for v in (x, y):
        mn, mx = v.min(), v.max()  # floored below, so an all-zero side is uniform (no NaN)
        p = (v - mn) / (mx - mn) if mx > mn else v.copy()
        ps.append(np.maximum(p, EPS32))
    P, Q = ps[0] / ps[0].sum(), ps[1] / ps[1].sum()
    k = float(np.sum(P * np.log(P / Q)))
    return 0.0 if abs(k) < EPS else k
