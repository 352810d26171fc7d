// The occupancy arithmetic of occupancy/occupancy_calc.hpp: fixed examples worked out by
// hand, and agreement with NVIDIA's own calculator (cuda_occupancy.h, header-only, the
// code behind the CUDA Occupancy Calculator) over a grid of kernels and devices.
#include <cuda_occupancy.h>

#include <climits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "occupancy_calc.hpp"

using occupancy::compute_occupancy;
using occupancy::DeviceLimits;
using occupancy::KernelResources;

namespace {

KernelResources kernel(int threads, int regs, std::size_t static_shared = 0, std::size_t dynamic_shared = 0) {
  KernelResources k;
  k.threads_per_block = threads;
  k.regs_per_thread = regs;
  k.static_shared = static_shared;
  k.dynamic_shared = dynamic_shared;
  return k;
}

// Limits of a few real devices (values of cudaGetDeviceProperties on each).
DeviceLimits a100() {
  DeviceLimits d;
  d.cc_major = 8;
  d.cc_minor = 0;
  d.sm_count = 108;
  d.shared_per_sm = 167936;
  return d;
}

DeviceLimits rtx3090() {
  DeviceLimits d;
  d.cc_major = 8;
  d.cc_minor = 6;
  d.sm_count = 82;
  d.max_threads_per_sm = 1536;
  d.max_blocks_per_sm = 16;
  d.shared_per_sm = 102400;
  return d;
}

DeviceLimits v100() {
  DeviceLimits d;
  d.cc_major = 7;
  d.cc_minor = 0;
  d.sm_count = 80;
  d.shared_per_sm = 98304;
  d.reserved_shared_per_block = 0;
  d.shared_alloc_unit = 256;
  return d;
}

}  // namespace

TEST_CASE("occupancy by hand: Hopper examples with known answers", "[occupancy][calc]") {
  const DeviceLimits h = occupancy::hopper_limits();
  REQUIRE(h.max_warps_per_sm() == 64);

  SECTION("256 threads, 32 registers: warps and registers both allow 8 blocks, 100%") {
    const auto r = compute_occupancy(h, kernel(256, 32, 2048));
    CHECK(r.warps_per_block == 8);
    CHECK(r.by_warps == 8);
    CHECK(r.by_registers == 8);       // 1024 registers per warp, 16 warps per sub-partition
    CHECK(r.by_shared_memory == 76);  // (2048 + 1024 reserved) per block, 233472 per SM
    CHECK(r.blocks_per_sm == 8);
    CHECK(r.occupancy == 1.0);
    CHECK(r.limiters == (occupancy::kLimitWarps | occupancy::kLimitRegisters));
  }
  SECTION("256 threads, 80 registers: 2560 per warp, 6 warps per sub-partition, 3 blocks, 37.5%") {
    const auto r = compute_occupancy(h, kernel(256, 80, 8192));
    CHECK(r.regs_per_warp == 2560);
    CHECK(r.by_registers == 3);
    CHECK(r.blocks_per_sm == 3);
    CHECK(r.occupancy == 0.375);
    CHECK(r.limiters == occupancy::kLimitRegisters);
    CHECK(occupancy::limiter_names(r.limiters) == "registers");
  }
  SECTION("256 threads, 64 registers: 4 blocks, 50%") {
    const auto r = compute_occupancy(h, kernel(256, 64, 8192));
    CHECK(r.blocks_per_sm == 4);
    CHECK(r.occupancy == 0.5);
  }
  SECTION("48 registers: 1536 per warp, 10 (not 10.67) warps per sub-partition, 5 blocks") {
    const auto r = compute_occupancy(h, kernel(256, 48));
    CHECK(r.by_registers == 5);
    CHECK(r.occupancy == 0.625);
  }
  SECTION("37 registers round up like 40: 1184 -> 1280 per warp, 12 warps per sub-partition, 6 blocks") {
    const auto r = compute_occupancy(h, kernel(256, 37));
    CHECK(r.regs_per_warp == 1280);
    CHECK(r.by_registers == 6);
    CHECK(r.occupancy == 0.75);
  }
  SECTION("32-thread blocks run out of block slots at 32 blocks: 50%") {
    const auto r = compute_occupancy(h, kernel(32, 16));
    CHECK(r.by_block_slots == 32);
    CHECK(r.blocks_per_sm == 32);
    CHECK(r.occupancy == 0.5);
    CHECK(r.limiters == occupancy::kLimitBlockSlots);
  }
  SECTION("a partial warp takes a whole warp slot: 100 threads = 4 warps") {
    const auto r = compute_occupancy(h, kernel(100, 32));
    CHECK(r.warps_per_block == 4);
    CHECK(r.by_warps == 16);
    CHECK(r.blocks_per_sm == 16);
  }
  SECTION("shared memory limits: 48 KiB static + 1 KiB reserved per block, 4 blocks of 128 threads, 25%") {
    const auto r = compute_occupancy(h, kernel(128, 32, 48 * 1024));
    CHECK(r.shared_per_block == 50176);
    CHECK(r.by_shared_memory == 4);
    CHECK(r.blocks_per_sm == 4);
    CHECK(r.occupancy == 0.25);
    CHECK(r.limiters == occupancy::kLimitSharedMemory);
  }
  SECTION("shared memory is allocated in 128-byte units") {
    CHECK(compute_occupancy(h, kernel(64, 16, 1)).shared_per_block == 1152);
    CHECK(compute_occupancy(h, kernel(64, 16, 128)).shared_per_block == 1152);
    CHECK(compute_occupancy(h, kernel(64, 16, 129)).shared_per_block == 1280);
  }
  SECTION("1024 threads x 64 registers fills the register file exactly: 1 block, 50%") {
    const auto r = compute_occupancy(h, kernel(1024, 64));
    CHECK(r.blocks_per_sm == 1);
    CHECK(r.occupancy == 0.5);
  }
  SECTION("1024 threads x 72 registers cannot launch at all") {
    const auto r = compute_occupancy(h, kernel(1024, 72));
    CHECK(r.blocks_per_sm == 0);
    CHECK(r.occupancy == 0.0);
    CHECK(r.why_zero.find("registers") != std::string::npos);
  }
  SECTION("more shared memory than a block may use cannot launch") {
    const auto r = compute_occupancy(h, kernel(256, 32, 40000, 12000));
    CHECK(r.blocks_per_sm == 0);
    CHECK(r.why_zero.find("shared memory") != std::string::npos);
  }
  SECTION("a block larger than __launch_bounds__ allows cannot launch") {
    KernelResources k = kernel(512, 32);
    k.max_threads_per_block = 256;
    CHECK(compute_occupancy(h, k).blocks_per_sm == 0);
    k.threads_per_block = 256;
    CHECK(compute_occupancy(h, k).blocks_per_sm == 8);
  }
  SECTION("zero registers (an empty kernel) never limits") {
    const auto r = compute_occupancy(h, kernel(1024, 0));
    CHECK(r.by_registers == INT_MAX);
    CHECK(r.blocks_per_sm == 2);
  }
}

TEST_CASE("occupancy by hand: other architectures", "[occupancy][calc]") {
  // Ampere consumer parts have 48 warps and 16 block slots per SM.
  const auto r = compute_occupancy(rtx3090(), kernel(256, 32));
  CHECK(r.by_warps == 6);
  CHECK(r.blocks_per_sm == 6);
  CHECK(r.occupancy == 1.0);
  CHECK(compute_occupancy(rtx3090(), kernel(32, 16)).blocks_per_sm == 16);
  // Volta: no per-block reservation, 256-byte shared-memory units.
  CHECK(compute_occupancy(v100(), kernel(64, 16, 1)).shared_per_block == 256);
}

TEST_CASE("occupancy by hand agrees with cuda_occupancy.h over a grid of kernels", "[occupancy][calc]") {
  const std::vector<int> threads = {1, 31, 32, 33, 64, 96, 100, 128, 192, 256, 384, 512, 640, 768, 1000, 1024};
  const std::vector<int> regs = {0, 1, 8, 16, 24, 32, 37, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255};
  const std::vector<std::size_t> statics = {0, 1, 2048, 8192, 12000, 16384, 32768, 48000, 49152};
  const std::vector<std::size_t> dynamics = {0, 4096};
  const std::vector<std::pair<std::string, DeviceLimits>> devices = {
      {"H200", occupancy::hopper_limits()}, {"A100", a100()}, {"RTX 3090", rtx3090()}, {"V100", v100()}};

  std::size_t compared = 0;
  std::size_t nonzero = 0;
  for (const auto& [name, d] : devices) {
    cudaOccDeviceProp prop;
    prop.computeMajor = d.cc_major;
    prop.computeMinor = d.cc_minor;
    prop.maxThreadsPerBlock = d.max_threads_per_block;
    prop.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
    prop.regsPerBlock = d.regs_per_block;
    prop.regsPerMultiprocessor = d.regs_per_sm;
    prop.warpSize = d.warp_size;
    prop.sharedMemPerBlock = d.shared_per_block;
    prop.sharedMemPerMultiprocessor = d.shared_per_sm;
    prop.numSms = d.sm_count;
    prop.sharedMemPerBlockOptin = d.shared_per_sm - d.reserved_shared_per_block;
    prop.reservedSharedMemPerBlock = d.reserved_shared_per_block;
    cudaOccDeviceState state;
    for (int t : threads)
      for (int r : regs)
        for (std::size_t s : statics)
          for (std::size_t dyn : dynamics) {
            cudaOccFuncAttributes attr;
            attr.maxThreadsPerBlock = 1024;
            attr.numRegs = r;
            attr.sharedSizeBytes = s;
            attr.numBlockBarriers = 1;
            cudaOccResult expected{};
            REQUIRE(cudaOccMaxActiveBlocksPerMultiprocessor(&expected, &prop, &attr, &state, t, dyn) ==
                    CUDA_OCC_SUCCESS);
            const auto mine = compute_occupancy(d, kernel(t, r, s, dyn));
            INFO(name << ": " << t << " threads, " << r << " registers, " << s << " + " << dyn << " bytes shared");
            REQUIRE(mine.blocks_per_sm == expected.activeBlocksPerMultiprocessor);
            if (mine.blocks_per_sm > 0) {
              ++nonzero;
              CHECK(((mine.limiters & occupancy::kLimitRegisters) != 0) ==
                    ((expected.limitingFactors & OCC_LIMIT_REGISTERS) != 0));
              CHECK(((mine.limiters & occupancy::kLimitSharedMemory) != 0) ==
                    ((expected.limitingFactors & OCC_LIMIT_SHARED_MEMORY) != 0));
              CHECK(((mine.limiters & occupancy::kLimitWarps) != 0) ==
                    ((expected.limitingFactors & OCC_LIMIT_WARPS) != 0));
              CHECK(((mine.limiters & occupancy::kLimitBlockSlots) != 0) ==
                    ((expected.limitingFactors & OCC_LIMIT_BLOCKS) != 0));
            }
            ++compared;
          }
  }
  CHECK(compared == 4 * threads.size() * regs.size() * statics.size() * dynamics.size());
  CHECK(nonzero > compared / 2);  // the grid exercises real launches, not just refusals
}
