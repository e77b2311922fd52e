import torch
import apex
from apex.parallel import DistributedDataParallel as DDP
from apex.optimizers import FusedAdam


def wrap(model):
    opt = FusedAdam(model.parameters(), lr=1e-3)
    opt2 = apex.optimizers.FusedSGD(model.parameters(), lr=0.1)
    opt3 = apex.optimizers.FusedLAMB(model.parameters())
    return DDP(model), opt, opt2, opt3, apex.parallel.DistributedDataParallel(model)
