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
DEVICE_ID = 0
if os.getenv('DEVICE_ID') and str.isdigit(os.getenv('DEVICE_ID')):
    DEVICE_ID = int(os.getenv('DEVICE_ID'))
torch_npu.npu.set_device(f'npu:{DEVICE_ID}')
import torch.distributed
RANK_SIZE = int(os.getenv('RANK_SIZE', '1'))
RANK_ID = int(os.getenv('RANK_ID', '0'))
if RANK_SIZE > 1 and not torch.distributed.is_initialized():
    torch.distributed.init_process_group('hccl', rank=RANK_ID, world_size=RANK_SIZE)

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
        model = model.npu()
        if torch.distributed.is_initialized() and not isinstance(model, torch.nn.parallel.DistributedDataParallel):
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[DEVICE_ID], broadcast_buffers=False)
    else:
        model = models.__dict__[args.arch]()
        model = model.npu()
        if torch.distributed.is_initialized() and not isinstance(model, torch.nn.parallel.DistributedDataParallel):
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[DEVICE_ID], broadcast_buffers=False)
    if args.gpu is not None:
        torch_npu.npu.set_device(f'npu:{DEVICE_ID}')
        model = model.npu()
    else:
        pass
    criterion = nn.CrossEntropyLoss().npu()
    train_dataset = datasets.ImageFolder(args.train_dir)
    train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True, drop_last=True, sampler=torch.utils.data.distributed.DistributedSampler(train_dataset))
    val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(args.val_dir), batch_size=args.batch_size, shuffle=False)
    for epoch in range(args.start_epoch, args.epochs):
        # train for one epoch
        train_loader.sampler.set_epoch(epoch)
        train(train_loader, model, criterion, epoch, args)
        if args.gpu is not None:
            loc = 'npu:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)


def train(train_loader, model, criterion, epoch, args):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        if args.gpu is not None:
            images = images.npu(non_blocking=True)
        target = target.npu(non_blocking=True)
        output = model(images)
        loss = criterion(output, target)


if __name__ == '__main__':
    main_worker(0, parser.parse_args())
