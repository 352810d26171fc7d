// multi_gpu/: every method of the multi-GPU sum on one GPU (NCCL with a single rank) at
// sizes that leave blocks and vectors partly full, for several input patterns; on one
// GPU every method reduces to the stage's own sum of the one shard, so all give the same
// bits. The fixed-order combine gives the same bits run after run. Where the machine has
// several GPUs, every method runs on all of them too.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_info.hpp"
#include "gpu_team.hpp"
#include "inputs.hpp"
#include "verify.hpp"

using multi_gpu::GpuTeam;
using multi_gpu::Method;

namespace {

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

multi_gpu::TeamSetup setup_for(int gpus, std::vector<std::uint64_t> sizes, const std::string& pattern) {
  multi_gpu::TeamSetup s;
  s.gpus = gpus;
  s.sizes = std::move(sizes);
  s.pattern = pattern;
  s.seed = 7;
  return s;
}

const std::vector<std::uint64_t> kSizes = {1, 33, 1025, 4097, (std::uint64_t{1} << 20) + 7, std::uint64_t{3} << 22};

}  // namespace

TEST_CASE("NCCL_NVLS_ENABLE is set to 0 unless the environment sets it", "[multi_gpu]") {
  const char* before = std::getenv("NCCL_NVLS_ENABLE");
  const std::string saved = before != nullptr ? before : "";
  unsetenv("NCCL_NVLS_ENABLE");
  CHECK(multi_gpu::keep_nvls_off() == "0");
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  CHECK(multi_gpu::keep_nvls_off() == "1");
  if (before != nullptr)
    setenv("NCCL_NVLS_ENABLE", saved.c_str(), 1);
  else
    setenv("NCCL_NVLS_ENABLE", "0", 1);
}

TEST_CASE("every method on one GPU matches the reference and the stage's own bits", "[multi_gpu]") {
  multi_gpu::keep_nvls_off();
  for (const char* pattern : {"uniform", "mixed_signs", "ones", "large", "with_nan"}) {
    GpuTeam team(setup_for(1, kSizes, pattern));
    team.use(1);
    const std::vector<float> shard = common::make_input(common::parse_pattern(pattern), 7, kSizes.back());
    for (const std::uint64_t n : kSizes) {
      team.set_size(n);
      INFO("pattern " << pattern << ", n " << n);
      // The team's reference is that of the first n values of shard 0 (seed 7).
      const common::Reference direct =
          common::reference_sum(std::vector<float>(shard.begin(), shard.begin() + static_cast<long>(n)));
      const common::Reference ref = team.reference();
      if (std::isnan(direct.sum))
        CHECK(std::isnan(ref.sum));
      else
        CHECK(ref.sum == direct.sum);

      std::vector<float> results;
      for (const Method m : multi_gpu::all_methods()) {
        const multi_gpu::Outcome o = team.run_checked(m);
        INFO("method " << multi_gpu::method_id(m) << ": " << o.check.detail);
        REQUIRE(o.results.size() == 1);
        CHECK_FALSE(common::is_poison(o.results[0]));
        CHECK(o.check.ok);
        CHECK(o.bound.depth > 0);
        results.push_back(o.results[0]);
      }
      // One rank: each all-reduce and all-gather is a copy, and the copy to GPU 0 moves
      // nothing, so every method is the stage's sum of the same n values.
      for (std::size_t i = 1; i < results.size(); ++i) {
        INFO("method " << multi_gpu::method_id(multi_gpu::all_methods()[i]) << " gave " << results[i]
                       << ", the first method " << results[0]);
        CHECK(bits(results[i]) == bits(results[0]));
      }
    }
  }
}

TEST_CASE("the fixed-order combine gives the same bits run after run", "[multi_gpu]") {
  multi_gpu::keep_nvls_off();
  const std::vector<std::uint64_t> sizes = {4097, (std::uint64_t{1} << 22) + 3};
  GpuTeam team(setup_for(1, sizes, "mixed_signs"));
  team.use(1);
  for (const std::uint64_t n : sizes) {
    team.set_size(n);
    const multi_gpu::Outcome first = team.run_checked(Method::shard_then_fixed_order);
    REQUIRE(first.check.ok);
    for (int run = 0; run < 20; ++run) {
      const multi_gpu::Outcome again = team.run_checked(Method::shard_then_fixed_order);
      INFO("n " << n << ", run " << run << ": " << again.results[0] << " after " << first.results[0]);
      REQUIRE(bits(again.results[0]) == bits(first.results[0]));
    }
    // Timing runs the same work and leaves it correct.
    common::TimingOptions timing;
    timing.reps = 5;
    timing.min_reps = 5;
    const multi_gpu::TimedOutcome t = team.time(Method::shard_then_fixed_order, timing);
    CHECK(t.timing.reps_run == 5);
    CHECK(t.timing.us.median > 0.0);
    CHECK(t.gated);
    CHECK(bits(team.run_checked(Method::shard_then_fixed_order).results[0]) == bits(first.results[0]));
  }
}

TEST_CASE("every method on every GPU present", "[multi_gpu]") {
  const int present = common::cuda_device_count();
  if (present < 2) {
    WARN("one GPU: the methods across several GPUs are not exercised here");
    return;
  }
  multi_gpu::keep_nvls_off();
  const std::vector<std::uint64_t> sizes = {1, 1025, (std::uint64_t{1} << 20) + 7};
  GpuTeam team(setup_for(present, sizes, "mixed_signs"));
  for (const int count : {2, present}) {
    team.use(count);
    for (const std::uint64_t n : sizes) {
      team.set_size(n);
      for (const Method m : multi_gpu::all_methods()) {
        const multi_gpu::Outcome o = team.run_checked(m);
        INFO(count << " GPUs, n " << n << ", method " << multi_gpu::method_id(m) << ": " << o.check.detail);
        CHECK(o.check.ok);
        if (m == Method::shard_then_fixed_order) CHECK(o.same_bits);
      }
    }
  }
}
