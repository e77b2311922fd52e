import torch.distributed as dist


def setup(rank, world, backend='nccl'):
    dist.init_process_group('nccl', rank=rank, world_size=world)
    env = {"NCCL": 1}
    if backend == 'nccl':
        print("using nccl")
