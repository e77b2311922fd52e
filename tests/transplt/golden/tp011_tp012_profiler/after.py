import torch
import torch.profiler
from torch_npu.profiler import ProfilerActivity, profile as prof_ctx
import torch_npu


def run(step):
    with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
            schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2),
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler('./log')) as p:
        step()
        p.step()
    with prof_ctx(activities=[ProfilerActivity.NPU]):
        step()
