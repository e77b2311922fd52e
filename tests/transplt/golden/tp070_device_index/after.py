# A device reached through a variable: an int there is a CUDA device index (rule TP070).
import argparse

import torch
import torch_npu

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', type=int, default=0)
args = parser.parse_args()
device = torch.device('npu' if torch_npu.npu.is_available() else 'cpu')  # provably a device: left alone
dev_name = 'npu:{}'.format(args.gpu)                                   # provably a string: left alone
cfg = {'device': 0}


def train(model, x, gpu_id, local_rank, get_device):
    model.to(f'npu:{args.device}' if isinstance(args.device, int) else args.device)                         # argparse may give an int
    x = x.to(f'npu:{gpu_id}' if isinstance(gpu_id, int) else gpu_id, non_blocking=True)
    y = x.to(device)
    z = x.to(dev_name)
    w = x.to(torch.float16)                       # a dtype
    v = x.to(y.dtype)
    d = torch.device(f'npu:{local_rank}' if isinstance(local_rank, int) else local_rank)
    t = torch.zeros(3, device=f'npu:{local_rank}' if isinstance(local_rank, int) else local_rank)
    e = x.new_zeros(3, device=f'npu:{gpu_id}' if isinstance(gpu_id, int) else gpu_id)
    s = torch.load('ckpt.pth', map_location=f'npu:{args.gpu}' if isinstance(args.gpu, int) else args.gpu)
    u = x.to(get_device())                        # a call: its side effects must not run twice
    k = x.npu(args.gpu)                          # .npu(int) takes an index itself
    q = x.to(f"npu:{cfg['device']}" if isinstance(cfg['device'], int) else cfg['device'])
    return model, x, y, z, w, v, d, t, e, s, u, k, q
