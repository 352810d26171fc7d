// The launch shapes of the stages as host arithmetic on a description of the GPU.
//
// Every number in a grid that differs between GPUs comes from common::DeviceInfo, which
// common::query_device fills from cudaGetDeviceProperties at run time: the SM count, the
// threads and blocks one SM holds, the L2 size, the compute capability and whether the
// GPU launches clusters. The one input that needs the GPU itself is the occupancy API's
// answer for a kernel (how many of its blocks fit on one SM, which depends on its
// registers); a stage's plan() asks for it and passes it in. Nothing here assumes an
// H100 or H200: tests/host/test_launch_shape.cpp runs these functions for a T4, an
// RTX 3090 (compute capability 8.6), an RTX 4090, an A100, an H100 and an H200, and
// checks that the H100 and H200 get exactly the grids recorded in the committed results.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "device_info.hpp"

namespace reduction::shape {

// a / b rounded up (b > 0).
constexpr std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Blocks of `block` threads resident on one SM: `occupancy` (the occupancy API's answer
// for the kernel), never more than the SM's thread and block-slot limits, and at least 1
// (a grid of no blocks would sum nothing). A limit of 0 in `d` means "unknown".
inline int resident_per_sm(const common::DeviceInfo& d, int block, int occupancy) {
  int per_sm = occupancy;
  if (d.max_threads_per_sm > 0 && block > 0) per_sm = std::min(per_sm, d.max_threads_per_sm / block);
  if (d.max_blocks_per_sm > 0) per_sm = std::min(per_sm, d.max_blocks_per_sm);
  return std::max(per_sm, 1);
}

// One wave: every SM holding resident_per_sm blocks.
inline std::size_t one_wave(const common::DeviceInfo& d, int block, int occupancy) {
  return static_cast<std::size_t>(resident_per_sm(d, block, occupancy)) *
         static_cast<std::size_t>(std::max(d.sm_count, 1));
}

// One wave, but no more blocks than ceil(n / per_block), where each block takes
// per_block elements; at least one. reduction::resident_grid (grid.hpp), which stages
// 06-12 and 17 call with the SM count, is the same for any occupancy answer within the
// SM's limits (the test checks both agree).
inline std::size_t wave_grid(const common::DeviceInfo& d, int block, int occupancy, std::size_t n,
                             std::size_t per_block) {
  return std::max<std::size_t>(1, std::min(one_wave(d, block, occupancy), div_up(n, per_block)));
}

// Stages 13 and 14: one wave of at most kTargetThreadsPerSm threads per SM, each thread
// given at least kMinVectorsPerThread float4s. The cap was measured on an H200 (the shapes
// experiment, lab/notes/90_lab_notes.md; chapter 13): three quarters of a
// 2,048-thread SM. On an SM of 1,536 threads or fewer (compute capability 7.5, 8.6, 8.9,
// 12.x) it is the whole SM, whatever the occupancy API allows.
constexpr int kTargetThreadsPerSm = 1536;
constexpr int kMinVectorsPerThread = 2;

inline unsigned ticket_grid(const common::DeviceInfo& d, std::size_t n, int block, int occupancy) {
  const int target = std::max(kTargetThreadsPerSm / std::max(block, 1), 1);
  const std::size_t per_block = static_cast<std::size_t>(block) * kMinVectorsPerThread * 4;
  return static_cast<unsigned>(wave_grid(d, block, std::min(occupancy, target), n, per_block));
}

// Stage 16: `tiles` tiles shared among teams, `teams_per_block` to a block. As many teams
// as one wave holds, or fewer when that evens out the tiles per team (`rounds` each, or
// one fewer); only the last block may hold a team with no tile.
inline std::size_t team_grid(const common::DeviceInfo& d, int block, int occupancy, std::size_t tiles,
                             std::size_t teams_per_block) {
  const std::size_t resident = one_wave(d, block, occupancy);
  const std::size_t rounds = div_up(tiles, resident * teams_per_block);
  return std::max<std::size_t>(1, div_up(div_up(tiles, rounds), teams_per_block));
}

// Stage 18: one wave, none without a whole round of `unroll` float4s per thread; with at
// most `rounded_up_to` rounds per thread, as few blocks as cover the array in the same
// number of whole rounds (chapter 18).
inline unsigned stream_order_grid(const common::DeviceInfo& d, std::size_t n, int block, int occupancy,
                                  std::size_t unroll, std::size_t rounded_up_to) {
  const std::size_t b = static_cast<std::size_t>(block);
  const std::size_t resident = wave_grid(d, block, occupancy, n, b * unroll * 4);
  const std::size_t rounds = div_up(n / 4, resident * b * unroll);
  if (rounds == 0 || rounds > rounded_up_to) return static_cast<unsigned>(resident);
  return static_cast<unsigned>(div_up(n / 4, rounds * b * unroll));
}

// Thread-block clusters (stage 15) need compute capability 9.0, a GPU that launches them
// and a kernel image compiled for 9.0 or newer (`compiled_arch`, 10 x major + minor of the
// kernel's virtual architecture: common/kernel_image.hpp). Empty when all three hold;
// otherwise the one sentence that says why stage 15 takes stage 14's path here.
inline std::string cluster_refusal(const common::DeviceInfo& d, int compiled_arch) {
  const std::string cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  if (d.cc_major < 9)
    return "stage 15's clusters need compute capability 9.0; this GPU has " + cc +
           ", so stage 15 runs stage 14's path.";
  if (!d.cluster_launch)
    return "this GPU (compute capability " + cc + ") does not launch clusters, so stage 15 runs stage 14's path.";
  if (compiled_arch < 90)
    return "this build's kernels were compiled for compute capability " + std::to_string(compiled_arch / 10) + "." +
           std::to_string(compiled_arch % 10) + ", before clusters (9.0), so stage 15 runs stage 14's path.";
  return "";
}

}  // namespace reduction::shape
