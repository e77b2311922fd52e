import argparse
import os
import time

import torch
import torch.nn as nn
import torch.distributed as dist
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torch_npu

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', default=None, type=int)
parser.add_argument('--dist-backend', default='hccl', type=str)


def main_worker(gpu, args):
    args.gpu = gpu
    if args.distributed:
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    if args.pretrained:
        model = models.__dict__[args.arch](pretrained=True)
    else:
        model = models.__dict__[args.arch]()
    if args.gpu is not None:
        torch_npu.npu.set_device(args.gpu)
        model = model.npu(args.gpu)
    else:
        model = torch.nn.DataParallel(model).npu()
    criterion = nn.CrossEntropyLoss().npu(args.gpu)
    train_dataset = datasets.ImageFolder(args.train_dir)
    train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(args.val_dir), batch_size=args.batch_size, shuffle=False)
    for epoch in range(args.start_epoch, args.epochs):
        # train for one epoch
        train(train_loader, model, criterion, epoch, args)
        if args.gpu is not None:
            loc = 'npu:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)


def train(train_loader, model, criterion, epoch, args):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        if args.gpu is not None:
            images = images.npu(args.gpu, non_blocking=True)
        target = target.npu(args.gpu, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)


if __name__ == '__main__':
    main_worker(0, parser.parse_args())
