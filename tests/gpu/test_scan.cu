// The scan ladder on the GPU (scan/): every stage and CUB, for both types and kinds,
// at sizes around every tile size and at misaligned pointers, each output poisoned
// first and fenced by guard words that must stay untouched; in place; the single-pass
// stages' look-back under two streams at once, over 1,000 launches in a row of varied
// n on one scratch, with stale descriptors of the launch before, and across the
// epoch's wrap; and the runner end to end. Every wait for a scan has a deadline (wait_or_fail.hpp).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "check.hpp"
#include "cuda_check.hpp"
#include "gpu_fixture.hpp"
#include "lookback_layout.hpp"
#include "runner.hpp"
#include "scan.hpp"
#include "wait_or_fail.hpp"

namespace {

// A look-back that never ends stops the binary with a message after this long (ctest's
// TIMEOUT of 600 s is the second line of defence); the largest scan here takes milliseconds.
constexpr double kHungAfterSeconds = 60.0;

constexpr std::size_t kGuard = 8;  // poisoned words before and after every output

std::vector<const scan::ScanStage*> rows_for(scan::ScanKind kind) {
  std::vector<const scan::ScanStage*> rows;
  for (const scan::ScanStage& s : scan::registry())
    if (!scan::checked_as_copy(s) && scan::computes(s, kind)) rows.push_back(&s);
  return rows;
}

std::vector<const scan::ScanStage*> single_pass_stages() {
  std::vector<const scan::ScanStage*> rows;
  for (const scan::ScanStage& s : scan::registry())
    if (s.entry == scan::Entry::stage && s.plan(1 << 20, scan::ValueType::i32, gpu_test::device()).zero_scratch_once)
      rows.push_back(&s);
  return rows;
}

// One scan on the device: input at word `in_at` of one allocation, output at word
// `out_at` of another (or the input itself when in_place), each fenced by guard words.
// upload(), launch() and finish() may go on different streams' work in between.
class Case {
 public:
  Case(const scan::ScanStage& s, scan::ValueType type, scan::ScanKind kind, std::size_t n, std::size_t in_at = kGuard,
       std::size_t out_at = kGuard, bool in_place = false)
      : s_(s),
        type_(type),
        kind_(kind),
        n_(n),
        in_at_(in_at),
        out_at_(in_place ? in_at : out_at),
        in_place_(in_place),
        in_(n + 2 * kGuard),
        out_(n + 2 * kGuard) {
    plan_ = s.plan(n, type, gpu_test::device());
    scratch_ = common::DeviceBuffer<unsigned char>(plan_.scratch_bytes);
    if (scratch_.bytes() > 0) CUDA_CHECK(cudaMemset(scratch_.get(), 0, scratch_.bytes()));
    ints_ = scan::make_int_input(n, 7 + n);
    floats_ = scan::make_float_input(n, 7 + n);
    host_in_.assign(n + 2 * kGuard, scan::kPoisonBits);
    std::memcpy(host_in_.data() + in_at_,
                type == scan::ValueType::i32 ? static_cast<const void*>(ints_.data())
                                             : static_cast<const void*>(floats_.data()),
                4 * n);
  }

  // Another scratch than the case's own (the caller zeroed it once).
  void use_scratch(unsigned char* scratch, std::size_t bytes) {
    other_scratch_ = scratch;
    other_bytes_ = bytes;
  }
  unsigned char* scratch() const { return other_scratch_ != nullptr ? other_scratch_ : scratch_.get(); }
  std::size_t scratch_bytes() const { return other_scratch_ != nullptr ? other_bytes_ : scratch_.bytes(); }

  // The input between its guards, and every word of the output buffer poisoned.
  void upload(cudaStream_t stream) {
    const std::vector<unsigned> poisoned(n_ + 2 * kGuard, scan::kPoisonBits);
    CUDA_CHECK(cudaMemcpyAsync(in_.get(), host_in_.data(), 4 * host_in_.size(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(out_.get(), poisoned.data(), 4 * poisoned.size(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch(cudaStream_t stream) {
    scan::ScanArgs a;
    a.in = in_.get() + in_at_;
    a.out = (in_place_ ? in_.get() : out_.get()) + out_at_;
    a.n = n_;
    a.type = type_;
    a.kind = kind_;
    a.scratch = scratch();
    a.scratch_bytes = scratch_bytes();
    a.stream = stream;
    a.prefetch_tiles = plan_.prefetch_tiles;
    a.grid = plan_.grid;
    scan::launch(s_, a);
  }

  // Waits for `stream` (or stops the binary if it hangs), then checks the guards, the input
  // (unless in place) and the output.
  scan::ScanVerdict finish(cudaStream_t stream) {
    gpu_test::wait_or_fail(stream, kHungAfterSeconds, "scan " + scan::stage_key(s_) + " of n = " + std::to_string(n_));
    std::vector<unsigned> in_back(n_ + 2 * kGuard);
    std::vector<unsigned> out_back(n_ + 2 * kGuard);
    CUDA_CHECK(cudaMemcpyAsync(in_back.data(), in_.get(), 4 * in_back.size(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(out_back.data(), out_.get(), 4 * out_back.size(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<unsigned>& result = in_place_ ? in_back : out_back;
    scan::ScanVerdict bad;
    for (std::size_t i = 0; i < result.size(); ++i)
      if ((i < out_at_ || i >= out_at_ + n_) && result[i] != scan::kPoisonBits) {
        bad.detail = "guard word " + std::to_string(i) + " around the output was overwritten";
        return bad;
      }
    if (!in_place_ && in_back != host_in_) {
      bad.detail = "the input was changed";
      return bad;
    }
    if (scan::checked_as_copy(s_))  // a copy, of the input's bits
      return scan::check_copy(host_in_.data() + in_at_, result.data() + out_at_, n_);
    if (type_ == scan::ValueType::i32) return scan::check_int_scan(ints_.data(), result.data() + out_at_, n_, kind_);
    std::vector<float> y(n_);
    std::memcpy(y.data(), result.data() + out_at_, 4 * n_);
    return scan::check_float_scan(floats_.data(), y.data(), n_, kind_, plan_.depth);
  }

  scan::ScanVerdict run(cudaStream_t stream = gpu_test::stream()) {
    upload(stream);
    launch(stream);
    return finish(stream);
  }

 private:
  const scan::ScanStage& s_;
  scan::ValueType type_;
  scan::ScanKind kind_;
  std::size_t n_;
  std::size_t in_at_;
  std::size_t out_at_;
  bool in_place_;
  scan::ScanPlan plan_;
  std::vector<unsigned> ints_;
  std::vector<float> floats_;
  std::vector<unsigned> host_in_;
  common::DeviceBuffer<unsigned> in_;
  common::DeviceBuffer<unsigned> out_;
  common::DeviceBuffer<unsigned char> scratch_;
  unsigned char* other_scratch_ = nullptr;
  std::size_t other_bytes_ = 0;
};

const scan::ValueType kTypes[] = {scan::ValueType::i32, scan::ValueType::f32};
const scan::ScanKind kKinds[] = {scan::ScanKind::inclusive, scan::ScanKind::exclusive};

}  // namespace

TEST_CASE("every stage and CUB scan both types and kinds at sizes around every tile", "[scan]") {
  std::vector<std::size_t> sizes = {1, 2, 31, 32, 33, 127, 128, 129, (1 << 20) + 7};
  for (std::size_t tile : {1024u, 4096u, 8192u})
    for (std::size_t m : {1u, 3u})
      for (std::size_t n : {m * tile - 1, m * tile, m * tile + 1}) sizes.push_back(n);
  for (const scan::ValueType type : kTypes)
    for (const scan::ScanKind kind : kKinds)
      for (const scan::ScanStage* s : rows_for(kind))
        for (const std::size_t n : sizes) {
          INFO(scan::stage_key(*s) << " " << scan::type_name(type) << " " << scan::kind_name(kind) << " n = " << n);
          const scan::ScanVerdict v = Case(*s, type, kind, n).run();
          INFO(v.detail);
          CHECK(v.ok);
        }
}

TEST_CASE("the bounds of scan --bounds copy their input exactly at any n and alignment", "[scan]") {
  REQUIRE(scan::bounds().size() == 3);
  for (const scan::ScanStage& s : scan::bounds())
    for (std::size_t n :
         {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5}, std::size_t{4095}, std::size_t{16383},
          std::size_t{16384}, std::size_t{16385}, std::size_t{3 * 16384 + 7}, (std::size_t{1} << 22) + 3})
      for (std::size_t in_at = 0; in_at < 4; ++in_at)
        for (std::size_t out_at = 0; out_at < 4; ++out_at) {
          if (n > 16385 && in_at != out_at) continue;  // the scalar path, already taken at the smaller sizes
          INFO(s.id << " n = " << n << " input at +" << in_at << " output at +" << out_at);
          const scan::ScanVerdict v =
              Case(s, scan::ValueType::i32, scan::ScanKind::inclusive, n, kGuard - 4 + in_at, kGuard - 4 + out_at)
                  .run();
          INFO(v.detail);
          CHECK(v.ok);
        }
}

TEST_CASE("the stages scan past 4096 tile sums and three levels of tiles", "[scan]") {
  // 03 scans its tile sums in chunks of 4096; 01 and 02 recurse three levels deep.
  const std::size_t n = (std::size_t{1} << 24) + 4097;
  for (const scan::ScanKind kind : kKinds)
    for (const scan::ScanStage* s : rows_for(kind)) {
      INFO(scan::stage_key(*s) << " " << scan::kind_name(kind) << " n = " << n);
      const scan::ScanVerdict v = Case(*s, scan::ValueType::i32, kind, n).run();
      INFO(v.detail);
      CHECK(v.ok);
    }
}

TEST_CASE("misaligned inputs and outputs, each offset by 0 to 3 elements", "[scan]") {
  for (const scan::ScanStage* s : rows_for(scan::ScanKind::inclusive)) {
    if (s->entry != scan::Entry::stage) continue;
    for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{8193}, std::size_t{(1 << 20) + 7}})
      for (std::size_t in_at = 0; in_at < 4; ++in_at)
        for (std::size_t out_at = 0; out_at < 4; ++out_at)
          for (const scan::ValueType type : kTypes) {
            const scan::ScanKind kind =
                type == scan::ValueType::i32 ? scan::ScanKind::inclusive : scan::ScanKind::exclusive;
            INFO(scan::stage_key(*s) << " n = " << n << " input at +" << in_at << " output at +" << out_at);
            const scan::ScanVerdict v = Case(*s, type, kind, n, kGuard - 4 + in_at, kGuard - 4 + out_at).run();
            INFO(v.detail);
            CHECK(v.ok);
          }
  }
}

TEST_CASE("the stages scan in place; CUB and overlapping ranges are refused", "[scan]") {
  for (const scan::ScanStage& s : scan::registry()) {
    if (s.entry != scan::Entry::stage) continue;
    for (std::size_t n : {std::size_t{33}, std::size_t{(1 << 20) + 7}})
      for (std::size_t at : {kGuard, kGuard + 1})
        for (const scan::ScanKind kind : kKinds) {
          INFO(scan::stage_key(s) << " in place, n = " << n << " at +" << at);
          const scan::ScanVerdict v = Case(s, scan::ValueType::i32, kind, n, at, at, true).run();
          INFO(v.detail);
          CHECK(v.ok);
        }
  }
  const scan::ScanStage* cub = scan::find_stage("cub_inclusive");
  REQUIRE(cub != nullptr);
  CHECK_THROWS(Case(*cub, scan::ValueType::i32, scan::ScanKind::inclusive, 100, kGuard, kGuard, true).run());
}

TEST_CASE("the look-back on two streams at once, each with its own scratch", "[scan][lookback]") {
  common::CudaStream a;
  common::CudaStream b;
  for (const scan::ScanStage* s : single_pass_stages()) {
    Case first(*s, scan::ValueType::i32, scan::ScanKind::inclusive, (1 << 22) + 3);
    Case second(*s, scan::ValueType::f32, scan::ScanKind::exclusive, (1 << 22) + 5);
    first.upload(a.get());
    second.upload(b.get());
    for (int round = 0; round < 10; ++round) {
      // Both launches enqueued before either is waited for: the two kernels run together.
      INFO(scan::stage_key(*s) << " round " << round);
      first.launch(a.get());
      second.launch(b.get());
      const scan::ScanVerdict va = first.finish(a.get());
      const scan::ScanVerdict vb = second.finish(b.get());
      INFO(va.detail << " / " << vb.detail);
      CHECK(va.ok);
      CHECK(vb.ok);
      first.upload(a.get());  // poisons the outputs again
      second.upload(b.get());
    }
  }
}

TEST_CASE("1,000 launches in a row of varied n on one scratch", "[scan][lookback]") {
  for (const scan::ScanStage* s : single_pass_stages()) {
    // One scratch for the largest n, reused by every launch: a descriptor left by an
    // earlier launch and read as this one's would give a wrong output at once.
    const std::size_t largest = 300000;
    scan::ScanPlan plan = s->plan(largest, scan::ValueType::i32, gpu_test::device());
    common::DeviceBuffer<unsigned char> scratch(plan.scratch_bytes);
    CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));
    common::DeviceBuffer<unsigned> in(largest);
    common::DeviceBuffer<unsigned> out(largest);
    const std::vector<unsigned> input = scan::make_int_input(largest, 3);
    common::copy_to_device(in.get(), input.data(), 4 * largest);
    std::vector<unsigned> back(largest);
    const std::vector<unsigned> poison(largest, scan::kPoisonBits);
    std::uint64_t state = 12345;
    int failures = 0;
    for (int i = 0; i < 1000 && failures < 5; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const std::size_t n = 1 + (state >> 33) % largest;
      const scan::ScanKind kind = i % 2 ? scan::ScanKind::exclusive : scan::ScanKind::inclusive;
      CUDA_CHECK(cudaMemcpyAsync(out.get(), poison.data(), 4 * n, cudaMemcpyHostToDevice, gpu_test::stream()));
      scan::ScanArgs a;
      a.in = in.get();
      a.out = out.get();
      a.n = n;
      a.kind = kind;
      a.scratch = scratch.get();
      a.scratch_bytes = scratch.bytes();
      a.stream = gpu_test::stream();
      a.prefetch_tiles = plan.prefetch_tiles;
      scan::launch(*s, a);
      gpu_test::wait_or_fail(gpu_test::stream(), kHungAfterSeconds,
                             "scan " + scan::stage_key(*s) + " launch " + std::to_string(i));
      CUDA_CHECK(cudaMemcpyAsync(back.data(), out.get(), 4 * n, cudaMemcpyDeviceToHost, gpu_test::stream()));
      CUDA_CHECK(cudaStreamSynchronize(gpu_test::stream()));
      const scan::ScanVerdict v = scan::check_int_scan(input.data(), back.data(), n, kind);
      if (!v.ok) {
        ++failures;
        FAIL_CHECK(scan::stage_key(*s) << " launch " << i << " n = " << n << ": " << v.detail);
      }
    }
    scan::LookbackHeader header{};
    CUDA_CHECK(cudaMemcpy(&header, scratch.get(), sizeof header, cudaMemcpyDeviceToHost));
    CHECK(header.ticket == 0);
    CHECK(header.done == 0);
  }
}

// A descriptor word: epoch, status and value, as scan/lookback.cuh packs them.
unsigned long long word(unsigned epoch, unsigned status, unsigned value) {
  return (static_cast<unsigned long long>(epoch << 2 | status) << 32) | value;
}

TEST_CASE("descriptors of the previous launch are ignored, and the epoch wraps onto a clean slate",
          "[scan][lookback]") {
  for (const scan::ScanStage* s : single_pass_stages()) {
    INFO(scan::stage_key(*s));
    Case big(*s, scan::ValueType::i32, scan::ScanKind::inclusive, (1 << 20) + 7);
    const std::size_t words = (big.scratch_bytes() - scan::kDescriptorsOffset) / 8;
    auto set_header = [&](unsigned epoch) {
      const scan::LookbackHeader h{0, 0, epoch};
      CUDA_CHECK(cudaMemcpy(big.scratch(), &h, sizeof h, cudaMemcpyHostToDevice));
    };
    // Every descriptor filled with `w` (a status P and a wrong value).
    auto fill = [&](unsigned long long w) {
      const std::vector<unsigned long long> all(words, w);
      CUDA_CHECK(cudaMemcpy(big.scratch() + scan::kDescriptorsOffset, all.data(), 8 * words, cudaMemcpyHostToDevice));
    };
    // Epoch 5 about to run; every descriptor says "P, 12345" from epoch 4.
    set_header(5);
    fill(word(4, scan::kStatusP, 12345u));
    {
      const scan::ScanVerdict v = big.run();
      INFO("after stale descriptors of the launch before: " << v.detail);
      CHECK(v.ok);
    }
    // Descriptors of epoch 0, as if left 2^30 launches ago by a larger launch; then
    // three small launches (epochs kLastEpoch - 2 .. kLastEpoch, the last one wrapping)
    // on the same scratch, and the large one again at epoch 0: it reads the old words'
    // slots, which only the wrap's clean slate keeps from counting.
    fill(word(0, scan::kStatusP, 777u));
    set_header(scan::kLastEpoch - 2);
    Case small(*s, scan::ValueType::i32, scan::ScanKind::exclusive, 3 * 8192 + 1);
    small.use_scratch(big.scratch(), big.scratch_bytes());
    for (int i = 0; i < 3; ++i) {
      const scan::ScanVerdict v = small.run();
      INFO("small launch " << i << " before the wrap: " << v.detail);
      CHECK(v.ok);
    }
    scan::LookbackHeader h{};
    CUDA_CHECK(cudaMemcpy(&h, big.scratch(), sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h.epoch == 0);
    for (int i = 0; i < 3; ++i) {
      const scan::ScanVerdict v = big.run();
      INFO("large launch " << i << " after the wrap: " << v.detail);
      CHECK(v.ok);
    }
    CUDA_CHECK(cudaMemcpy(&h, big.scratch(), sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h.epoch == 3);
    CHECK(h.ticket == 0);
    CHECK(h.done == 0);
  }
}

TEST_CASE("the runner verifies and times every row and writes its CSV", "[scan][runner]") {
  const std::string csv = (std::filesystem::temp_directory_path() / "scan_runner_test.csv").string();
  std::remove(csv.c_str());
  const char* argv[] = {"scan",   "--n", "100003,4096", "--type", "float", "--kind",   "exclusive",
                        "--reps", "3",   "--budget-ms", "50",     "--csv", csv.c_str()};
  REQUIRE(scan::scan_main(static_cast<int>(std::size(argv)), argv) == 0);
  std::ifstream f(csv);
  std::stringstream text;
  text << f.rdbuf();
  const std::string body = text.str();
  CHECK(body.find("# type: float") != std::string::npos);
  CHECK(body.find(",cub_exclusive,") != std::string::npos);
  CHECK(body.find(",copy,") != std::string::npos);
  CHECK(body.find(",05,vector_lookback,") != std::string::npos);
  CHECK(body.find(",06,prefetch_lookback,") != std::string::npos);
  CHECK(body.find("FAIL") == std::string::npos);
  std::remove(csv.c_str());
}
