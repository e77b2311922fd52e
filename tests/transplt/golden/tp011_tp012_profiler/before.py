import torch
import torch.profiler
from torch.profiler import ProfilerActivity, profile as prof_ctx


def run(step):
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
            on_trace_ready=torch.profiler.tensorboard_trace_handler('./log')) as p:
        step()
        p.step()
    with prof_ctx(activities=[ProfilerActivity.CUDA]):
        step()
