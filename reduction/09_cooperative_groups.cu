// Stage 09: the same reduction written with cooperative groups.
//
// Idea: cooperative groups make the set of threads that take part in a collective
// operation an explicit object. this_thread_block() is the block, and
// tiled_partition<32>(block) splits it into tiles of 32 threads (warps). A tile
// knows its size, its rank in the block (meta_group_rank) and how many tiles there
// are (meta_group_size); tile.shfl_down() needs no mask because the tile is the
// mask, and block.sync() is the block barrier. The kernel does what stage 08 does;
// the reduction helpers now take the group they reduce over, so the same code
// works for any tile, and the reader sees who must participate.
// Fixes: nothing in speed (the book saw none either); it fixes the book's use of the
// API (erratum 6 in chapters/23_why_our_numbers_differ.md): the book's block
// reduction called block.sync() inside the branch that chooses the working threads,
//
//     for (unsigned stride = block.size() / 2; stride > 0; stride /= 2) {
//       if (tid < stride) {
//         partial[tid] += partial[tid + stride];
//         block.sync();  // WRONG: only the threads with tid < stride get here
//       }
//     }
//
// block.sync() is __syncthreads(): a barrier for every thread of the block. In code
// that only some of the threads reach, it is undefined behaviour (CUDA C++
// Programming Guide, on __syncthreads in conditional code): it may hang, or
// release the waiting threads while the others still write the shared array, and
// whether it seems to work depends on the GPU and the compiler. The barrier belongs
// outside the branch, where every thread reaches it once per level:
//
//     for (unsigned stride = block.size() / 2; stride > 0; stride /= 2) {
//       if (tid < stride) partial[tid] += partial[tid + stride];
//       block.sync();  // every thread of the block, every level
//     }
//
// The kernel below keeps that rule: its one block.sync() is outside every branch.
// The same reasoning rules out coalesced_threads() as the group of a reduction:
// like __activemask() it names only the threads that happen to be converged.
// Expect: the same time as stage 08: the groups compile to the same shuffles and
// barrier, plus a few instructions to compute ranks; in Nsight Compute, nearly the
// same instruction count (smsp__inst_executed.sum).
// Chapter: chapters/09_cooperative_groups.md
#include <cooperative_groups.h>

#include <algorithm>

#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace cg = cooperative_groups;

namespace reduction {
namespace {

constexpr int kNumLoad = 4;
constexpr unsigned kTileSize = 32;  // a warp
constexpr unsigned kMaxTiles = 1024 / kTileSize;

// Rank 0 of the tile ends up with the tile's sum. Every thread of the tile must call it.
__device__ float tile_sum(const cg::thread_block_tile<kTileSize>& tile, float v) {
  for (unsigned offset = tile.num_threads() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  return v;
}

// Rank 0 of the block ends up with the block's sum. Every thread of the block must
// call it; the block is a whole number of tiles (powers of two from 32).
__device__ float block_sum(const cg::thread_block& block, float v) {
  __shared__ float tile_sums[kMaxTiles];
  const cg::thread_block_tile<kTileSize> tile = cg::tiled_partition<kTileSize>(block);
  v = tile_sum(tile, v);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();                       // outside the branch: every thread of the block reaches it
  if (tile.meta_group_rank() == 0) {  // the whole first tile enters
    v = tile.thread_rank() < tile.meta_group_size() ? tile_sums[tile.thread_rank()] : 0.0f;
    v = tile_sum(tile, v);
  }
  return v;
}

__global__ void grid_stride_sum_groups(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  const cg::thread_block block = cg::this_thread_block();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * block.num_threads();
  std::size_t i = blockIdx.x * static_cast<std::size_t>(block.num_threads()) + block.thread_rank();

  float sum[kNumLoad] = {};
  for (; i + (kNumLoad - 1) * stride < n; i += kNumLoad * stride)
    for (int k = 0; k < kNumLoad; ++k) sum[k] += in[i + k * stride];
  // Fewer than kNumLoad elements are left for this thread: load them together too (a missing
  // one reads as 0), so that the last round costs one trip to memory, not one per element.
  float last[kNumLoad];
  for (int k = 0; k < kNumLoad; ++k) last[k] = i + k * stride < n ? in[i + k * stride] : 0.0f;
  for (int k = 0; k < kNumLoad; ++k) sum[k] += last[k];

  float thread_sum = 0.0f;
  for (int k = 0; k < kNumLoad; ++k) thread_sum += sum[k];
  const float total = block_sum(block, thread_sum);
  if (block.thread_rank() == 0) block_sums[blockIdx.x] = total;
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm = blocks_per_sm(grid_stride_sum_groups, block);
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads * kNumLoad);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = grid > 1 ? grid * sizeof(float) : 0;
  // The summation order is stage 08's.
  const std::size_t second = grid > 1 ? common::blocked_depth(grid, threads) + kNumLoad : 0;
  p.error_depth = common::blocked_depth(n, grid * threads) + kNumLoad + second;
  return p;
}

void launch(const StageArgs& a) {
  float* partials = a.grid > 1 ? static_cast<float*>(a.scratch) : a.out;
  grid_stride_sum_groups<<<a.grid, a.block, 0, a.stream>>>(a.in, a.n, partials);
  CUDA_CHECK_LAUNCH();
  if (a.grid > 1) {
    grid_stride_sum_groups<<<1, a.block, 0, a.stream>>>(partials, a.grid, a.out);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

Stage describe_cooperative_groups() {
  Stage s;
  s.number = 9;
  s.id = "cooperative_groups";
  s.title = "cooperative groups";
  s.source = "reduction/09_cooperative_groups.cu";
  s.chapter = "chapters/09_cooperative_groups.md";
  s.blocks.preferred = 256;
  s.blocks.max = 1024;  // tile_sums holds one value per tile of a 1024-thread block
  s.deterministic = true;
  s.book_v100_ms = 0.264;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
