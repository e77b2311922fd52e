# The porting guide's device and tensor-creation tables, reached through every import style.
import torch
import torch.npu as tc
from torch import npu
from torch.npu import amp
from torch_npu.npu.amp import autocast, GradScaler
import torch_npu

CD = torch.npu


def device_table(device):
    ok = torch_npu.npu.is_available()
    cur = torch_npu.npu.current_device()
    n = torch_npu.npu.device_count()
    torch_npu.npu.set_device(device)
    torch_npu.npu.synchronize()
    with torch_npu.npu.device(0):
        pass
    s = torch_npu.npu.Stream(device)
    with torch_npu.npu.stream(s):
        pass
    a = torch_npu.npu.current_stream()
    b = torch_npu.npu.default_stream()
    ev = torch_npu.npu.Event()
    return ok, cur, n, a, b, ev


def tensor_table():
    return [torch.npu.BoolTensor([1, 2, 3]), torch.npu.FloatTensor([1, 2, 3]), torch.npu.IntTensor([1, 2, 3]),
            torch.npu.LongTensor([1, 2, 3]), torch.npu.HalfTensor([1, 2, 3])]


def memory_family():
    torch_npu.npu.empty_cache()
    used = torch_npu.npu.memory_allocated() + torch_npu.npu.max_memory_allocated()
    torch.npu.reset_peak_memory_stats()
    return used, torch_npu.npu.memory_reserved(), torch_npu.npu.memory_summary()


def aliases():
    torch_npu.npu.synchronize()
    torch_npu.npu.empty_cache()
    n = torch_npu.npu.device_count()
    with autocast():
        pass
    scaler = GradScaler()
    scaler2 = torch_npu.npu.amp.GradScaler(init_scale=2.0 ** 16)
    with torch_npu.npu.amp.autocast(enabled=True):
        pass
    return n, scaler, scaler2
