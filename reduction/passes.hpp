// Plumbing shared by the multi-pass stages (02-05): reduce the array block by block,
// then reduce the block sums the same way, until one value is left.
//
// Pass k reads the previous pass's output and writes a smaller array, alternating
// between two scratch buffers (never reading and writing one buffer in a launch);
// the last pass writes args.out.
#pragma once

#include <cstddef>

#include "grid.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {

// Scratch for passes that shrink the array by `per_block` each time.
inline std::size_t multi_pass_scratch_bytes(std::size_t n, std::size_t per_block) {
  const std::size_t first = ceil_div(n, per_block);
  if (first <= 1) return 0;
  return (first + ceil_div(first, per_block)) * sizeof(float);
}

// Error depth: every pass is a tree over at most per_block values.
inline std::size_t multi_pass_depth(std::size_t n, std::size_t per_block) {
  std::size_t depth = 0;
  std::size_t m = n;
  do {
    depth += common::tree_depth(per_block < m ? per_block : m);
    m = ceil_div(m, per_block);
  } while (m > 1);
  return depth;
}

// Calls launch_pass(src, m, dst, blocks) once per pass, where blocks = ceil(m / per_block).
template <typename LaunchPass>
void run_passes(const StageArgs& a, std::size_t per_block, LaunchPass launch_pass) {
  float* buffers[2] = {static_cast<float*>(a.scratch), nullptr};
  if (a.scratch != nullptr) buffers[1] = buffers[0] + ceil_div(a.n, per_block);
  const float* src = a.in;
  std::size_t m = a.n;
  int which = 0;
  do {
    const std::size_t blocks = ceil_div(m, per_block);
    float* dst = blocks == 1 ? a.out : buffers[which];
    launch_pass(src, m, dst, blocks);
    src = dst;
    m = blocks;
    which ^= 1;
  } while (m > 1);
}

}  // namespace reduction
