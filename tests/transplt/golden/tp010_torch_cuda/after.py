# The porting guide's device and tensor-creation tables, reached through every import style.
import torch_npu
import torch
import torch.npu as tc
from torch import npu
from torch.npu import amp
from torch.npu.amp import autocast, GradScaler

CD = torch.npu


def device_table(device):
    ok = torch.npu.is_available()
    cur = torch.npu.current_device()
    n = torch.npu.device_count()
    torch.npu.set_device(device)
    torch.npu.synchronize()
    with torch.npu.device(0):
        pass
    s = torch.npu.Stream(device)
    with torch.npu.stream(s):
        pass
    a = torch.npu.current_stream()
    b = torch.npu.default_stream()
    ev = torch.npu.Event()
    return ok, cur, n, a, b, ev


def tensor_table():
    return [torch.npu.BoolTensor([1, 2, 3]), torch.npu.FloatTensor([1, 2, 3]), torch.npu.IntTensor([1, 2, 3]),
            torch.npu.LongTensor([1, 2, 3]), torch.npu.HalfTensor([1, 2, 3])]


def memory_family():
    torch.npu.empty_cache()
    used = torch.npu.memory_allocated() + torch.npu.max_memory_allocated()
    torch.npu.reset_peak_memory_stats()
    return used, torch.npu.memory_reserved(), torch.npu.memory_summary()


def aliases():
    tc.synchronize()
    CD.empty_cache()
    n = npu.device_count()
    with autocast():
        pass
    scaler = GradScaler()
    scaler2 = amp.GradScaler(init_scale=2.0 ** 16)
    with torch.npu.amp.autocast(enabled=True):
        pass
    return n, scaler, scaler2
