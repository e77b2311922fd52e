# Distributed patterns the official tool handles: a DataParallel in the statement making the model, a checkpoint
# loaded into it, a hard-coded first card, a loader made by a helper and iterated in the epoch loop.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def make_loader(batch):
    train_set = TensorDataset(torch.zeros(8, 4), torch.zeros(8, dtype=torch.long))
    train_loader = DataLoader(train_set, batch_size=batch, shuffle=True)
    return train_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--resume', default='')
    args = parser.parse_args()
    device = 'cuda:0'
    model = nn.DataParallel(Net()).cuda()
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint['state_dict'])
    loader = make_loader(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    main()
