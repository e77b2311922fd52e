import torch_npu
import torch.distributed as dist


def setup(rank, world, backend='hccl'):
    dist.init_process_group('hccl', rank=rank, world_size=world)
    env = {"HCCL": 1}
    if backend == 'hccl':
        print("using nccl")
