# Distributed patterns the official tool handles: a DataParallel in the statement making the model, a checkpoint
# loaded into it, a hard-coded first card, a loader made by a helper and iterated in the epoch loop.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_npu
import os
DEVICE_ID = 0
if os.getenv('DEVICE_ID') and str.isdigit(os.getenv('DEVICE_ID')):
    DEVICE_ID = int(os.getenv('DEVICE_ID'))
torch_npu.npu.set_device(f'npu:{DEVICE_ID}')
import torch.distributed
RANK_SIZE = int(os.getenv('RANK_SIZE', '1'))
RANK_ID = int(os.getenv('RANK_ID', '0'))
if RANK_SIZE > 1 and not torch.distributed.is_initialized():
    torch.distributed.init_process_group('hccl', rank=RANK_ID, world_size=RANK_SIZE)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def make_loader(batch):
    train_set = TensorDataset(torch.zeros(8, 4), torch.zeros(8, dtype=torch.long))
    train_loader = DataLoader(train_set, batch_size=batch, shuffle=False, drop_last=True, sampler=torch.utils.data.distributed.DistributedSampler(train_set))
    return train_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--resume', default='')
    args = parser.parse_args()
    device = f'npu:{DEVICE_ID}'
    model = Net().npu()
    model = model.npu()
    if torch.distributed.is_initialized() and not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[DEVICE_ID], broadcast_buffers=False)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        (model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model).load_state_dict(checkpoint['state_dict'])
    loader = make_loader(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        if isinstance(loader.sampler, torch.utils.data.distributed.DistributedSampler):
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    main()
