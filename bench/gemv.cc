// The fully connected layers of AlexNet, VGG16 and the classifier heads of ResNet, EfficientNet, MobileNet v3 and
// ViT at batch 1 (weights given as (N, K), as torchvision exports them), run on oneDNN's matmul and on npukit's row
// product (kernels/gemv.h, also on the layers under its size limit), with a bias, the weights reordered or copied
// into huge-page storage once. Before each run 64 MB are written so that no cache holds the weights, as in a net,
// where the layers between two inferences push them out. Prints per layer oneDNN's median time, its rate of weight
// bytes, and ours as a ratio.
// usage: gemv [ROUNDS]   (NPUKIT_NUM_THREADS: the pool's size)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "base/file_io.h"
#include "base/thread_pool.h"
#include "kernel_timing.h"
#include "kernels/gemv.h"
#include "kernels/matmul_dnnl.h"
#include "ops/schemas.h"

namespace {

using npu::bench::Median;
using npu::bench::RandomTensor;

struct Layer {
  const char* net;
  int64_t K, N;
};

constexpr size_t kEvictBytes = 64 << 20;  // past the last-level cache of the machines we measure on

// Milliseconds per run of one product, the median of `runs` after one to build the state, caches emptied before each.
// Ours runs on the weights copied into huge-page storage once, as RunRowProduct keeps them, below its size limit too.
double Time(bool ours, const npu::Node& node, const npu::Tensor& a, const npu::Tensor& w, const npu::Tensor& bias, int runs,
            npu::ThreadPool& pool, std::vector<char>& evict) {
  std::unique_ptr<npu::KernelState> state;
  npu::KernelRunOptions options;
  options.state = &state;
  const npu::ExecContext exec;
  const int64_t N = w.shape()[0], K = w.shape()[1];
  std::shared_ptr<void> rows;
  if (ours) {
    rows = npu::HugePageOrHeapStorage(static_cast<size_t>(w.nbytes()));
    std::memcpy(rows.get(), w.raw(), static_cast<size_t>(w.nbytes()));
  }
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    std::memset(evict.data(), i, evict.size());
    npu::KernelContext c{node, {}, {}, pool, exec, {}, {}, false, {}, false, options};
    npu::Tensor out = npu::Tensor::Empty(npu::DType::kF32, {1, N});
    const auto t0 = std::chrono::steady_clock::now();
    if (ours) {
      npu::RowTimesWeightRows(a.data<float>(), static_cast<const float*>(rows.get()), bias.data<float>(), out.mutable_data<float>(), N, K, pool);
    } else if (auto done = npu::RunDnnlMatMul(c, a, w, true, &bias, out); !done.ok() || !done.value()) {
      std::exit(1);
    }
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return Median(std::move(ms));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = npu::bench::RoundsArg(argc, argv);
  npu::RegisterBuiltinOps();
  npu::ThreadPool& pool = npu::ThreadPool::Global();
  const std::vector<Layer> layers = {
      {"alexnet", 9216, 4096}, {"alexnet", 4096, 4096}, {"alexnet", 4096, 1000}, {"vgg16", 25088, 4096},
      {"resnet50", 2048, 1000}, {"efficientnet_b0", 1280, 1000}, {"mobilenet_v3_small", 576, 1024},
      {"mobilenet_v3_small", 1024, 1000}, {"mobilenet_v3_large", 960, 1280}, {"vit_b_32", 768, 1000},
  };
  std::vector<char> evict(kEvictBytes);
  npu::Node node;
  node.name = "fc";
  node.op_type = "Gemm";
  std::printf("%d threads, median of %d rounds of 5 runs, caches emptied before each run\n%-20s %6s %6s %9s %8s %9s\n", pool.size(),
              rounds, "net", "K", "N", "oneDNN ms", "GB/s", "ours/it");
  for (const Layer& l : layers) {
    const npu::Tensor a = RandomTensor({1, l.K}, 1), w = RandomTensor({l.N, l.K}, 2), bias = RandomTensor({l.N}, 3);
    std::vector<double> theirs, ratio;
    for (int r = 0; r < rounds; ++r) {  // interleaved, so that a slow spell of the machine slows both
      const double t = Time(false, node, a, w, bias, 5, pool, evict), o = Time(true, node, a, w, bias, 5, pool, evict);
      theirs.push_back(t);
      ratio.push_back(o / t);
    }
    const double t = Median(theirs);
    std::printf("%-20s %6lld %6lld %9.3f %8.1f %9.2f\n", l.net, static_cast<long long>(l.K), static_cast<long long>(l.N), t,
                static_cast<double>(l.K * l.N * 4) / (t * 1e6), Median(ratio));
  }
  return 0;
}
