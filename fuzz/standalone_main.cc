// The driver fuzz targets link against when libFuzzer is not available (the gcc build, CI's smoke run).
// It runs every seed, then `-runs=N` deterministic mutations of them (bit flips, boundary bytes, 0xFFFFFFFF
// lengths, truncation, chunk duplication and splicing), with libFuzzer's command-line spelling:
//   <target> [-runs=N] [-seed=S] FILE_OR_DIR...
// On a crash the input being run is saved as ./crash-<target> so it can be replayed.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

const Bytes* g_current = nullptr;
char g_crash_path[512];

void SaveCurrentInput(int sig) {  // async-signal-safe: open/write/close only
  if (g_current) {
    int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, g_current->data(), g_current->size());
      ::close(fd);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const Bytes& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
}

Bytes Mutate(const std::vector<Bytes>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  Bytes b = seeds[pick(seeds.size())];
  for (int edits = 1 + int(pick(4)); edits > 0; --edits) {
    size_t at = pick(b.size() + 1);
    switch (pick(6)) {
      case 0:  // flip one bit
        if (!b.empty()) b[pick(b.size())] ^= uint8_t(1u << pick(8));
        break;
      case 1: {  // a boundary byte
        static constexpr uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
        if (!b.empty()) b[pick(b.size())] = kInteresting[pick(std::size(kInteresting))];
        break;
      }
      case 2:  // a length that claims 4 GiB
        b.insert(b.begin() + at, 4, 0xff);
        break;
      case 3:  // truncate
        b.resize(at);
        break;
      case 4: {  // duplicate a chunk
        if (b.empty()) break;
        size_t from = pick(b.size()), len = 1 + pick(std::min<size_t>(64, b.size() - from));
        Bytes chunk(b.begin() + from, b.begin() + from + len);
        b.insert(b.begin() + pick(b.size() + 1), chunk.begin(), chunk.end());
        break;
      }
      default: {  // splice the tail of another seed
        const Bytes& o = seeds[pick(seeds.size())];
        size_t from = pick(o.size() + 1);
        b.resize(at);
        b.insert(b.end(), o.begin() + from, o.end());
      }
    }
  }
  return b;
}

Bytes ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main(int argc, char** argv) {
  long long runs = 0;
  uint64_t seed = 1;
  std::vector<Bytes> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-runs=", 0) == 0) {
      runs = std::stoll(a.substr(6));
    } else if (a.rfind("-seed=", 0) == 0) {
      seed = std::stoull(a.substr(6));
    } else if (a.rfind("-", 0) == 0) {
      continue;  // libFuzzer flags this driver does not need (-max_total_time, ...)
    } else if (fs::is_directory(a)) {
      for (const auto& e : fs::directory_iterator(a))
        if (e.is_regular_file()) seeds.push_back(ReadAll(e.path()));
    } else {
      seeds.push_back(ReadAll(a));
    }
  }
  std::snprintf(g_crash_path, sizeof g_crash_path, "crash-%s", fs::path(argv[0]).filename().c_str());
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SaveCurrentInput);
  if (seeds.empty()) seeds.push_back({});
  for (const Bytes& s : seeds) Run(s);
  std::mt19937_64 rng(seed);
  for (long long i = 0; i < runs; ++i) Run(Mutate(seeds, rng));
  std::printf("%s: %zu seeds + %lld mutations, 0 crashes\n", fs::path(argv[0]).filename().c_str(), seeds.size(), runs);
  return 0;
}
