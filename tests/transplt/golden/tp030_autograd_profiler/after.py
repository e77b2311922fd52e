import torch
from torch.autograd import profiler
import torch_npu


def measure(model, x):
    with torch.autograd.profiler.profile(use_npu=True, record_shapes=True) as prof:
        model(x)
    with profiler.profile(use_npu=True):
        model(x)
    return prof.key_averages().table(sort_by="cuda_time_total")
