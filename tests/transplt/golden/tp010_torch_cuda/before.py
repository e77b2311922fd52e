# The porting guide's device and tensor-creation tables, reached through every import style.
import torch
import torch.cuda as tc
from torch import cuda
from torch.cuda import amp
from torch.cuda.amp import autocast, GradScaler

CD = torch.cuda


def device_table(device):
    ok = torch.cuda.is_available()
    cur = torch.cuda.current_device()
    n = torch.cuda.device_count()
    torch.cuda.set_device(device)
    torch.cuda.synchronize()
    with torch.cuda.device(0):
        pass
    s = torch.cuda.Stream(device)
    with torch.cuda.stream(s):
        pass
    a = torch.cuda.current_stream()
    b = torch.cuda.default_stream()
    ev = torch.cuda.Event()
    return ok, cur, n, a, b, ev


def tensor_table():
    return [torch.cuda.BoolTensor([1, 2, 3]), torch.cuda.FloatTensor([1, 2, 3]), torch.cuda.IntTensor([1, 2, 3]),
            torch.cuda.LongTensor([1, 2, 3]), torch.cuda.HalfTensor([1, 2, 3])]


def memory_family():
    torch.cuda.empty_cache()
    used = torch.cuda.memory_allocated() + torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    return used, torch.cuda.memory_reserved(), torch.cuda.memory_summary()


def aliases():
    tc.synchronize()
    CD.empty_cache()
    n = cuda.device_count()
    with autocast():
        pass
    scaler = GradScaler()
    scaler2 = amp.GradScaler(init_scale=2.0 ** 16)
    with torch.cuda.amp.autocast(enabled=True):
        pass
    return n, scaler, scaler2
