import torch


class Trainer:
    def __init__(self, args, model):
        self.cuda = args.cuda            # a flag, not a call: untouched
        self.model = model.cuda()
        self.cuda_enabled = torch.cuda.is_available()

    def step(self, x, y, gpu):
        x = x.cuda(non_blocking=True)
        y = y.cuda(gpu, non_blocking=True)
        z = (x + y).cuda().half()
        if z.is_cuda and not y.is_cuda:
            return z
        return self.model(x).cuda()
