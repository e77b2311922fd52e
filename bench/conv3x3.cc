// The 3x3 stride-1 convolutions of the zoo's nets (googlenet, densenet121, squeezenet1_1, inception_v3, resnet50)
// and inception_v3's 1x7, 7x1, 1x3 and 3x1 ones (on 12x12 maps from a 224x224 input, 17x17 and 8x8 from 299x299),
// each run as RunDnnlConv runs it in a net (channels-last in and out, bias, the task's state kept) and timed with
// each NPUKIT_WINOGRAD setting in interleaved rounds: 0 (oneDNN's direct kernel), unset (the default choice:
// npukit's AVX2 kernel, conv_winograd_avx2.h, or oneDNN's Winograd on AVX-512 hosts, where they pay), and npukit's
// kernel forced to its 4x4 and 2x2 tilings (AVX2 hosts). Prints per layer the direct kernel's median and the others'
// medians as ratios to it (1.00, within the noise, where the setting leaves the layer direct): the measurements
// behind Avx2WinogradTiling.
// usage: conv3x3 [ROUNDS]   (NPUKIT_NUM_THREADS: the pool's size)
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/thread_pool.h"
#include "kernel_timing.h"
#include "kernels/registry.h"
#include "ops/schemas.h"

namespace {

using npu::bench::Median;
using npu::bench::RandomTensor;

struct Layer {
  const char* net;
  int64_t C, M, H, W, pad, N = 1, KH = 3, KW = 3;  // pad: on each side of a 3x3 kernel (1x7, 7x1: half the kernel)
};

// Milliseconds per run of the conv, median of `runs`, with `setting` as NPUKIT_WINOGRAD (null: unset) when built.
double Time(const npu::Node& node, const std::vector<npu::Tensor>& ins, const char* setting, int runs, npu::ThreadPool& pool) {
  if (setting) setenv("NPUKIT_WINOGRAD", setting, 1);
  else unsetenv("NPUKIT_WINOGRAD");
  return npu::bench::MedianKernelMs(node, ins, {}, runs, pool);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = npu::bench::RoundsArg(argc, argv);
  npu::RegisterBuiltinOps();
  npu::ThreadPool& pool = npu::ThreadPool::Global();
  const std::vector<Layer> layers = {
      {"googlenet", 64, 192, 56, 56, 1},   {"googlenet", 128, 192, 28, 28, 1}, {"googlenet", 96, 128, 28, 28, 1},
      {"googlenet", 32, 96, 28, 28, 1},    {"googlenet", 160, 320, 14, 14, 1}, {"googlenet", 144, 288, 14, 14, 1},
      {"googlenet", 128, 256, 14, 14, 1},  {"googlenet", 112, 224, 14, 14, 1}, {"googlenet", 96, 208, 14, 14, 1},
      {"googlenet", 192, 384, 7, 7, 1},    {"googlenet", 160, 320, 7, 7, 1},   {"densenet121", 128, 32, 56, 56, 1},
      {"densenet121", 128, 32, 28, 28, 1}, {"densenet121", 128, 32, 14, 14, 1}, {"densenet121", 128, 32, 7, 7, 1},
      {"squeezenet1_1", 16, 64, 55, 55, 1}, {"squeezenet1_1", 32, 128, 27, 27, 1}, {"squeezenet1_1", 48, 192, 13, 13, 1},
      {"squeezenet1_1", 64, 256, 13, 13, 1}, {"inception_v3", 32, 32, 111, 111, 0}, {"inception_v3", 32, 64, 109, 109, 1},
      {"inception_v3", 80, 192, 54, 54, 0}, {"inception_v3", 64, 96, 25, 25, 1}, {"inception_v3", 96, 96, 25, 25, 1},
      {"inception_v3", 448, 384, 5, 5, 1}, {"resnet50", 64, 64, 56, 56, 1},    {"resnet50", 128, 128, 28, 28, 1},
      {"resnet50", 256, 256, 14, 14, 1},   {"resnet50", 512, 512, 7, 7, 1},      {"googlenet", 16, 32, 28, 28, 1},
      {"googlenet", 24, 64, 14, 14, 1},    {"googlenet", 32, 128, 14, 14, 1},  {"googlenet", 16, 48, 14, 14, 1},
      {"resnet50 b4", 512, 512, 7, 7, 1, 4}, {"googlenet b4", 192, 384, 7, 7, 1, 4}, {"densenet b8", 128, 32, 7, 7, 1, 8},
      {"resnet50 b8", 64, 64, 56, 56, 1, 8},
      {"inception 1x7", 192, 192, 12, 12, 0, 1, 1, 7}, {"inception 7x1", 192, 192, 12, 12, 0, 1, 7, 1},
      {"inception 1x7", 128, 128, 12, 12, 0, 1, 1, 7}, {"inception 7x1", 160, 192, 12, 12, 0, 1, 7, 1},
      {"inception 1x7", 192, 192, 17, 17, 0, 1, 1, 7}, {"inception 7x1", 128, 128, 17, 17, 0, 1, 7, 1},
      {"inception 1x3", 384, 384, 8, 8, 0, 1, 1, 3},   {"inception 3x1", 384, 384, 8, 8, 0, 1, 3, 1},
      {"inception", 448, 384, 8, 8, 1},
  };
  // The settings timed: the direct kernel, the default choice, and npukit's AVX2 kernel forced to each tiling.
  const std::vector<const char*> settings = {"0", nullptr, "4x4", "2x2"};
  std::printf("%d threads, median of %d rounds; ratios against the direct kernel\n%-14s %3s %5s %5s %4s %4s %10s %8s %8s %8s\n", pool.size(),
              rounds, "net", "N", "C", "M", "H", "W", "direct ms", "default", "4x4", "2x2");
  unsigned seed = 1;
  for (const Layer& l : layers) {
    npu::Tensor x = RandomTensor({l.N, l.C, l.H, l.W}, seed++), w = RandomTensor({l.M, l.C, l.KH, l.KW}, seed++), b = RandomTensor({l.M}, seed++);
    x.channels_last = true;  // as the nets hand it over; the values' order does not matter here
    npu::Node node;
    node.name = "conv";
    node.op_type = "Conv";
    node.opset = 13;
    const int64_t ph = l.KH == l.KW ? l.pad : l.KH / 2, pw = l.KH == l.KW ? l.pad : l.KW / 2;
    node.attrs["pads"] = std::vector<int64_t>{ph, pw, ph, pw};
    node.inputs = {0, 1, 2};
    node.outputs = {0};
    std::vector<std::vector<double>> ms(settings.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t k = 0; k < settings.size(); ++k) ms[k].push_back(Time(node, {x, w, b}, settings[k], 10, pool));
    std::vector<double> median;
    for (const std::vector<double>& m : ms) median.push_back(Median(m));
    std::printf("%-14s %3lld %5lld %5lld %4lld %4lld %10.3f %8.2f %8.2f %8.2f\n", l.net, static_cast<long long>(l.N), static_cast<long long>(l.C),
                static_cast<long long>(l.M), static_cast<long long>(l.H), static_cast<long long>(l.W), median[0], median[1] / median[0],
                median[2] / median[0], median[3] / median[0]);
  }
}
