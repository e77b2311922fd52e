import torch
import torch_npu


class Trainer:
    def __init__(self, args, model):
        self.cuda = args.cuda            # a flag, not a call: untouched
        self.model = model.npu()
        self.cuda_enabled = torch_npu.npu.is_available()

    def step(self, x, y, gpu):
        x = x.npu(non_blocking=True)
        y = y.npu(gpu, non_blocking=True)
        z = (x + y).npu().half()
        if z.is_npu and not y.is_npu:
            return z
        return self.model(x).npu()
