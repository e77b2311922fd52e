import os
import torch
import torch_npu
DEVICE_ID = 0
if os.getenv('DEVICE_ID') and str.isdigit(os.getenv('DEVICE_ID')):
    DEVICE_ID = int(os.getenv('DEVICE_ID'))
torch_npu.npu.set_device(f'npu:{DEVICE_ID}')


def main(args):
    torch_npu.npu.set_device(f'npu:{DEVICE_ID}')
    torch_npu.npu.set_device(args.local_rank)
    model = build().npu()
    device = torch.device(f'npu:{DEVICE_ID}')
    x = torch.zeros(3, device=f"npu:{DEVICE_ID}")
    ckpt = torch.load(args.resume, map_location=f'npu:{DEVICE_ID}')
    return model, device, x, ckpt
