import torch
import torch.nn as nn
import torch.distributed as dist
import cupy as cp
import pycuda.autoinit
from numba import cuda as nb_cuda
import amp_C
from torch.utils.cpp_extension import load, load_inline, CUDAExtension
from apex.parallel import DistributedDataParallel as ApexDDP
from apex.optimizers import FusedAdam, FusedSGD, FusedLAMB
import torch_npu


def everything(model, x, ts):
    model = nn.DataParallel(model)
    model = torch.nn.parallel.DataParallel(model)
    y = torch.nn.parallel.data_parallel(model, x)
    torch.cuda.nvtx.range_push("step")
    cap = torch.cuda.get_device_capability()
    parts = torch.cuda.comm.scatter(x, [0, 1])
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        pass
    fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x; }")
    with torch.backends.cuda.sdp_kernel(enable_flash=False):
        pass
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    with torch.autograd.profiler.emit_nvtx():
        pass
    trace = torch.autograd.profiler.load_nvprof("trace.nvvp")
    dist.all_reduce_multigpu(ts)
    dist.all_gather_multigpu([ts], ts)
    dist.broadcast_multigpu(ts, 0)
    bn = nn.SyncBatchNorm(64)
    a = cp.zeros(3)
    ext = load(name="ext", sources=["ext.cu"])
    ext2 = load_inline(name="ext2", cpp_sources="", cuda_sources="")
    e3 = CUDAExtension("ext3", ["ext3.cu"])
    m = ApexDDP(model)
    opts = FusedAdam(model.parameters()), FusedSGD(model.parameters(), lr=0.1), FusedLAMB(model.parameters())
    return y, cap, parts, fn, trace, bn, a, ext, ext2, e3, m, opts, nb_cuda, amp_C
