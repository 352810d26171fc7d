// 03_occupancy_sweep: the reduction it times and the pure logic of its verdict.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace occupancy {

// Threads of the second launch, which sums the first launch's per-block partials.
constexpr int kSweepFinalBlock = 1024;

// The reduction kernel (for cudaFuncGetAttributes and the occupancy API).
const void* sweep_sum_kernel();

// Enqueues the whole sum of in[0, n) into *out: `grid` blocks of `block` threads write
// one partial each into `partials` (grid floats), then one block of `final_block`
// threads sums those. block and final_block: multiples of 32, at most 1024.
void launch_sweep_sum(const float* in, std::size_t n, float* partials, float* out, unsigned grid, int block,
                      int final_block, cudaStream_t stream);

// Most float additions an element passes through (common/verify.hpp's model).
std::size_t sweep_error_depth(std::size_t n, std::size_t grid, std::size_t block, std::size_t final_block);

struct SweepPoint {
  int block = 0;
  int per_sm = 0;
  double occupancy = 0.0;  // theoretical, of this launch: resident warps / max warps per SM
  double median_us = 0.0;
  bool ok = false;  // verified; rows that failed take no part in the verdict
};

struct SweepVerdict {
  bool any = false;         // at least one verified row
  std::size_t fastest = 0;  // index into the points
  double max_occupancy = 0.0;
  std::vector<std::size_t> max_occupancy_rows;  // every verified row at max_occupancy
  std::size_t fastest_at_max = 0;               // the fastest of those
  bool agree = false;                           // the fastest row is one of the max-occupancy rows
  double slowdown = 1.0;                        // time of fastest_at_max / time of fastest
  std::string text;                             // the sentence the program prints
};

// Pure. Ties on time go to the earlier row.
SweepVerdict judge_sweep(const std::vector<SweepPoint>& points);

}  // namespace occupancy
