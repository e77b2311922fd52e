"""TensorFlow GraphDefs for the tests, without TensorFlow: the test's own encoder (Python protobuf classes
generated from libcore/frontend/tf/tf_graph.proto, so the bytes are not the importer's) and a numpy evaluator of
TF's op semantics, written from TensorFlow's documentation independently of the importer's conversions."""
import importlib
import os
import subprocess
import sys

import numpy as np

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
DT = {np.float32: 1, np.float64: 2, np.int32: 3, np.uint8: 4, np.int16: 5, np.int8: 6, np.int64: 9, np.bool_: 10, np.float16: 19}
NP = {v: k for k, v in DT.items()}


def load_pb2(work):
    """Compiles the importer's schema for Python into `work` and imports it."""
    proto_dir = os.path.join(SOURCE, "libcore/frontend/tf")
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={work}", os.path.join(proto_dir, "tf_graph.proto")], check=True)
    sys.path.insert(0, work)
    return importlib.import_module("tf_graph_pb2")


class Builder:
    """g = Builder(pb2); x = g.placeholder("x", np.float32, [1, 8, 8, 3]); g.op("Relu", "r", [x]); g.graph"""

    def __init__(self, pb2):
        self.pb2 = pb2
        self.graph = pb2.GraphDef()

    def _attr(self, node, key, value):
        a = node.attr.add()
        a.key = key.encode()
        v = a.value
        if isinstance(value, bool):
            v.b = value
        elif isinstance(value, int):
            v.i = value
        elif isinstance(value, float):
            v.f = value
        elif isinstance(value, str):
            v.s = value.encode()
        elif isinstance(value, type) and value in DT:
            v.type = DT[value]
        elif isinstance(value, (list, tuple)):
            v.list.i.extend(value)
        elif isinstance(value, np.ndarray):
            self._tensor(v.tensor, value)
        else:
            raise TypeError(f"attr {key}: {value!r}")

    def _tensor(self, t, arr, content=True):
        t.dtype = DT[arr.dtype.type]
        for d in arr.shape:
            t.tensor_shape.dim.add().size = d
        if content:
            t.tensor_content = np.ascontiguousarray(arr).tobytes()
        elif arr.dtype == np.float32:
            t.float_val.extend(arr.ravel().tolist())
        else:
            t.int_val.extend(arr.ravel().tolist())

    def node(self, op, name, inputs=(), **attrs):
        n = self.graph.node.add()
        n.name = name.encode()
        n.op = op.encode()
        n.input.extend(i.encode() for i in inputs)
        for k, v in attrs.items():
            self._attr(n, k, v)
        return name

    def placeholder(self, name, dtype, shape):
        n = self.graph.node.add()
        n.name, n.op = name.encode(), b"Placeholder"
        self._attr(n, "dtype", dtype)
        a = n.attr.add()
        a.key = b"shape"
        for d in shape:
            a.value.shape.dim.add().size = d
        return name

    def const(self, name, arr, content=True):
        arr = np.asarray(arr)
        n = self.graph.node.add()
        n.name, n.op = name.encode(), b"Const"
        self._attr(n, "dtype", arr.dtype.type)
        a = n.attr.add()
        a.key = b"value"
        self._tensor(a.value.tensor, arr, content)
        return name

    def op(self, op, name, inputs, **attrs):
        return self.node(op, name, inputs, T=np.float32, **attrs)

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.graph.SerializeToString())
        return path


# ---- the numpy evaluator ---------------------------------------------------------------------------------------

def _attrs(node):
    out = {}
    for e in node.attr:
        v = e.value
        kind = v.WhichOneof("value")
        if kind == "list":
            out[e.key.decode()] = list(v.list.i) if len(v.list.i) else [s.decode() for s in v.list.s]
        elif kind == "tensor":
            out[e.key.decode()] = _tensor_value(v.tensor)
        elif kind == "shape":
            out[e.key.decode()] = [d.size for d in v.shape.dim]
        elif kind in ("s",):
            out[e.key.decode()] = v.s.decode()
        else:
            out[e.key.decode()] = getattr(v, kind) if kind else None
    return out


def _tensor_value(t):
    dt = NP[t.dtype]
    shape = [d.size for d in t.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype=dt).reshape(shape).copy()
    field = {np.float32: t.float_val, np.float64: t.double_val, np.int64: t.int64_val, np.bool_: t.bool_val,
             np.float16: t.half_val}.get(dt, t.int_val)
    vals = list(field)
    if dt == np.float16:
        vals = np.array(vals, dtype=np.uint16).view(np.float16).tolist()
    vals = vals + [vals[-1]] * (n - len(vals)) if vals else [0] * n
    return np.array(vals, dtype=dt).reshape(shape)


def _same_pads(size, k, s, d):
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


def _spatial(v, fmt, nd):
    return list(v[1:1 + nd]) if fmt.startswith("NH") or fmt.startswith("ND") else list(v[2:2 + nd])


def _to_last(x, fmt):
    return np.moveaxis(x, 1, -1) if not (fmt.startswith("NH") or fmt.startswith("ND")) else x


def _from_last(x, fmt):
    return np.moveaxis(x, -1, 1) if not (fmt.startswith("NH") or fmt.startswith("ND")) else x


def _pads(a, x_last, ks, strides, dil):
    nd = len(ks)
    if a.get("padding", "VALID") == "SAME":
        return [_same_pads(x_last.shape[1 + i], ks[i], strides[i], dil[i]) for i in range(nd)]
    if a.get("padding") == "EXPLICIT":
        ex = a["explicit_paddings"]
        fmt = a.get("data_format", "NHWC")
        dims = range(1, 1 + nd) if fmt.startswith("NH") or fmt.startswith("ND") else range(2, 2 + nd)
        return [(ex[2 * d], ex[2 * d + 1]) for d in dims]
    return [(0, 0)] * nd


def conv_nd(x_last, w, strides, dil, pads, groups=1):
    """x: [N, *spatial, C]; w: [*k, C/groups, O]."""
    nd = x_last.ndim - 2
    xp = np.pad(x_last, [(0, 0)] + list(pads) + [(0, 0)])
    ks = w.shape[:nd]
    out_sp = [(xp.shape[1 + i] - ((ks[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nd)]
    cin_g, o = w.shape[nd], w.shape[nd + 1]
    og = o // groups
    y = np.zeros([x_last.shape[0]] + out_sp + [o], np.float64)
    for tap in np.ndindex(*ks):
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i]) for i in range(nd))
        patch = xp[(slice(None),) + sl + (slice(None),)].astype(np.float64)
        for g in range(groups):
            y[..., g * og:(g + 1) * og] += patch[..., g * cin_g:(g + 1) * cin_g] @ w[tap][:, g * og:(g + 1) * og]
    return y.astype(np.float32)


def _pool(x_last, a, nd, is_max):
    fmt = a.get("data_format", "NHWC")
    ks, st = _spatial(a["ksize"], fmt, nd), _spatial(a["strides"], fmt, nd)
    pads = _pads(a, x_last, ks, st, [1] * nd)
    fill = -np.inf if is_max else 0.0
    xp = np.pad(x_last.astype(np.float64), [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    ones = np.pad(np.ones(x_last.shape[1:1 + nd]), pads)
    out_sp = [(xp.shape[1 + i] - ks[i]) // st[i] + 1 for i in range(nd)]
    acc = np.full([x_last.shape[0]] + out_sp + [x_last.shape[-1]], fill)
    cnt = np.zeros(out_sp)
    for tap in np.ndindex(*ks):
        sl = tuple(slice(tap[i], tap[i] + (out_sp[i] - 1) * st[i] + 1, st[i]) for i in range(nd))
        v = xp[(slice(None),) + sl + (slice(None),)]
        acc = np.maximum(acc, v) if is_max else acc + v
        cnt += ones[sl]
    return (acc if is_max else acc / cnt[None, ..., None]).astype(np.float32)


def _resize(x, size, a, bilinear):
    n, h, w, c = x.shape
    oh, ow = size
    align, half = a.get("align_corners", False), a.get("half_pixel_centers", False)

    def src(o, i, out):
        scale = (i - 1) / (out - 1) if align and out > 1 else i / out
        return (o + 0.5) * scale - 0.5 if half and bilinear else (o + 0.5) * scale if half else o * scale

    if not bilinear:
        ys = [min(int(np.floor(src(o, h, oh) + 0.5) if align else np.floor(src(o, h, oh))), h - 1) for o in range(oh)]  # roundf: ties away from 0
        xs = [min(int(np.floor(src(o, w, ow) + 0.5) if align else np.floor(src(o, w, ow))), w - 1) for o in range(ow)]
        return x[:, ys][:, :, xs]
    out = np.zeros((n, oh, ow, c), np.float64)
    for oy in range(oh):
        fy = max(src(oy, h, oh), 0.0)
        y0 = min(int(np.floor(fy)), h - 1)
        y1, dy = min(y0 + 1, h - 1), fy - np.floor(fy)
        for ox in range(ow):
            fx = max(src(ox, w, ow), 0.0)
            x0 = min(int(np.floor(fx)), w - 1)
            x1, dx = min(x0 + 1, w - 1), fx - np.floor(fx)
            top = x[:, y0, x0] * (1 - dx) + x[:, y0, x1] * dx
            bot = x[:, y1, x0] * (1 - dx) + x[:, y1, x1] * dx
            out[:, oy, ox] = top * (1 - dy) + bot * dy
    return out.astype(np.float32)


def _strided_slice(x, b, e, s, a):
    bm, em, sm = a.get("begin_mask", 0), a.get("end_mask", 0), a.get("shrink_axis_mask", 0)
    idx = []
    for d in range(len(b)):
        if sm >> d & 1:
            idx.append(int(b[d]))
        else:
            idx.append(slice(None if bm >> d & 1 else int(b[d]), None if em >> d & 1 else int(e[d]), int(s[d])))
    return np.asarray(x[tuple(idx)])


def _softmax(x, log=False):
    m = x - x.max(-1, keepdims=True)
    e = np.exp(m)
    return (m - np.log(e.sum(-1, keepdims=True))) if log else e / e.sum(-1, keepdims=True)


def _eval_node(op, a, ins):
    f32 = np.float32
    binary = {"Add": np.add, "AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.divide, "Maximum": np.maximum,
              "Minimum": np.minimum, "Pow": np.power, "Equal": np.equal, "Less": np.less, "Greater": np.greater,
              "LessEqual": np.less_equal, "GreaterEqual": np.greater_equal, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or}
    unary = {"Relu": lambda x: np.maximum(x, 0), "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh, "Exp": np.exp,
             "Log": np.log, "Sqrt": np.sqrt, "Abs": np.abs, "Neg": np.negative, "Floor": np.floor, "Ceil": np.ceil,
             "Square": np.square, "Rsqrt": lambda x: 1 / np.sqrt(x), "Relu6": lambda x: np.clip(x, 0, 6),
             "Elu": lambda x: np.where(x > 0, x, np.exp(x) - 1), "Reciprocal": lambda x: 1 / x, "LogicalNot": np.logical_not,
             "Softmax": _softmax, "LogSoftmax": lambda x: _softmax(x, True), "Identity": lambda x: x, "StopGradient": lambda x: x,
             "Snapshot": lambda x: x}
    if op in binary:
        r = binary[op](ins[0], ins[1])
        return [r.astype(ins[0].dtype) if r.dtype != np.bool_ else r]
    if op in unary:
        return [np.asarray(unary[op](ins[0])).astype(ins[0].dtype)]
    fmt = a.get("data_format", "NHWC")
    if op == "LeakyRelu":
        return [np.where(ins[0] > 0, ins[0], ins[0] * a.get("alpha", 0.2)).astype(f32)]
    if op == "SquaredDifference":
        return [np.square(ins[0] - ins[1])]
    if op in ("Conv2D", "Conv3D", "DepthwiseConv2dNative"):
        nd = 3 if op == "Conv3D" else 2
        x = _to_last(ins[0], fmt)
        st, dl = _spatial(a["strides"], fmt, nd), _spatial(a.get("dilations", [1] * (nd + 2)), fmt, nd)
        w = ins[1]
        if op == "DepthwiseConv2dNative":
            kh, kw, c, m = w.shape
            w = w.reshape(kh, kw, 1, c * m)
            y = conv_nd(x, w, st, dl, _pads(a, x, w.shape[:2], st, dl), groups=c)
        else:
            y = conv_nd(x, w, st, dl, _pads(a, x, w.shape[:nd], st, dl))
        return [_from_last(y, fmt)]
    if op == "Conv2DBackpropInput":
        sizes, w, dy = ins
        dyl = _to_last(dy, fmt)
        st, dl = _spatial(a["strides"], fmt, 2), _spatial(a.get("dilations", [1] * 4), fmt, 2)
        out_hw = _spatial(list(sizes), fmt, 2)
        k = w.shape[:2]
        n, ih, iw, _ = dyl.shape
        full = [(ih - 1) * st[0] + (k[0] - 1) * dl[0] + 1, (iw - 1) * st[1] + (k[1] - 1) * dl[1] + 1]
        y = np.zeros((n, max(full[0], out_hw[0]) + 8, max(full[1], out_hw[1]) + 8, w.shape[2]))
        for th, tw in np.ndindex(*k):
            y[:, th * dl[0]:th * dl[0] + (ih - 1) * st[0] + 1:st[0], tw * dl[1]:tw * dl[1] + (iw - 1) * st[1] + 1:st[1]] += dyl @ w[th, tw].T
        pads = [_same_pads(out_hw[i], k[i], st[i], dl[i])[0] if a.get("padding") == "SAME" else 0 for i in range(2)]
        y = y[:, pads[0]:pads[0] + out_hw[0], pads[1]:pads[1] + out_hw[1]]
        return [_from_last(y.astype(f32), fmt)]
    if op in ("MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D"):
        nd = 3 if op.endswith("3D") else 2
        return [_from_last(_pool(_to_last(ins[0], fmt), a, nd, op.startswith("Max")), fmt)]
    if op == "BiasAdd":
        b = ins[1] if fmt.startswith("NH") or ins[0].ndim < 3 else ins[1].reshape([-1] + [1] * (ins[0].ndim - 2))
        return [ins[0] + b]
    if op.startswith("FusedBatchNorm"):
        x, sc, of, mean, var = ins
        x = _to_last(x, fmt)
        y = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-4)) * sc + of
        return [_from_last(y.astype(f32), fmt)]
    if op == "MatMul":
        A = ins[0].T if a.get("transpose_a") else ins[0]
        B = ins[1].T if a.get("transpose_b") else ins[1]
        return [(A.astype(np.float64) @ B).astype(f32)]
    if op in ("BatchMatMul", "BatchMatMulV2"):
        A = np.swapaxes(ins[0], -1, -2) if a.get("adj_x") else ins[0]
        B = np.swapaxes(ins[1], -1, -2) if a.get("adj_y") else ins[1]
        return [np.matmul(A.astype(np.float64), B).astype(f32)]
    if op in ("Mean", "Sum", "Max", "Min", "Prod"):
        fn = {"Mean": np.mean, "Sum": np.sum, "Max": np.max, "Min": np.min, "Prod": np.prod}[op]
        axes = tuple(int(v) for v in np.atleast_1d(ins[1]))
        return [fn(ins[0], axis=axes, keepdims=a.get("keep_dims", False)).astype(ins[0].dtype)]
    if op in ("ArgMax", "ArgMin"):
        fn = np.argmax if op == "ArgMax" else np.argmin
        return [fn(ins[0], axis=int(ins[1])).astype(NP[a.get("output_type", 9)])]
    if op == "ConcatV2":
        return [np.concatenate(ins[:-1], axis=int(ins[-1]))]
    if op == "Pack":
        return [np.stack(ins, axis=a.get("axis", 0))]
    if op == "Unpack":
        ax = a.get("axis", 0)
        return [np.take(ins[0], i, axis=ax) for i in range(ins[0].shape[ax])]
    if op == "Split":
        return np.split(ins[1], a["num_split"], axis=int(ins[0]))
    if op == "SplitV":
        cuts = np.cumsum(ins[1])[:-1]
        return np.split(ins[0], cuts, axis=int(ins[2]))
    if op == "Slice":
        b, s = ins[1], ins[2]
        return [ins[0][tuple(slice(int(b[d]), None if s[d] < 0 else int(b[d] + s[d])) for d in range(len(b)))]]
    if op == "StridedSlice":
        return [_strided_slice(ins[0], ins[1], ins[2], ins[3], a)]
    if op == "Reshape":
        return [ins[0].reshape([int(v) for v in ins[1]])]
    if op == "Squeeze":
        dims = a.get("squeeze_dims", [])
        return [np.squeeze(ins[0], axis=tuple(dims) if dims else None)]
    if op == "ExpandDims":
        return [np.expand_dims(ins[0], int(ins[1]))]
    if op == "Transpose":
        return [np.transpose(ins[0], [int(v) for v in ins[1]])]
    if op in ("Pad", "PadV2", "MirrorPad"):
        p = [(int(b), int(e)) for b, e in ins[1]]
        if op == "MirrorPad":
            return [np.pad(ins[0], p, mode="reflect")]
        return [np.pad(ins[0], p, constant_values=ins[2] if op == "PadV2" else 0)]
    if op == "Tile":
        return [np.tile(ins[0], [int(v) for v in ins[1]])]
    if op == "GatherV2":
        return [np.take(ins[0], ins[1], axis=int(ins[2]))]
    if op == "Cast":
        return [ins[0].astype(NP[a["DstT"]])]
    if op in ("ResizeBilinear", "ResizeNearestNeighbor"):
        return [_resize(ins[0], [int(v) for v in ins[1]], a, op == "ResizeBilinear")]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "OneHot":
        idx, depth, on, off = ins
        return [np.where(np.arange(int(depth)) == idx[..., None], on, off).astype(on.dtype)]
    if op in ("Select", "SelectV2"):
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Shape":
        return [np.array(ins[0].shape, NP[a.get("out_type", 3)])]
    if op == "Size":
        return [np.array(ins[0].size, NP[a.get("out_type", 3)])]
    if op == "Rank":
        return [np.array(ins[0].ndim, np.int32)]
    if op == "Fill":
        return [np.full([int(v) for v in ins[0]], ins[1])]
    if op == "AddN":
        return [sum(ins[1:], ins[0])]
    if op in ("ZerosLike", "OnesLike"):
        return [(np.zeros_like if op == "ZerosLike" else np.ones_like)(ins[0])]
    if op == "FloorDiv":
        return [np.floor_divide(ins[0], ins[1])]
    if op == "FloorMod":
        return [np.mod(ins[0], ins[1])]
    if op == "ClipByValue":
        return [np.minimum(np.maximum(ins[0], ins[1]), ins[2])]
    if op == "Selu":
        x = ins[0].astype(np.float64)
        return [(1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))).astype(f32)]
    if op == "Softsign":
        return [ins[0] / (1 + np.abs(ins[0]))]
    if op in ("SpaceToDepth", "DepthToSpace"):
        x, bs = ins[0], a.get("block_size", 2)
        n, h, w, c = x.shape
        if op == "SpaceToDepth":
            return [x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // bs, w // bs, bs * bs * c)]
        return [x.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * bs, w * bs, c // (bs * bs))]
    if op == "LRN":
        x, r = ins[0].astype(np.float64), a.get("depth_radius", 5)
        sq = np.pad(x * x, [(0, 0)] * 3 + [(r, r)])
        s = sum(sq[..., i:i + x.shape[-1]] for i in range(2 * r + 1))
        return [(x / (a.get("bias", 1.0) + a.get("alpha", 1.0) * s) ** a.get("beta", 0.5)).astype(f32)]
    if op == "Einsum":
        return [np.einsum(a["equation"], *ins).astype(f32)]
    if op == "SpaceToBatchND":
        x, (bh, bw), p = ins[0], [int(v) for v in ins[1]], [[int(v) for v in r] for r in ins[2]]
        x = np.pad(x, [(0, 0), tuple(p[0]), tuple(p[1]), (0, 0)])
        n, h, w, c = x.shape
        return [x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5).reshape(bh * bw * n, h // bh, w // bw, c)]
    if op == "BatchToSpaceND":
        x, (bh, bw), cr = ins[0], [int(v) for v in ins[1]], [[int(v) for v in r] for r in ins[2]]
        nb, h, w, c = x.shape
        n = nb // (bh * bw)
        y = x.reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
        return [y[:, cr[0][0]:h * bh - cr[0][1], cr[1][0]:w * bw - cr[1][1]]]
    if op == "Gather":
        return [np.take(ins[0], ins[1], axis=0)]
    if op == "TopKV2":
        k = int(ins[1])
        idx = np.argsort(-ins[0], axis=-1, kind="stable")[..., :k]
        return [np.take_along_axis(ins[0], idx, -1), idx.astype(np.int32)]
    raise NotImplementedError(op)


def evaluate(graph, feeds, fetch):
    """Runs GraphDef `graph` on `feeds` ({placeholder: array}); returns the arrays of `fetch` (["node" or "node:k"])."""
    nodes = {n.name.decode(): n for n in graph.node}
    cache = {}

    def value(ref):
        name, _, k = ref.partition(":")
        k = int(k) if k else 0
        if name not in cache:
            n = nodes[name]
            op = n.op.decode()
            a = _attrs(n)
            if op == "Placeholder":
                cache[name] = [feeds[name]]
            elif op == "Const":
                cache[name] = [a["value"]]
            elif op == "RandomUniform":  # the dropout mask of the corpora's RNNs: keep_prob = 1 makes it moot
                shape = [int(v) for v in value(n.input[0].decode())]
                cache[name] = [np.full(shape, 0.5, np.float32)]
            else:
                ins = [value(i.decode()) for i in n.input if not i.startswith(b"^")]
                cache[name] = _eval_node(op, a, ins)
        return cache[name][k]

    return [value(f) for f in fetch]
