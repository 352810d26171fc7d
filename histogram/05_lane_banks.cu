// Stage 05: a copy of the histogram per lane, each in its own shared-memory bank.
//
// Fixes: in stages 03 and 04 the 32 lanes of one shared atomicAdd go to random banks,
// and lanes that need different words of one bank take turns: every such instruction
// costs several passes on uniform data. Copies per warp (stage 04) do not change that.
// Idea: 32 copies of the 256 bins, interleaved so that lane l's copy lies entirely in
// bank l (lane_banks.cuh): every shared atomic of the counting loop is one pass,
// whatever the data. Blocks of 512 threads share the 32 KiB.
// At 4,096 bins there is room for one copy only: the counting is stage 03's.
// Expect: near the memory's bandwidth on uniform, skewed and one-value inputs alike
// at large sizes.
// Chapter: chapters/27_histogram.md
#include "cuda_check.hpp"
#include "lane_banks.cuh"
#include "sm_limits.hpp"
#include "stage.hpp"

namespace histogram {
namespace {

constexpr int kBlock = 512;

template <class V>
__global__ void __launch_bounds__(kBlock, common::full_sm_blocks(kBlock))
    lane_banks(const typename V::T* __restrict__ in, std::size_t n, unsigned* __restrict__ hist) {
  __shared__ alignas(16) unsigned local[LaneBanks<V>::kWords];
  LaneBanks<V> h(local);
  h.zero(kBlock);
  __syncthreads();
  for_each_bin<V>(in, n, std::size_t{blockIdx.x} * kBlock + threadIdx.x, std::size_t{gridDim.x} * kBlock,
                  [&](unsigned bin) { h.count(bin); });
  __syncthreads();
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) {
    const unsigned total = h.total(b);
    if (total != 0) atomicAdd(&hist[b], total);
  }
}

Plan plan(std::size_t n, Bins bins, const common::DeviceInfo& device) {
  Plan p;
  p.block = kBlock;
  p.grid = capped_grid(n, kBlock, 16 / value_bytes(bins), device.sm_count);
  return p;
}

template <class V>
void launch_as(const HistArgs& a) {
  CUDA_CHECK(cudaMemsetAsync(a.hist, 0, V::kCount * sizeof(unsigned), a.stream));
  lane_banks<V><<<a.grid, kBlock, 0, a.stream>>>(static_cast<const typename V::T*>(a.in), a.n, a.hist);
  CUDA_CHECK_LAUNCH();
}

void launch(const HistArgs& a) { a.bins == Bins::b256 ? launch_as<Bytes>(a) : launch_as<Shorts>(a); }

}  // namespace

Stage describe_lane_banks() {
  Stage s;
  s.number = 5;
  s.id = "lane_banks";
  s.title = "a copy per lane, one bank each";
  s.source = "histogram/05_lane_banks.cu";
  s.chapter = "chapters/27_histogram.md";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
