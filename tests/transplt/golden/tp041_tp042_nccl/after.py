import torch.distributed as dist
import torch_npu


def setup(rank, world, backend='hccl'):
    dist.init_process_group('hccl', rank=rank, world_size=world)
    env = {"HCCL": 1}
    if backend == 'hccl':
        print("using nccl")
