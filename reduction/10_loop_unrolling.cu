// Stage 10: loop unrolling with compile-time sizes.
//
// Idea: a loop can only be unrolled completely when its trip count is known at
// compile time. Here every count is: the block size is a template parameter (one
// kernel per power of two from 32 to 1024, picked by a switch on the host), the tile
// is a thread_block_tile<32> whose size is part of its type, and each thread takes
// kLoads = 4 elements per grid stride, as in stage 09. `#pragma unroll` turns the load
// loop into four independent loads issued back to back, the last round (fewer than
// four elements left) into four guarded loads issued together, the tile reduction into
// five shuffles, and the reduction across tiles into exactly log2(block / 32) shuffles,
// with no loop counters or branches left.
// Fixes: the runtime block size of stage 09, which kept its reduction across tiles a
// loop of five steps whatever the block. nvcc already unrolls short loops whose count
// is a constant (stage 09's four loads); with the sizes fixed, the pragma makes the
// unrolling a guarantee rather than a heuristic. Only this changes from stage 09: the
// same four loads per thread, the same tail.
// Caveat: unrolling keeps more values live at once, so it costs registers; past the
// budget the occupancy target allows, the compiler spills to local memory or fewer
// blocks fit on an SM. Configure with -DREDUCTION_RESOURCE_USAGE=ON (or compile with
// `nvcc --resource-usage`) to see, for every unrolled_sum<kBlock>, the registers,
// spills and stack frame the compiler chose. __launch_bounds__(kBlock) with kBlock up to
// 256 sets no register limit (65536 / 256 = 256 registers a thread, above the 255 a
// thread can have); it only promises the compiler that no launch is larger.
// Expect: about stage 09's time (the loads were already in flight; the shorter tile
// reduction saves a few instructions per block). In Nsight Compute, fewer executed
// instructions (smsp__inst_executed.sum) and launch__registers_per_thread matching
// the compiler's report.
// Chapter: chapters/10_loop_unrolling.md
#include <cooperative_groups.h>

#include <algorithm>

#include "block_sizes.hpp"
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace cg = cooperative_groups;

namespace reduction {
namespace {

constexpr int kLoads = 4;           // as stage 09: this stage changes only what is known at compile time
constexpr unsigned kTileSize = 32;  // a warp

template <unsigned kBlock>
__global__ void __launch_bounds__(kBlock)
    unrolled_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  static_assert(kBlock % kTileSize == 0 && kBlock <= 1024, "the block is a whole number of tiles");
  constexpr unsigned kTiles = kBlock / kTileSize;
  static_assert((kTiles & (kTiles - 1)) == 0, "the sum across tiles halves its offset: a power-of-two number of tiles");
  __shared__ float tile_sums[kTiles];

  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<kTileSize> tile = cg::tiled_partition<kTileSize>(block);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;

  float sum[kLoads] = {};
  for (; i + (kLoads - 1) * stride < n; i += kLoads * stride) {
#pragma unroll
    for (int k = 0; k < kLoads; ++k) sum[k] += in[i + k * stride];
  }
  // The last round, fewer than kLoads elements: loaded together as well (chapter 10).
  float last[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) last[k] = i + k * stride < n ? in[i + k * stride] : 0.0f;
#pragma unroll
  for (int k = 0; k < kLoads; ++k) sum[k] += last[k];

  float v = 0.0f;
#pragma unroll
  for (int k = 0; k < kLoads; ++k) v += sum[k];

#pragma unroll
  for (unsigned offset = kTileSize / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();  // outside every branch: the whole block reaches it

  if (tile.meta_group_rank() == 0) {  // the whole first tile enters
    v = tile.thread_rank() < kTiles ? tile_sums[tile.thread_rank()] : 0.0f;
#pragma unroll
    for (unsigned offset = kTiles / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
    if (tile.thread_rank() == 0) block_sums[blockIdx.x] = v;
  }
}

LaunchPlan plan(std::size_t n, int block, const common::DeviceInfo& device) {
  const std::size_t threads = static_cast<std::size_t>(block);
  const int per_sm =
      with_block_size("10", block, [&](auto b) { return blocks_per_sm(unrolled_sum<decltype(b)::value>, block); });
  const std::size_t grid = resident_grid(per_sm, device.sm_count, n, threads * kLoads);

  LaunchPlan p;
  p.grid = static_cast<unsigned>(grid);
  p.scratch_bytes = grid > 1 ? grid * sizeof(float) : 0;
  // Per-thread chains of at most ceil(n / (grid x block)) additions, kLoads more to combine
  // the accumulators, a tree over the block; the same again in the second pass.
  const std::size_t second = grid > 1 ? common::blocked_depth(grid, threads) + kLoads : 0;
  p.error_depth = common::blocked_depth(n, grid * threads) + kLoads + second;
  return p;
}

void launch(const StageArgs& a) {
  float* partials = a.grid > 1 ? static_cast<float*>(a.scratch) : a.out;
  with_block_size("10", a.block, [&](auto b) {
    constexpr unsigned kBlock = decltype(b)::value;
    unrolled_sum<kBlock><<<a.grid, kBlock, 0, a.stream>>>(a.in, a.n, partials);
    CUDA_CHECK_LAUNCH();
    if (a.grid > 1) {
      unrolled_sum<kBlock><<<1, kBlock, 0, a.stream>>>(partials, a.grid, a.out);
      CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace

Stage describe_loop_unrolling() {
  Stage s;
  s.number = 10;
  s.id = "loop_unrolling";
  s.title = "loop unrolling";
  s.source = "reduction/10_loop_unrolling.cu";
  s.chapter = "chapters/10_loop_unrolling.md";
  s.blocks.preferred = 256;
  s.blocks.max = 1024;  // one kernel instantiation per power of two up to 1024
  s.deterministic = true;
  s.book_v100_ms = 0.263;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
