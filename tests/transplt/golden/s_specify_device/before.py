import os
import torch


def main(args):
    torch.cuda.set_device(args.gpu)
    torch.cuda.set_device(args.local_rank)
    model = build().cuda(args.gpu)
    device = torch.device('cuda', args.gpu)
    x = torch.zeros(3, device="cuda:0")
    ckpt = torch.load(args.resume, map_location='cuda:0')
    return model, device, x, ckpt
