import torch
import torch_npu


def place(args, rank):
    device = torch.device("npu" if torch_npu.npu.is_available() else "cpu")
    d0 = torch.device("npu:0")
    t = torch.tensor([1, 2, 3], dtype=torch.long, device='npu')
    t = t.to("npu")
    loc = 'npu:{}'.format(args.gpu)
    loc2 = f'npu:{rank}'
    loc3 = "npu:%d" % rank
    if args.device_type == 'npu':
        pass
    # cuda in a comment stays; so do these strings:
    note = "running on cuda"
    env = "CUDA_VISIBLE_DEVICES"
    raw = b'cuda'
    path = 'cuda_kernels/cuda'
    return device, d0, t, loc, loc2, loc3, note, env, raw, path
