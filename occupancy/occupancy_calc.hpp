// Theoretical occupancy, computed by hand from a kernel's resources and the SM's limits.
//
// This is the arithmetic behind cudaOccupancyMaxActiveBlocksPerMultiprocessor and the
// Nsight Compute "Occupancy" section, written out so a reader can follow it and so the
// programs can say which resource limits a kernel. For devices of compute capability
// 7.0 and newer a block's residency on an SM is limited by four things:
//   - warps:       the SM holds at most max_threads_per_sm / warp_size warps;
//   - block slots: at most max_blocks_per_sm blocks, however small;
//   - registers:   each warp gets regs_per_thread x 32 registers rounded up to the
//                  allocation unit (256), and the register file is split into four
//                  sub-partitions, so whole warps must fit in 1/4 of it;
//   - shared mem:  each block gets its static + dynamic shared memory plus a
//                  per-block reservation (1 KiB on sm_80 and newer), rounded up to
//                  the allocation unit (128 bytes).
// Occupancy = resident warps / max warps per SM. The granularities are not reported
// by any API; they come from the CUDA occupancy calculator (cuda_occupancy.h) and the
// CUDA C++ Programming Guide's table of compute-capability limits.
#pragma once

#include <cstddef>
#include <string>

namespace occupancy {

// What the device allows, per SM and per block.
struct DeviceLimits {
  int cc_major = 9;
  int cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_grid_x = 2147483647;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  std::size_t shared_per_sm = 233472;    // bytes usable by blocks (sharedMemPerMultiprocessor)
  std::size_t shared_per_block = 49152;  // without opting in
  std::size_t reserved_shared_per_block = 1024;
  // Architectural constants no API reports (the same on every architecture from 7.0 to 12.x
  // except the shared-memory unit, which is 256 bytes on 7.x).
  int reg_alloc_unit = 256;  // registers per warp are allocated in units of this many
  int sub_partitions = 4;    // the register file is split into this many equal parts
  int shared_alloc_unit = 128;

  int max_warps_per_sm() const { return max_threads_per_sm / warp_size; }
};

// The NVIDIA H200 / H100 SXM (compute capability 9.0) limits: fixed example inputs for
// the tests and for reading the arithmetic without a GPU.
DeviceLimits hopper_limits(int sm_count = 132);

// What a kernel asks for.
struct KernelResources {
  int threads_per_block = 0;
  int regs_per_thread = 0;
  std::size_t static_shared = 0;   // cudaFuncAttributes::sharedSizeBytes
  std::size_t dynamic_shared = 0;  // third launch parameter
  int max_threads_per_block = 0;   // cudaFuncAttributes::maxThreadsPerBlock (__launch_bounds__); 0 = device limit
};

// Bit flags: which limits bind (give the smallest block count).
enum Limiter : unsigned {
  kLimitNone = 0,
  kLimitWarps = 1u << 0,
  kLimitBlockSlots = 1u << 1,
  kLimitRegisters = 1u << 2,
  kLimitSharedMemory = 1u << 3,
};

struct OccupancyResult {
  int warps_per_block = 0;
  // Blocks per SM each resource alone would allow (a large number when it does not limit).
  int by_warps = 0;
  int by_block_slots = 0;
  int by_registers = 0;
  int by_shared_memory = 0;
  int blocks_per_sm = 0;   // the smallest of the four; 0 when one block cannot run at all
  int active_warps = 0;    // blocks_per_sm x warps_per_block
  double occupancy = 0.0;  // active_warps / max warps per SM, in [0, 1]
  unsigned limiters = kLimitNone;
  int regs_per_warp = 0;             // after rounding to the allocation unit
  std::size_t shared_per_block = 0;  // after adding the reservation and rounding
  std::string why_zero;              // when blocks_per_sm is 0: why the block cannot run
};

// Pure: the same inputs always give the same answer (tested on fixed examples).
OccupancyResult compute_occupancy(const DeviceLimits& device, const KernelResources& kernel);

// "registers", "warps + block slots", ... ("-" when nothing limits).
std::string limiter_names(unsigned limiters);

// Rounds value up to a multiple of unit (unit > 0).
inline long long round_up(long long value, long long unit) { return (value + unit - 1) / unit * unit; }

}  // namespace occupancy
