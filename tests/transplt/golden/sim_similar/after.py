import torch
import apex
from torch.nn.parallel import DistributedDataParallel as DDP
from apex.optimizers import NpuFusedAdam
import torch_npu


def wrap(model):
    opt = NpuFusedAdam(model.parameters(), lr=1e-3)
    opt2 = apex.optimizers.NpuFusedSGD(model.parameters(), lr=0.1)
    opt3 = apex.optimizers.NpuFusedLamb(model.parameters())
    return DDP(model), opt, opt2, opt3, torch.nn.parallel.DistributedDataParallel(model)
