#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include <dlfcn.h>
#include <omp.h>
#include <unistd.h>

#include "base/child.h"
#include "base/cli.h"
#include "base/file_io.h"
#include "base/half.h"
#include "base/json.h"
#include "base/log.h"
#include "base/shard.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "ir/buffer_pool.h"
#include "ir/tensor.h"

namespace npu {

TEST(Status, MessageNamesCodeParamValueReasonAndFix) {
  Status s = Status::Error("E10001", "--mode", "7", "only 0, 1, 3, 6");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), "E10001");
  std::string m = s.message();
  EXPECT_NE(m.find("E10001"), std::string::npos);
  EXPECT_NE(m.find("[7]"), std::string::npos);
  EXPECT_NE(m.find("[--mode]"), std::string::npos);
  EXPECT_NE(m.find("Solution"), std::string::npos);
}

TEST(Half, RoundTripsAndRounds) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  // Every half value survives half -> float -> half, scalar and vector paths alike.
  std::vector<uint16_t> all(65536), back(65536);
  std::vector<float> f(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  HalfToFloat(all, f);
  FloatToHalf(f, back);
  for (int i = 0; i < 65536; ++i) {
    if (std::isnan(f[i])) continue;
    ASSERT_EQ(back[i], all[i]) << i;
    ASSERT_EQ(FloatToHalf(HalfToFloat(all[i])), all[i]) << i;
  }
  // Floats between halves (ties included) round alike in the SIMD and scalar paths.
  std::vector<float> mid(65536);
  for (int i = 0; i < 65535; ++i) mid[i] = std::isfinite(f[i]) && std::isfinite(f[i + 1]) ? (f[i] + f[i + 1]) / 2 : 1.0f;
  FloatToHalf(mid, back);
  for (int i = 0; i < 65536; ++i) ASSERT_EQ(back[i], FloatToHalf(mid[i])) << mid[i];
  EXPECT_EQ(FloatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(BF16ToFloat(0x3f80), 1.0f);
}

// RoundToHalf and RoundToBF16 (SIMD blocks of 16 or 8 and a scalar tail) give every element the scalar round
// trip below the limit and keep the others as they were, NaN and the infinities included, and return the first
// kept index: random bit patterns (every exponent), values at fp16's edges and ties between bf16 neighbours.
TEST(Half, RoundingInPlaceIsTheScalarRoundTrip) {
  std::mt19937 gen(11);
  std::vector<float> x(1003);  // not a multiple of any vector width
  for (float& v : x) {
    const uint32_t bits = gen();
    std::memcpy(&v, &bits, sizeof v);
  }
  const float specials[] = {65504.0f, 65519.99f, 65520.0f, -65520.0f, std::ldexp(1.0f, -25), std::ldexp(3.0f, -26), -0.0f,
                            INFINITY, -INFINITY, NAN, 1.0f + std::ldexp(1.0f, -8), 3.3895314e38f, 1.0f + std::ldexp(3.0f, -8)};
  for (size_t k = 0; k < std::size(specials); ++k) x[100 + 7 * k] = specials[k];
  for (float limit : {65504.0f, INFINITY}) {
    for (size_t start : {size_t{0}, size_t{91}}) {  // the first kept element inside a block, or past the first ones
      const std::span<const float> in = std::span<const float>(x).subspan(start);
      std::vector<float> half(in.size()), bf16(in.size());
      const size_t first_half = RoundToHalf(in, half, limit), first_bf16 = RoundToBF16(in, bf16, limit);
      size_t want_first = in.size();
      for (size_t i = 0; i < in.size(); ++i) {
        const bool keep = !(std::fabs(in[i]) < limit);
        if (keep && want_first == in.size()) want_first = i;
        const float want_half = keep ? in[i] : HalfToFloat(FloatToHalf(in[i]));
        const float want_bf16 = keep ? in[i] : BF16ToFloat(FloatToBF16(in[i]));
        ASSERT_EQ(std::memcmp(&half[i], &want_half, sizeof(float)), 0) << i << " " << in[i];
        ASSERT_EQ(std::memcmp(&bf16[i], &want_bf16, sizeof(float)), 0) << i << " " << in[i];
      }
      EXPECT_EQ(first_half, want_first);
      EXPECT_EQ(first_bf16, want_first);
    }
  }
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<int> hits(10007, 0);
  pool.ParallelFor(hits.size(), 10, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) ASSERT_EQ(h, 1);
}

// SplitEvenly: one even part per thread, in order (thread t the t-th), every index once; inline below its minimum.
TEST(ThreadPool, SplitEvenlyGivesThreadTItsPart) {
  ThreadPool pool(3);
  std::vector<int> hits(10007, 0);
  std::mutex lock;
  std::map<int, std::pair<size_t, size_t>> by_thread;
  pool.SplitEvenly(hits.size(), 1000, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) hits[i]++;
    std::lock_guard guard(lock);
    by_thread[omp_get_thread_num()] = {b, e};
  });
  for (int h : hits) ASSERT_EQ(h, 1);
  EXPECT_EQ(by_thread, (std::map<int, std::pair<size_t, size_t>>{{0, {0, 3335}}, {1, {3335, 6671}}, {2, {6671, 10007}}}));
  std::vector<std::pair<size_t, size_t>> parts;
  pool.SplitEvenly(999, 1000, [&](size_t b, size_t e) { parts.emplace_back(b, e); });
  EXPECT_EQ(parts, (std::vector<std::pair<size_t, size_t>>{{0, 999}}));
}

// Back-to-back jobs (workers still spinning), jobs after pauses longer than the spin (workers asleep, woken
// through the condition variable), nested loops (inline) and two callers at once: every index exactly once.
TEST(ThreadPool, SpinningAndSleepingWorkersLoseNoJob) {
  ThreadPool pool(3);
  std::atomic<long> total{0};
  auto job = [&](size_t n) {
    std::vector<int> hits(n, 0);
    pool.ParallelFor(n, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        hits[i]++;
        pool.ParallelFor(4, 1, [&](size_t nb, size_t ne) { total += static_cast<long>(ne - nb); });  // nested: inline
      }
    });
    for (int h : hits) ASSERT_EQ(h, 1);
  };
  for (int round = 0; round < 200; ++round) {
    job(1 + round % 37);
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin: workers sleep
  }
  std::thread other([&] {
    for (int k = 0; k < 100; ++k) job(17);
  });
  for (int k = 0; k < 100; ++k) job(23);
  other.join();
  long expected = 0;
  for (int round = 0; round < 200; ++round) expected += 4L * (1 + round % 37);
  EXPECT_EQ(total.load(), expected + 4L * 17 * 100 + 4L * 23 * 100);
}

// oneDNN's regions and the pool's loops run on one OpenMP runtime, so on one set of threads (libcore/CMakeLists.txt):
// the entry point oneDNN calls (GOMP_parallel at version GOMP_4.0, found as the dynamic linker binds it) is defined
// by the library whose OpenMP functions the pool calls. Two runtimes would each keep threads spinning on the cores.
TEST(ThreadPool, OneDnnAndThePoolShareOneOpenMPRuntime) {
  void* dnnl_entry = dlvsym(RTLD_DEFAULT, "GOMP_parallel", "GOMP_4.0");
  ASSERT_NE(dnnl_entry, nullptr);
  Dl_info theirs{}, ours{};
  ASSERT_NE(dladdr(dnnl_entry, &theirs), 0);
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&omp_in_parallel), &ours), 0);
  EXPECT_STREQ(theirs.dli_fname, ours.dli_fname);
}

// A fault in the child's work is the child's end, reported with its signal; the parent carries on. What the work
// returns comes back whole, however large.
TEST(Child, AFaultEndsTheChildNotTheParent) {
  ChildOutcome fine = RunInChild([] {
    std::puts("printed where nobody sees it");
    return std::string(1 << 20, 'x') + "end";
  });
  EXPECT_TRUE(fine.ok) << fine.Describe();
  EXPECT_EQ(fine.output.size(), (1u << 20) + 3);
  EXPECT_EQ(fine.output.substr(fine.output.size() - 3), "end");
  ChildOutcome fault = RunInChild([]() -> std::string { std::raise(SIGSEGV); return "never"; });
  EXPECT_FALSE(fault.ok);
  EXPECT_TRUE(fault.output.empty());
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan the child's SEGV handler reports the fault and exits 1: the child still ends, the parent goes on.
  EXPECT_EQ(fault.exit_code, 1) << fault.Describe();
#else
  EXPECT_EQ(fault.signal, SIGSEGV);
  EXPECT_NE(fault.Describe().find("signal 11"), std::string::npos) << fault.Describe();
#endif
  ChildOutcome failed = RunInChild([]() -> std::string { std::_Exit(1); });  // as a sanitizer ends after its report
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(failed.Describe(), "exited with 1");
}

// Files in /dev/shm whose name holds "_<pid>_" (libomp's registration of a process is __KMP_REGISTERED_LIB_<pid>_<uid>).
static int ShmFilesOf(const std::string& pid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    n += e.path().filename().string().find("_" + pid + "_") != std::string::npos;
  return n;
}

// The OpenMP runtime registers a forked child as a process of its own; the child's end must take that back, or every
// h5 read and every isolated listing leaves a file in /dev/shm (msaccucmp's test suite once left eight per run).
TEST(Child, LeavesNothingOfTheOpenMPRuntimeBehind) {
  if (!std::filesystem::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
  std::atomic<int> ran{0};
  ThreadPool(2).ParallelFor(64, 1, [&](size_t, size_t) { ++ran; });  // the runtime is up before the fork
  ASSERT_GT(ran.load(), 0);
  // The child says its pid and whether the runtime registered it (libomp does; libgomp has nothing to leave).
  ChildOutcome child = RunInChild([] {
    const std::string pid = std::to_string(::getpid());
    return pid + (ShmFilesOf(pid) > 0 ? " registered" : " not registered");
  });
  ASSERT_TRUE(child.ok) << child.Describe();
  const std::string pid = child.output.substr(0, child.output.find(' '));
  EXPECT_EQ(ShmFilesOf(pid), 0) << "the child " << child.output << " and left a file in /dev/shm";
}

TEST(FileIo, AtomicWriterLeavesNothingWhenAbandoned) {
  auto dir = std::filesystem::temp_directory_path() / ("npukit_fileio_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.bin").string();
  std::filesystem::remove(path);
  {
    auto w = AtomicFileWriter::Create(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.value()->Write(std::string_view("partial")).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  for (const auto& e : std::filesystem::directory_iterator(dir)) ADD_FAILURE() << "left behind: " << e.path();
  std::string text = "hello";
  ASSERT_TRUE(WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size()))).ok());
  auto back = ReadFileToString(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), "hello");
  EXPECT_EQ(MappedFile::Open((dir / "missing").string()).status().code(), "E13001");
  std::filesystem::remove_all(dir);
}

// Write() goes to the disk in pieces (see file_io.cc): a buffer of several pieces and an odd tail arrives whole.
TEST(FileIo, AtomicWriterWritesALargeBufferWhole) {
  auto path = std::filesystem::temp_directory_path() / ("npukit_large_" + std::to_string(::getpid()));
  std::string text((3 << 20) + 4099, '\0');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(WriteFileAtomic(path.string(), std::as_bytes(std::span(text.data(), text.size()))).ok());
  auto back = ReadFileToString(path.string());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back.value() == text);
  std::filesystem::remove(path);
}

// A kernel that copied a mapped weight lets its pages go; whoever reads the bytes later still reads them.
TEST(File, DroppedPagesOfAMappingReadBackFromTheFile) {
  auto path = std::filesystem::temp_directory_path() / ("npukit_drop_" + std::to_string(::getpid()));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string text(5 * page + 123, '\0');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 131 + 7);
  ASSERT_TRUE(WriteFileAtomic(path.string(), std::as_bytes(std::span(text.data(), text.size()))).ok());
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok());
  auto bytes = f.value().bytes();
  MappedFile::DropResidentPages(f.value().share(), bytes.subspan(100, 3 * page));  // not page-aligned
  EXPECT_EQ(std::memcmp(bytes.data(), text.data(), text.size()), 0);
  MappedFile::DropResidentPages(f.value().share(), bytes);
  EXPECT_EQ(std::memcmp(bytes.data(), text.data(), text.size()), 0);
  // Bytes any other owner holds (the heap here) are not touched.
  auto heap = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
  MappedFile::DropResidentPages(heap, *heap);
  EXPECT_EQ(std::memcmp(heap->data(), text.data(), text.size()), 0);
  std::filesystem::remove(path);
}

TEST(Log, LinesGoToAPlogFileUnderAscendProcessLogPath) {
  auto dir = std::filesystem::temp_directory_path() / ("npukit_plog_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("ASCEND_PROCESS_LOG_PATH", dir.c_str(), 1);
  log::SetLevel(log::Level::kWarning);
  NPU_LOG(kInfo, "TEST", "not at this level");
  NPU_LOG(kWarning, "TEST", "written " << 42);
  log::SetLevel(log::Level::kNull);
  ::unsetenv("ASCEND_PROCESS_LOG_PATH");
  std::string text;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().filename().string().rfind("plog-", 0) == 0) text += ReadFileToString(e.path().string()).value();
  EXPECT_NE(text.find("[WARNING] TEST("), std::string::npos) << text;
  EXPECT_NE(text.find("written 42"), std::string::npos);
  EXPECT_EQ(text.find("not at this level"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(FileIo, CommitReplacesFilesAndSymlinksButNeverFolders) {
  auto dir = std::filesystem::temp_directory_path() / ("npukit_replace_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "folder");
  auto bytes = [](std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); };
  const std::string file = (dir / "out.om").string(), link = (dir / "link.om").string();
  ASSERT_TRUE(WriteFileAtomic(file, bytes("old")).ok());
  ASSERT_TRUE(WriteFileAtomic(file, bytes("new")).ok());  // replaced by an exchange where the file system can
  EXPECT_EQ(ReadFileToString(file).value(), "new");
  std::filesystem::create_symlink(file, link);
  ASSERT_TRUE(WriteFileAtomic(link, bytes("own")).ok());  // the link itself is replaced, as rename() does
  EXPECT_FALSE(std::filesystem::is_symlink(link));
  EXPECT_EQ(ReadFileToString(link).value(), "own");
  EXPECT_EQ(ReadFileToString(file).value(), "new");
  EXPECT_FALSE(WriteFileAtomic((dir / "folder").string(), bytes("x")).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir / "folder"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 3) << "no temp file is left";
  std::filesystem::remove_all(dir);
}

TEST(FileIo, UniqueCommitsNeverReplaceAFile) {
  auto dir = std::filesystem::temp_directory_path() / ("npukit_unique_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string want = dir.string() + "/result_1.csv";
  auto bytes = [](std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); };
  auto a = WriteFileUnique(want, bytes("first")), b = WriteFileUnique(want, bytes("second"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value(), want);
  EXPECT_EQ(b.value(), dir.string() + "/result_1_1.csv");
  EXPECT_EQ(ReadFileToString(want).value(), "first");
  EXPECT_EQ(ReadFileToString(b.value()).value(), "second");
  {  // a writer abandoned before its commit (a failed run) leaves nothing behind
    auto w = AtomicFileWriter::Create(want);
    ASSERT_TRUE(w.ok() && w.value()->Write(bytes("partial")).ok());
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);
  std::filesystem::remove_all(dir);
}

TEST(Cli, CannSpellingsAndTheExitCodeContract) {
  std::vector<std::string> raw = {"atc", "-mode=6", "--om=m.om", "-m", "-1", "--h"};
  std::vector<char*> argv;
  for (auto& a : raw) argv.push_back(a.data());
  // CLI11 wants the arguments reversed; single-dash long flags become --flags, one-letter flags and numbers stay.
  EXPECT_EQ(cli::Args(static_cast<int>(argv.size()), argv.data()),
            (std::vector<std::string>{"--help", "-1", "-m", "--om=m.om", "--mode=6"}));
  EXPECT_EQ(cli::ExitCodeFor({}), cli::kOk);
  EXPECT_EQ(cli::ExitCodeFor({Status::Error("E10001", "--x", "1", "bad value")}), cli::kFailed);
  EXPECT_EQ(cli::ExitCodeFor({Status::Error("E10001", "--x", "1", "bad value"), cli::UnknownFlag("--bogus", "atc")}), cli::kUsage);
  EXPECT_EQ(cli::ExitCodeFor({Status::Error("E10007", "--soc_version", "", "required")}), cli::kUsage);
  EXPECT_EQ(cli::UnknownFlag("--bogus=1", "aoe", "EG0000").param(), "--bogus") << "the flag, not its value";
  EXPECT_EQ(cli::ExitCodeFor({cli::UnknownFlag("--bogus", "aoe", "EG0000")}), cli::kUsage);
  Status bad = cli::ApplyLogFlag("9");
  EXPECT_EQ(bad.code(), "E10010");
  EXPECT_TRUE(cli::ApplyLogFlag("").ok()) << "no --log keeps ASCEND_GLOBAL_LOG_LEVEL's level";
}

TEST(Json, EveryMalformedDocumentIsDiscardedNeverThrown) {
  std::string why;
  EXPECT_TRUE(ParseJson(R"({"a": 1e999})", &why).is_discarded()) << "out_of_range, found by fuzzing acl.json";
  EXPECT_NE(why.find("number overflow"), std::string::npos) << why;
  EXPECT_TRUE(ParseJson("{\"a\": [1, 2}", &why).is_discarded());
  EXPECT_TRUE(ParseJson(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']'), &why).is_discarded());
  EXPECT_NE(why.find("deeper"), std::string::npos);
  EXPECT_FALSE(ParseJson(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')).is_discarded());
  EXPECT_FALSE(ParseJson(R"({"s": "[[[[ brackets in strings do not nest \" ]"})").is_discarded());
}

}  // namespace npu

// ---- shards: --shard K/N, auto from a Slurm array task or a Kubernetes Indexed Job (base/shard.h) ----------

namespace {
npu::EnvLookup Env(std::map<std::string, std::string> vars) {
  auto table = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [table](const char* name) -> const char* {
    auto it = table->find(name);
    return it == table->end() ? nullptr : it->second.c_str();
  };
}
npu::Shard ShardOf(std::string_view value, std::map<std::string, std::string> vars) {
  auto s = npu::ParseShard(value, "--shard", {"E10001", "E10057"}, Env(std::move(vars)));
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s.value() : npu::Shard{0, 0};
}
std::string ShardError(std::string_view value, std::map<std::string, std::string> vars) {
  auto s = npu::ParseShard(value, "--shard", {"E10001", "E10057"}, Env(std::move(vars)));
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.status().message();
}
// What is left over after parsing, told as the user needs it: a stray value after a one-value flag (a shell
// glob that matched two folders), an unknown flag with the nearest real one, and an unknown flag's value
// belonging to it rather than reported as a flag of its own.
TEST(Cli, LeftoversAreToldAsStrayValuesOrNearFlags) {
  CLI::App app{"t", "t"};
  app.allow_extras();
  std::string m, out, shape;
  app.add_option("-m,--my_dump_path", m);
  app.add_option("--output", out);
  app.add_option("--input_shape", shape);
  auto errors_for = [&](std::vector<std::string> in_order) {
    std::vector<std::string> reversed(in_order.rbegin(), in_order.rend());
    app.clear();
    app.parse(reversed);
    return npu::cli::LeftoverErrors(app, app.remaining(), in_order, "t");
  };
  auto e = errors_for({"-m", "dump/1/0", "dump/2/0", "--output", "x"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].param(), "-m");
  EXPECT_NE(e[0].message().find("-m takes one value; 2 were given"), std::string::npos) << e[0].message();
  EXPECT_NE(e[0].message().find("dump/1/0 dump/2/0"), std::string::npos) << e[0].message();
  EXPECT_TRUE(npu::cli::IsUsageError(e[0]) || e[0].code() == "E10001");

  e = errors_for({"--input-shape=x:1,3", "--output_dir", "o"});
  ASSERT_EQ(e.size(), 2u) << "o is --output_dir's value, not an error of its own";
  EXPECT_EQ(e[0].param(), "--input-shape");
  EXPECT_NE(e[0].message().find("Did you mean --input_shape?"), std::string::npos) << e[0].message();
  EXPECT_EQ(e[1].param(), "--output_dir");
  EXPECT_NE(e[1].message().find("Did you mean --output?"), std::string::npos) << e[1].message();
  EXPECT_TRUE(npu::cli::IsUsageError(e[1]));

  e = errors_for({"--frobnicate"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].message().find("Did you mean"), std::string::npos) << "nothing is near: " << e[0].message();
}

}  // namespace

TEST(Shard, GivenAsKOverN) {
  EXPECT_EQ(ShardOf("2/4", {}), (npu::Shard{2, 4}));
  for (const char* bad : {"0/4", "5/4", "2/0", "2", "a/4", "2/4x", "/4", "auto/0"}) EXPECT_NE(ShardError(bad, {}).find("E10001"), std::string::npos) << bad;
}

TEST(Shard, SlurmArrayTasksNumberedInOrder) {
  auto task = [](int id, int min, int max, int count, const char* step) {
    std::map<std::string, std::string> v = {{"SLURM_ARRAY_TASK_ID", std::to_string(id)}, {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
                                            {"SLURM_ARRAY_TASK_MAX", std::to_string(max)}, {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)}};
    if (step) v["SLURM_ARRAY_TASK_STEP"] = step;
    return v;
  };
  EXPECT_EQ(ShardOf("auto", task(0, 0, 3, 4, nullptr)), (npu::Shard{1, 4}));  // --array=0-3
  EXPECT_EQ(ShardOf("auto", task(7, 5, 8, 4, nullptr)), (npu::Shard{3, 4}));  // --array=5-8
  EXPECT_EQ(ShardOf("auto", task(9, 1, 15, 8, "2")), (npu::Shard{5, 8}));    // --array=1-15:2
  EXPECT_NE(ShardError("auto", task(4, 1, 9, 3, nullptr)).find("not an even range"), std::string::npos);  // --array=1,4,9
  // auto/N: the task id is the shard, so --array=3,5 reruns shards 3 and 5
  EXPECT_EQ(ShardOf("auto/8", task(5, 3, 5, 2, nullptr)), (npu::Shard{5, 8}));
  EXPECT_NE(ShardError("auto/8", task(9, 9, 9, 1, nullptr)).find("outside 1..8"), std::string::npos);
}

TEST(Shard, KubernetesIndexedJob) {
  EXPECT_EQ(ShardOf("auto/3", {{"JOB_COMPLETION_INDEX", "2"}}), (npu::Shard{3, 3}));
  EXPECT_NE(ShardError("auto", {{"JOB_COMPLETION_INDEX", "2"}}).find("auto/N"), std::string::npos);
}

TEST(Shard, OutsideASchedulerSaysWhatItLookedFor) {
  const std::string e = ShardError("auto", {});
  EXPECT_NE(e.find("SLURM_ARRAY_TASK_ID"), std::string::npos);
  EXPECT_NE(e.find("JOB_COMPLETION_INDEX"), std::string::npos);
}

TEST(Shard, RangesCoverEveryItemOnce) {
  for (size_t n : {1, 3, 7})
    for (size_t count : {0, 1, 5, 20}) {
      size_t next = 0;
      for (size_t k = 1; k <= n; ++k) {
        auto [b, e] = npu::ShardRange({k, n}, count);
        EXPECT_EQ(b, next);
        next = e;
      }
      EXPECT_EQ(next, count);
    }
}

namespace npu {
namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kAlign = 64;

TEST(BufferPool, ReusesTheMostRecentlyFreedBlockThatFits) {
  BufferPool pool;
  auto a = pool.Take(kMiB, kAlign), b = pool.Take(kMiB, kAlign), c = pool.Take(kMiB, kAlign);
  void *pa = a.get(), *pb = b.get(), *pc = c.get();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pa) % kAlign, 0u);
  a.reset();
  c.reset();
  EXPECT_EQ(pool.idle_bytes(), 2 * kMiB);
  EXPECT_EQ(pool.in_use_bytes(), kMiB);
  auto d = pool.Take(kMiB - 4096, kAlign);  // c was freed last: its memory is the warmest
  EXPECT_EQ(d.get(), pc);
  auto e = pool.Take(kMiB, kAlign);
  EXPECT_EQ(e.get(), pa);
  b.reset();
  auto small = pool.Take(kMiB / 4, kAlign);  // b would waste more than the request: fresh storage instead
  EXPECT_NE(small.get(), pb);
  auto half = pool.Take(kMiB / 2, kAlign);
  EXPECT_EQ(half.get(), pb);
  EXPECT_EQ(pool.idle_bytes(), 0u);
}

TEST(BufferPool, KeepsAtMostItsFactorOfThePeakIdle) {
  BufferPool pool;
  // Phase j holds 2^j blocks of a little under 1 MiB / 2^j at once (never more than 1 MiB in use), each too small
  // for the earlier phases' blocks, then lets them go: idle grows by nearly 1 MiB a phase.
  size_t idle_after_first = 0;
  for (int j = 0; j <= static_cast<int>(BufferPool::kMaxIdleFactor); ++j) {
    const size_t bytes = (kMiB >> j) - (j ? 4096 : 0);
    std::vector<std::shared_ptr<void>> held;
    for (int k = 0; k < (1 << j); ++k) held.push_back(pool.Take(bytes, kAlign));
    EXPECT_EQ(pool.in_use_bytes(), bytes << j);
    held.clear();
    if (j == 0) idle_after_first = pool.idle_bytes();
  }
  EXPECT_EQ(idle_after_first, kMiB);
  size_t later_phases = 0;  // the first phase's 1 MiB block, the oldest, went back to the heap
  for (int j = 1; j <= static_cast<int>(BufferPool::kMaxIdleFactor); ++j) later_phases += kMiB - (4096u << j);
  EXPECT_EQ(pool.idle_bytes(), later_phases);
  EXPECT_LE(pool.idle_bytes(), BufferPool::kMaxIdleFactor * kMiB);
  EXPECT_EQ(pool.in_use_bytes(), 0u);
}

TEST(BufferPool, TensorsTakeFromItOnlyInsideAUseAndOutliveIt) {
  auto pool = std::make_unique<BufferPool>();
  Tensor outside = Tensor::Empty(DType::kF32, {1, 64, 64, 64});
  EXPECT_EQ(pool->in_use_bytes(), 0u);
  Tensor big, tiny;
  {
    BufferPool::Use use(*pool);
    EXPECT_EQ(BufferPool::current(), pool.get());
    big = Tensor::Zeros(DType::kF32, {1, 64, 64, 64});
    tiny = Tensor::Empty(DType::kF32, {16});  // below kMinPooledBytes: malloc's
    EXPECT_EQ(pool->in_use_bytes(), big.nbytes());
    {
      BufferPool inner;
      BufferPool::Use nested(inner);
      EXPECT_EQ(BufferPool::current(), &inner);
    }
    EXPECT_EQ(BufferPool::current(), pool.get());
  }
  EXPECT_EQ(BufferPool::current(), nullptr);
  std::thread([&] { EXPECT_EQ(BufferPool::current(), nullptr); }).join();  // per thread
  pool.reset();  // the tensor keeps its storage; it goes to the heap when the tensor lets go
  EXPECT_EQ(big.data<float>()[big.numel() - 1], 0.0f);  // still readable: Zeros wrote it
  big = Tensor();
}

}  // namespace
}  // namespace npu
