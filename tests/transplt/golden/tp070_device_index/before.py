# A device reached through a variable: an int there is a CUDA device index (rule TP070).
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', type=int, default=0)
args = parser.parse_args()
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')  # provably a device: left alone
dev_name = 'cuda:{}'.format(args.gpu)                                   # provably a string: left alone
cfg = {'device': 0}


def train(model, x, gpu_id, local_rank, get_device):
    model.to(args.device)                         # argparse may give an int
    x = x.to(gpu_id, non_blocking=True)
    y = x.to(device)
    z = x.to(dev_name)
    w = x.to(torch.float16)                       # a dtype
    v = x.to(y.dtype)
    d = torch.device(local_rank)
    t = torch.zeros(3, device=local_rank)
    e = x.new_zeros(3, device=gpu_id)
    s = torch.load('ckpt.pth', map_location=args.gpu)
    u = x.to(get_device())                        # a call: its side effects must not run twice
    k = x.cuda(args.gpu)                          # .npu(int) takes an index itself
    q = x.to(cfg['device'])
    return model, x, y, z, w, v, d, t, e, s, u, k, q
