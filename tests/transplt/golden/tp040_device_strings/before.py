import torch


def place(args, rank):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d0 = torch.device("cuda:0")
    t = torch.tensor([1, 2, 3], dtype=torch.long, device='cuda')
    t = t.to("cuda")
    loc = 'cuda:{}'.format(args.gpu)
    loc2 = f'cuda:{rank}'
    loc3 = "cuda:%d" % rank
    if args.device_type == 'cuda':
        pass
    # cuda in a comment stays; so do these strings:
    note = "running on cuda"
    env = "CUDA_VISIBLE_DEVICES"
    raw = b'cuda'
    path = 'cuda_kernels/cuda'
    return device, d0, t, loc, loc2, loc3, note, env, raw, path
