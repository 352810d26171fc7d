// The occupancy programs' GPU parts: 01's records, the three SGEMM builds, 03's
// reduction, and the hand-computed occupancy against the CUDA occupancy API.
#include <cuda_runtime.h>

#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_limits.hpp"
#include "gemm_check.hpp"
#include "inputs.hpp"
#include "occupancy_calc.hpp"
#include "programs.hpp"
#include "sgemm.hpp"
#include "sweep.hpp"
#include "thread_records.hpp"
#include "verify.hpp"

namespace {

const occupancy::DeviceLimits& limits() {
  static const occupancy::DeviceLimits d = occupancy::query_device_limits(0);
  return d;
}

// C = A x B on the device with build `build`; C is poisoned first, so an unwritten
// element fails the check.
occupancy::GemmCheck run_sgemm(occupancy::SgemmBuild build, int m, int n, int k, std::uint64_t seed) {
  const auto a = common::make_input(common::Pattern::mixed_signs, seed, static_cast<std::size_t>(m) * k);
  const auto b = common::make_input(common::Pattern::mixed_signs, seed + 1, static_cast<std::size_t>(k) * n);
  std::vector<float> c(static_cast<std::size_t>(m) * n, common::poison_value());
  common::DeviceBuffer<float> d_a(a.size());
  common::DeviceBuffer<float> d_b(b.size());
  common::DeviceBuffer<float> d_c(c.size());
  common::copy_to_device(d_a.get(), a.data(), d_a.bytes());
  common::copy_to_device(d_b.get(), b.data(), d_b.bytes());
  common::copy_to_device(d_c.get(), c.data(), d_c.bytes());
  occupancy::launch_sgemm(build, d_a.get(), d_b.get(), d_c.get(), m, n, k, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(c.data(), d_c.get(), d_c.bytes(), cudaMemcpyDeviceToHost));
  return occupancy::check_gemm(a, b, c, m, n, k);
}

occupancy::KernelResources resources_of(const void* kernel, int threads) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  occupancy::KernelResources k;
  k.threads_per_block = threads;
  k.regs_per_thread = attr.numRegs;
  k.static_shared = attr.sharedSizeBytes;
  k.max_threads_per_block = attr.maxThreadsPerBlock;
  return k;
}

int api_blocks_per_sm(const void* kernel, int threads) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return blocks;
}

}  // namespace

TEST_CASE("01: every thread is recorded exactly once", "[gpu][occupancy][records]") {
  const auto sms = static_cast<std::uint32_t>(limits().sm_count);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> shapes = {
      {1, 1}, {1, 32}, {3, 100}, {2 * sms, 256}, {7, 1024}, {1000, 1000}, {4 * sms, 33}};
  for (const auto& [grid, block] : shapes) {
    INFO("grid " << grid << " x block " << block);
    const auto records = occupancy::record_threads(grid, block);
    const auto coverage = occupancy::check_coverage(records, grid, block);
    INFO(coverage.detail);
    REQUIRE(coverage.ok);
    const auto s = occupancy::summarize_records(records, grid, block);
    for (const auto& r : records) REQUIRE(r.smid < sms);
    CHECK(s.blocks_one_sm == grid);  // a block never spans SMs
    CHECK(s.warps_one_sm == s.warps);
    CHECK(s.lanes_match_hardware == records.size());
    std::vector<bool> ticket_seen(s.warps, false);  // warp tickets are a permutation of 0..warps-1
    for (const auto& r : records) {
      REQUIRE(r.warp_ticket < s.warps);
      if (r.lane == 0) {
        REQUIRE_FALSE(ticket_seen[r.warp_ticket]);
        ticket_seen[r.warp_ticket] = true;
      }
    }
  }
}

TEST_CASE("02: every SGEMM build is correct for square and ragged shapes", "[gpu][occupancy][sgemm]") {
  const std::vector<std::tuple<int, int, int>> shapes = {{512, 512, 512}, {64, 64, 64},   {1, 1, 1},    {100, 37, 129},
                                                         {257, 130, 31},  {3, 200, 1000}, {128, 64, 16}};
  for (const auto build : occupancy::all_sgemm_builds()) {
    for (const auto& [m, n, k] : shapes) {
      INFO(occupancy::sgemm_build_id(build) << ": " << m << " x " << n << " x " << k);
      const auto check = run_sgemm(build, m, n, k, 11);
      INFO(check.detail);
      CHECK(check.ok);
      CHECK(check.checked == static_cast<std::size_t>(m) * n);
    }
  }
}

TEST_CASE("02: the register limits do what they promise", "[gpu][occupancy][sgemm]") {
  using occupancy::SgemmBuild;
  cudaFuncAttributes capped{};
  CUDA_CHECK(cudaFuncGetAttributes(&capped, occupancy::sgemm_kernel(SgemmBuild::maxrregcount)));
  CHECK(capped.numRegs <= occupancy::sgemm_maxrregcount_limit());
  cudaFuncAttributes bounded{};
  CUDA_CHECK(cudaFuncGetAttributes(&bounded, occupancy::sgemm_kernel(SgemmBuild::launch_bounds)));
  CHECK(bounded.maxThreadsPerBlock == occupancy::kSgemmBlockThreads);
  // __launch_bounds__(threads, minBlocks) guarantees at least minBlocks resident blocks.
  CHECK(api_blocks_per_sm(occupancy::sgemm_kernel(SgemmBuild::launch_bounds), occupancy::kSgemmBlockThreads) >=
        occupancy::sgemm_launch_bounds_min_blocks());
}

TEST_CASE("the hand-computed occupancy equals the CUDA occupancy API", "[gpu][occupancy][calc]") {
  for (const auto build : occupancy::all_sgemm_builds()) {
    const void* kernel = occupancy::sgemm_kernel(build);
    const auto mine = occupancy::compute_occupancy(limits(), resources_of(kernel, occupancy::kSgemmBlockThreads));
    INFO(occupancy::sgemm_build_id(build));
    CHECK(mine.blocks_per_sm == api_blocks_per_sm(kernel, occupancy::kSgemmBlockThreads));
  }
  for (int block = 32; block <= limits().max_threads_per_block; block *= 2) {
    const void* kernel = occupancy::sweep_sum_kernel();
    const auto mine = occupancy::compute_occupancy(limits(), resources_of(kernel, block));
    INFO("sweep kernel, block " << block);
    CHECK(mine.blocks_per_sm == api_blocks_per_sm(kernel, block));
  }
}

TEST_CASE("03: the sweep's reduction is correct for every shape it is timed with", "[gpu][occupancy][sweep]") {
  const std::size_t n_max = (std::size_t{1} << 20) + 7;
  const auto host = common::make_input(common::Pattern::uniform, 5, n_max);
  common::DeviceBuffer<float> input(n_max);
  common::copy_to_device(input.get(), host.data(), input.bytes());
  const auto sms = static_cast<unsigned>(limits().sm_count);
  common::DeviceBuffer<float> partials(32 * sms);
  common::DeviceBuffer<float> out(1);
  for (const std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1025}, n_max}) {
    const std::vector<float> prefix(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(n));
    const auto ref = common::reference_sum(prefix);
    for (const int block : {32, 256, 1024})
      for (const unsigned grid : {1u, sms, 32 * sms}) {
        const float poison = common::poison_value();
        common::copy_to_device(out.get(), &poison, sizeof poison);
        occupancy::launch_sweep_sum(input.get(), n, partials.get(), out.get(), grid, block, occupancy::kSweepFinalBlock,
                                    nullptr);
        float result = 0.0f;
        CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
        const auto check = common::check_sum(
            result, ref, occupancy::sweep_error_depth(n, grid, block, occupancy::kSweepFinalBlock), n);
        INFO("n " << n << ", grid " << grid << ", block " << block << ": " << check.detail);
        CHECK(check.ok);
      }
  }
}
