#include "occupancy_calc.hpp"

#include <algorithm>
#include <climits>

namespace occupancy {

DeviceLimits hopper_limits(int sm_count) {
  DeviceLimits d;  // the defaults are the compute capability 9.0 values
  d.sm_count = sm_count;
  return d;
}

std::string limiter_names(unsigned limiters) {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if ((limiters & bit) == 0) return;
    if (!out.empty()) out += " + ";
    out += name;
  };
  add(kLimitRegisters, "registers");
  add(kLimitSharedMemory, "shared memory");
  add(kLimitWarps, "warps");
  add(kLimitBlockSlots, "block slots");
  return out.empty() ? "-" : out;
}

OccupancyResult compute_occupancy(const DeviceLimits& d, const KernelResources& k) {
  OccupancyResult r;
  const int block_limit = k.max_threads_per_block > 0 ? std::min(k.max_threads_per_block, d.max_threads_per_block)
                                                      : d.max_threads_per_block;
  if (k.threads_per_block <= 0 || k.threads_per_block > block_limit) {
    r.why_zero = "a block of " + std::to_string(k.threads_per_block) + " threads is outside 1.." +
                 std::to_string(block_limit) + " (the kernel's or the device's limit)";
    return r;
  }
  r.warps_per_block = (k.threads_per_block + d.warp_size - 1) / d.warp_size;

  // Warps: a partial warp still takes a whole warp slot.
  r.by_warps = d.max_warps_per_sm() / r.warps_per_block;
  r.by_block_slots = d.max_blocks_per_sm;

  // Registers are handed out per warp, in units of reg_alloc_unit, from one of the
  // sub-partitions; a warp never straddles two of them.
  r.by_registers = INT_MAX;
  if (k.regs_per_thread > 0) {
    r.regs_per_warp =
        static_cast<int>(round_up(static_cast<long long>(k.regs_per_thread) * d.warp_size, d.reg_alloc_unit));
    // The launch check assumes the block's warps are spread over all sub-partitions.
    const long long regs_checked =
        static_cast<long long>(r.regs_per_warp) * round_up(r.warps_per_block, d.sub_partitions);
    if (k.regs_per_thread > d.max_regs_per_thread || regs_checked > d.regs_per_block) {
      r.why_zero = std::to_string(k.regs_per_thread) + " registers per thread x " +
                   std::to_string(k.threads_per_block) + " threads is more than the " +
                   std::to_string(d.regs_per_block) + " registers a block may use";
      r.by_registers = 0;
    } else {
      const int warps_per_part = (d.regs_per_sm / d.sub_partitions) / r.regs_per_warp;
      r.by_registers = warps_per_part * d.sub_partitions / r.warps_per_block;
    }
  }

  // Shared memory: the driver reserves some per block; allocation is rounded up.
  r.shared_per_block = static_cast<std::size_t>(round_up(
      static_cast<long long>(k.static_shared + k.dynamic_shared + d.reserved_shared_per_block), d.shared_alloc_unit));
  r.by_shared_memory = INT_MAX;
  if (r.shared_per_block > d.shared_per_block + d.reserved_shared_per_block) {
    r.by_shared_memory = 0;
    if (r.why_zero.empty())
      r.why_zero = std::to_string(k.static_shared + k.dynamic_shared) + " bytes of shared memory is more than the " +
                   std::to_string(d.shared_per_block) + " a block may use";
  } else if (r.shared_per_block > 0) {
    r.by_shared_memory = static_cast<int>(d.shared_per_sm / r.shared_per_block);
  }

  r.blocks_per_sm = std::min({r.by_warps, r.by_block_slots, r.by_registers, r.by_shared_memory});
  if (r.blocks_per_sm > 0) {
    if (r.by_warps == r.blocks_per_sm) r.limiters |= kLimitWarps;
    if (r.by_block_slots == r.blocks_per_sm) r.limiters |= kLimitBlockSlots;
    if (r.by_registers == r.blocks_per_sm) r.limiters |= kLimitRegisters;
    if (r.by_shared_memory == r.blocks_per_sm) r.limiters |= kLimitSharedMemory;
  } else if (r.why_zero.empty()) {
    r.why_zero = "shared memory per SM is too small for one block";
  }
  r.active_warps = r.blocks_per_sm * r.warps_per_block;
  r.occupancy = static_cast<double>(r.active_warps) / d.max_warps_per_sm();
  return r;
}

}  // namespace occupancy
