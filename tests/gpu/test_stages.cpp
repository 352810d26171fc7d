// Every registered stage and baseline, verified on the GPU: many sizes, every input
// pattern, every block size it accepts, determinism where it is claimed.
// The stage list comes from the registry, never from this file.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu_fixture.hpp"
#include "inputs.hpp"
#include "kernel_image.hpp"
#include "reduction/launch_shape.hpp"
#include "reduction/prepared_stage.hpp"
#include "reduction/registry.hpp"
#include "sm_limits.hpp"
#include "verify.hpp"

using common::Pattern;
using reduction::PreparedStage;
using reduction::Stage;

namespace {

using gpu_test::device;
using gpu_test::stream;

// One input on the host and the device, with its reference; cached, since every
// stage reads the same inputs.
struct Input {
  std::vector<float> host;
  common::DeviceBuffer<float> dev;
  common::Reference ref;
};

const Input& input(Pattern p, std::size_t n, std::uint64_t seed = 1) {
  static std::map<std::tuple<int, std::size_t, std::uint64_t>, std::unique_ptr<Input>> cache;
  auto& slot = cache[{static_cast<int>(p), n, seed}];
  if (!slot) {
    slot = std::make_unique<Input>();
    slot->host = common::make_input(p, seed, n);
    slot->dev = common::DeviceBuffer<float>(n);
    common::copy_to_device(slot->dev.get(), slot->host.data(), n * sizeof(float));
    slot->ref = common::reference_sum(slot->host);
  }
  return *slot;
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s = {1,
                                2,
                                31,
                                32,
                                33,
                                1023,
                                1024,
                                1025,
                                4097,
                                16384,
                                16385,
                                131072,
                                131073,
                                (std::size_t{1} << 20) + 7,
                                std::size_t{1} << 24};
  std::mt19937_64 rng(20261120);
  for (int i = 0; i < 4; ++i) s.push_back(1 + rng() % (std::size_t{3} << 20));
  return s;
}

std::vector<int> accepted_blocks(const Stage& s) {
  if (!s.blocks.configurable) return {0};
  std::vector<int> blocks;
  const int hi = reduction::max_block_for(s, device().max_threads_per_block);
  for (int b = s.blocks.min; b <= hi; b = s.blocks.powers_of_two ? b * 2 : b + 32)
    if (reduction::block_size_error(s, b, device().max_threads_per_block).empty()) blocks.push_back(b);
  return blocks;
}

bool bitwise_equal(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The slow baselines are tested on fewer and smaller inputs so the suite stays short.
bool is_slow(const Stage& s) {
  return std::string(s.id) == "one_thread" || std::string(s.id) == "atomic_per_element" ||
         std::string(s.id) == "one_block";
}

void check_stage(const Stage& s, Pattern p, std::size_t n, int block) {
  const Input& in = input(p, n);
  PreparedStage prepared(s, in.dev.get(), n, block, device(), stream());
  const float result = prepared.run_checked();
  const auto check = common::check_sum(result, in.ref, prepared.plan().bound(), n);
  INFO(s.id << " n=" << n << " block=" << prepared.block() << " pattern=" << common::pattern_name(p) << ": "
            << check.detail);
  CHECK(check.ok);
  // Integer partial sums up to 2^24 are exact in float, so every order must give n.
  if (p == Pattern::ones && n <= (std::size_t{1} << 24)) CHECK(result == static_cast<float>(n));
}

}  // namespace

TEST_CASE("every stage is correct at every size, with its preferred block", "[gpu][stages]") {
  for (const Stage& s : reduction::registry()) {
    for (std::size_t n : sizes()) {
      if (is_slow(s) && n > (std::size_t{1} << 20) + 7) continue;
      check_stage(s, Pattern::uniform, n, 0);
      check_stage(s, Pattern::ones, n, 0);
    }
  }
}

TEST_CASE("every stage handles every input pattern", "[gpu][stages][patterns]") {
  for (const Stage& s : reduction::registry())
    for (Pattern p : common::all_patterns())
      for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{4097}, (std::size_t{1} << 20) + 7})
        check_stage(s, p, n, 0);
}

TEST_CASE("every stage is correct with every block size it accepts", "[gpu][stages][blocks]") {
  for (const Stage& s : reduction::registry()) {
    for (int block : accepted_blocks(s)) {
      for (std::size_t n :
           {std::size_t{1}, std::size_t{31}, std::size_t{1025}, std::size_t{4097}, (std::size_t{1} << 20) + 7}) {
        check_stage(s, Pattern::ones, n, block);
        check_stage(s, Pattern::mixed_signs, n, block);
      }
    }
  }
}

TEST_CASE("stages that claim determinism give bitwise-identical results", "[gpu][stages][determinism]") {
  for (const Stage& s : reduction::registry()) {
    if (!s.deterministic || is_slow(s)) continue;
    for (std::size_t n : {(std::size_t{1} << 20) + 7, std::size_t{1} << 24}) {
      const Input& in = input(Pattern::mixed_signs, n);
      PreparedStage prepared(s, in.dev.get(), n, 0, device(), stream());
      const float first = prepared.run_checked();
      bool same = true;
      for (int rep = 0; rep < 20; ++rep) same = same && bitwise_equal(prepared.run_checked(), first);
      INFO(s.id << " n=" << n);
      CHECK(same);
    }
  }
}

TEST_CASE("a missing element is caught: the checks can fail", "[gpu][harness]") {
  // Summing n-1 of n ones gives n-1: the exact check and the tolerance both reject it.
  const std::size_t n = 4097;
  const Input& in = input(Pattern::ones, n);
  for (const Stage& s : reduction::registry()) {
    PreparedStage prepared(s, in.dev.get(), n - 1, 0, device(), stream());
    const float result = prepared.run_checked();
    INFO(s.id);
    CHECK(result == static_cast<float>(n - 1));
    // The tolerance resolves one missing 1.0 only where its bound is below 1; for the
    // sequential orders (depth n) the bound is n^2 u and the exact check above is what
    // catches it.
    if (common::gamma_float(prepared.plan().error_depth) * static_cast<double>(n) < 1.0)
      CHECK_FALSE(common::check_sum(result, in.ref, prepared.plan().bound(), n).ok);
  }
}

TEST_CASE("stages accept any start address (offset inputs)", "[gpu][stages][alignment]") {
  // A sub-array that starts 1..3 floats past an aligned address: vectorised stages
  // must handle the unaligned head.
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const Input& in = input(Pattern::uniform, n + 3);
  for (const Stage& s : reduction::registry()) {
    if (is_slow(s)) continue;
    for (std::size_t offset = 1; offset <= 3; ++offset) {
      std::vector<float> slice(in.host.begin() + static_cast<std::ptrdiff_t>(offset),
                               in.host.begin() + static_cast<std::ptrdiff_t>(offset + n));
      const auto ref = common::reference_sum(slice);
      PreparedStage prepared(s, in.dev.get() + offset, n, 0, device(), stream());
      const float result = prepared.run_checked();
      const auto check = common::check_sum(result, ref, prepared.plan().bound(), n);
      INFO(s.id << " offset=" << offset << ": " << check.detail);
      CHECK(check.ok);
    }
  }
}

// The description the planners read (common/device_info.hpp) agrees with the table of
// compute capabilities the launch bounds use (common/sm_limits.hpp), and on this GPU no
// stage plans more blocks than one wave of its block size can hold.
TEST_CASE("the device description matches this GPU, and every stage's grid fits one wave", "[gpu][plans]") {
  const common::DeviceInfo& d = device();
  const int arch = d.cc_major * 10 + d.cc_minor;
  INFO(d.name << ", compute capability " << d.compute_capability());
  CHECK(d.max_threads_per_sm == common::max_threads_for_arch(arch));
  CHECK(d.max_blocks_per_sm == common::max_blocks_for_arch(arch));
  CHECK(d.cluster_launch == (d.cc_major >= 9));
  CHECK(d.l2_bytes > 0);
  CHECK(d.shared_mem_per_sm >= d.shared_mem_per_block);
  for (const Stage& s : reduction::registry()) {
    if (s.kind != reduction::Kind::stage || s.number < 6) continue;  // 01-05 launch by passes, not waves
    const int block = s.blocks.preferred;
    for (std::size_t n : {std::size_t{1} << 20, std::size_t{1} << 24}) {
      INFO("stage " << s.number << ", block " << block << ", n " << n);
      const reduction::LaunchPlan p = s.plan(n, block, d);
      CHECK(p.grid >= 1);
      CHECK(p.grid <= reduction::shape::one_wave(d, block, d.max_blocks_per_sm));
    }
  }
}

TEST_CASE("stages 14 and 15 choose their kernel by n, and every path sums correctly", "[gpu][stages][paths]") {
  const Stage& s14 = *reduction::find_stage("tagged_slots");
  const Stage& s15 = *reduction::find_stage("one_cluster");
  for (int block : {128, 512, 1024}) {
    // Stage 14: one block (no scratch) up to block x 32 floats, the tagged ticket above.
    const std::size_t one_block = static_cast<std::size_t>(block) * 32;
    const auto p1 = s14.plan(one_block, block, device());
    const auto p2 = s14.plan(one_block + 1, block, device());
    INFO("block " << block);
    CHECK(p1.grid == 1);
    CHECK(p1.scratch_bytes == 0);
    CHECK(p2.grid > 1);
    CHECK(p2.scratch_bytes > 0);
    // Stage 15: stage 14's one block below that; where the build's code has clusters (a
    // build for sm_90 on Hopper), one cluster of 8 or 16 blocks and no scratch up to
    // (cluster) x block x 16 floats; stage 14's plan above, on GPUs without clusters, and
    // for a build for an older architecture running on Hopper.
    CHECK(s15.plan(one_block, block, device()).grid == 1);
    const auto c = s15.plan(one_block + 1, block, device());
    if (reduction::shape::cluster_refusal(device(), common::build_arch()).empty()) {
      CHECK((c.grid == 8 || c.grid == 16));
      CHECK(c.scratch_bytes == 0);
      const std::size_t cluster_max = static_cast<std::size_t>(c.grid) * block * 16;
      const auto last = s15.plan(cluster_max, block, device());
      CHECK(last.grid == c.grid);
      CHECK(last.scratch_bytes == 0);
      const auto beyond = s15.plan(cluster_max + 1, block, device());
      const auto beyond14 = s14.plan(cluster_max + 1, block, device());
      CHECK(beyond.grid == beyond14.grid);
      CHECK(beyond.scratch_bytes == beyond14.scratch_bytes);
      for (std::size_t n : {one_block + 1, cluster_max, cluster_max + 1})
        check_stage(s15, Pattern::mixed_signs, n, block);
    } else {
      CHECK(c.grid == p2.grid);
      CHECK(c.scratch_bytes == p2.scratch_bytes);
    }
    for (std::size_t n : {one_block, one_block + 1}) {
      check_stage(s14, Pattern::mixed_signs, n, block);
      check_stage(s15, Pattern::mixed_signs, n, block);
    }
  }
}

TEST_CASE("stage 18 takes stage 15's one block and cluster, and its own grid-wide order above",
          "[gpu][stages][paths]") {
  const Stage& s15 = *reduction::find_stage("one_cluster");
  const Stage& s18 = *reduction::find_stage("stream_order");
  for (int block : {128, 512, 1024}) {
    INFO("block " << block);
    const std::size_t one_block = static_cast<std::size_t>(block) * 32;
    // Where stage 15 needs no scratch (one block, one cluster), stage 18 is stage 15.
    std::size_t last_small = one_block;
    if (common::build_arch() >= 90)
      last_small = static_cast<std::size_t>(s15.plan(one_block + 1, block, device()).grid) * block * 16;
    for (std::size_t n : {one_block, last_small}) {
      const auto p15 = s15.plan(n, block, device());
      const auto p18 = s18.plan(n, block, device());
      CHECK(p18.scratch_bytes == 0);
      CHECK(p18.grid == p15.grid);
    }
    // Above: its own plan, every block resident at once (one wave), a slot per block.
    int per_sm = 0;
    for (std::size_t n : {last_small + 1, std::size_t{1} << 22, std::size_t{1} << 26}) {
      const auto p = s18.plan(n, block, device());
      CHECK(p.scratch_bytes >= 128 + std::size_t{8} * p.grid);
      CHECK(p.zero_scratch_once);
      CHECK(p.grid >= 1);
      CHECK(p.grid <= static_cast<unsigned>(device().max_threads_per_sm / block * device().sm_count));
      per_sm = std::max(per_sm, static_cast<int>((p.grid + device().sm_count - 1) / device().sm_count));
    }
    // At 2^26 the grid fills the GPU: at least every thread an SM of the build's
    // architecture holds (the launch bounds ask for that: on Hopper, 32 registers a thread
    // allow 2048; a build for compute_75 asks for Turing's 1024, and an H100 may fit more;
    // one block of 1024 where common/sm_limits.hpp says two would spill).
    const bool one_block_of_1024 = block == 1024 && common::full_sm_of_1024_is_one_block(common::build_arch());
    const int full = one_block_of_1024
                         ? 1024
                         : std::min(device().max_threads_per_sm, common::max_threads_for_arch(common::build_arch()));
    CHECK(per_sm * block >= full);
    // The boundary, a body whose float4s leave each thread 1 to 3 after its rounds of 4,
    // and a size just past a whole number of rounds.
    for (std::size_t n : {last_small, last_small + 1, (std::size_t{1} << 22) + 4 * 3 + 1, (std::size_t{5} << 21) + 3})
      check_stage(s18, Pattern::mixed_signs, n, block);
  }
}

TEST_CASE("a prepared stage writes where the caller asks, and poisons it first", "[gpu][harness]") {
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const Input& in = input(Pattern::ones, n);
  common::DeviceBuffer<float> out(1);
  for (const char* id : {"tagged_slots", "stream_order"}) {
    const Stage& s = *reduction::find_stage(id);
    PreparedStage prepared(s, in.dev.get(), n, 0, device(), stream(), out.get());
    INFO(id);
    REQUIRE(prepared.args().out == out.get());
    // run_checked poisons the caller's float, launches and reads it back.
    CHECK(prepared.run_checked() == static_cast<float>(n));
    const float poison = common::poison_value();
    CUDA_CHECK(cudaMemcpy(out.get(), &poison, sizeof poison, cudaMemcpyHostToDevice));
    prepared.launch();
    CUDA_CHECK(cudaStreamSynchronize(stream()));
    float written = 0.0f;
    CUDA_CHECK(cudaMemcpy(&written, out.get(), sizeof written, cudaMemcpyDeviceToHost));
    CHECK(written == static_cast<float>(n));
  }
}
