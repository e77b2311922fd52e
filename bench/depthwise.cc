// The depthwise convolutions of MobileNet v2, MnasNet, EfficientNet, ShuffleNet and ConvNeXt (224x224 inputs), each
// run as RunDnnlConv runs it in a net (channels-last in and out, bias, the task's state kept) and timed in
// interleaved rounds on oneDNN's kernel (NPUKIT_DEPTHWISE=0) and on npukit's own (conv_depthwise_avx512.h, AVX-512
// hosts; elsewhere both are oneDNN's and the ratio is 1 within the noise): in fp32, and with the fp16 rounding
// offered as the runtime offers it with force_fp16 (oneDNN's kernel then rounds in a pass after the primitive, ours
// in its registers). Prints per layer oneDNN's median time and ours as a ratio to it. The buffers are hot: in a net
// the input was just written by the conv before it (docs/performance.md has both measurements).
// usage: depthwise [ROUNDS]   (NPUKIT_NUM_THREADS: the pool's size)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/thread_pool.h"
#include "kernel_timing.h"
#include "kernels/numerics.h"
#include "kernels/registry.h"
#include "ops/schemas.h"

namespace {

using npu::bench::Median;
using npu::bench::RandomTensor;

struct Layer {
  const char* net;
  int64_t C, H, K, stride;  // a square H x H map, a K x K kernel padded by K / 2
};

// Milliseconds per run of the conv, median of `runs`, on oneDNN's kernel or ours, with the fp16 rounding offered or not
// (where the kernel does not take it, the runtime's pass after it is timed too).
double Time(const npu::Node& node, const std::vector<npu::Tensor>& ins, bool ours, bool half, int runs, npu::ThreadPool& pool) {
  if (ours) unsetenv("NPUKIT_DEPTHWISE");
  else setenv("NPUKIT_DEPTHWISE", "0", 1);
  npu::KernelRunOptions options;
  bool rounded = false;
  if (half) {
    options.round_output_to = npu::DType::kF16;
    options.output_rounded = &rounded;
  }
  return npu::bench::MedianKernelMs(node, ins, options, runs, pool, [&](std::vector<npu::Tensor>& out) {
    if (half && !rounded) out[0] = npu::RoundToDTypeValues(std::move(out[0]), npu::DType::kF16, npu::ExecContext{}, nullptr);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = npu::bench::RoundsArg(argc, argv);
  npu::RegisterBuiltinOps();
  npu::ThreadPool& pool = npu::ThreadPool::Global();
  const std::vector<Layer> layers = {
      {"mobilenet_v2", 32, 112, 3, 1},  {"mobilenet_v2", 96, 112, 3, 2},  {"mobilenet_v2", 144, 56, 3, 1}, {"mobilenet_v2", 192, 28, 3, 1},
      {"mobilenet_v2", 384, 14, 3, 1},  {"mobilenet_v2", 576, 14, 3, 2},  {"mobilenet_v2", 960, 7, 3, 1},  {"mnasnet1_0", 48, 112, 3, 2},
      {"mnasnet1_0", 72, 56, 5, 2},     {"mnasnet1_0", 120, 28, 5, 1},    {"mnasnet1_0", 480, 14, 5, 1},   {"mnasnet1_0", 1152, 7, 5, 1},
      {"efficientnet_b0", 144, 56, 5, 2}, {"efficientnet_b0", 240, 28, 3, 2}, {"efficientnet_b0", 672, 14, 5, 1},
      {"shufflenet_v2", 58, 28, 3, 1},  {"shufflenet_v2", 116, 14, 3, 1}, {"shufflenet_v2", 232, 7, 3, 1}, {"convnext_tiny", 96, 56, 7, 1},
      {"convnext_tiny", 384, 14, 7, 1},
  };
  std::printf("%d threads, median of %d rounds; npukit's kernel's time as a ratio to oneDNN's\n%-16s %5s %4s %2s %2s %10s %6s %10s %6s\n",
              pool.size(), rounds, "net", "C", "H", "K", "S", "fp32 ms", "ours", "fp16 ms", "ours");
  unsigned seed = 1;
  for (const Layer& l : layers) {
    npu::Tensor x = RandomTensor({1, l.C, l.H, l.H}, seed++), w = RandomTensor({l.C, 1, l.K, l.K}, seed++), b = RandomTensor({l.C}, seed++);
    x.channels_last = true;  // as the nets hand it over; the values' order does not matter here
    npu::Node node;
    node.name = "depthwise";
    node.op_type = "Conv";
    node.opset = 13;
    node.attrs["group"] = l.C;
    node.attrs["pads"] = std::vector<int64_t>(4, l.K / 2);
    node.attrs["strides"] = std::vector<int64_t>{l.stride, l.stride};
    node.inputs = {0, 1, 2};
    node.outputs = {0};
    std::vector<double> ms[2][2];  // [half][ours]
    for (int r = 0; r < rounds; ++r)
      for (int half = 0; half < 2; ++half)
        for (int ours = 0; ours < 2; ++ours) ms[half][ours].push_back(Time(node, {x, w, b}, ours, half, 20, pool));
    const double f32 = Median(ms[0][0]), f16 = Median(ms[1][0]);
    std::printf("%-16s %5lld %4lld %2lld %2lld %10.4f %6.2f %10.4f %6.2f\n", l.net, static_cast<long long>(l.C), static_cast<long long>(l.H),
                static_cast<long long>(l.K), static_cast<long long>(l.stride), f32, Median(ms[0][1]) / f32, f16, Median(ms[1][1]) / f16);
  }
}
