// Stage 06: one wave of blocks and one launch.
//
// Fixes: stage 05 enqueues two things (a memset of the histogram, then the kernel),
// which at small sizes costs more than the counting, and its grid is a fixed 2,048
// threads per SM whether or not that many of its blocks fit at once.
// Idea: launch exactly the blocks that run at the same time, one wave: SMs x the
// blocks per SM that the occupancy API reports for this kernel on this GPU (fewer when
// the input is small), so every block is resident from the start and each pays its
// zeroing and its merge once. No memset: the blocks add their counts with global
// atomics into an accumulator in scratch (zeroed once, when the stage is prepared; 256
// bins keep eight copies of it, below); then each takes a ticket, and the block that
// draws the last one knows that every count is in. It moves the accumulator to the
// output, leaving it at zero (atomicExch), and resets the ticket, ready for the next
// launch. A grid of one block (an input of at most 8 KiB) writes its counts straight to
// the output.
// Memory ordering (as in reduction stage 13): every thread fences after its atomics
// (__threadfence) before the block's ticket; the last block fences after its ticket
// before it reads.
// Measured: the fastest stage below 2^14 bytes, where one block does the whole input;
// slower than stage 05 from 2^14 to 2^20 (results/h200/histogram_256.csv, chapter 27).
// Chapter: chapters/27_histogram.md
#include "cuda_check.hpp"
#include "lane_banks.cuh"
#include "sm_limits.hpp"
#include "stage.hpp"

namespace histogram {
namespace {

constexpr int kBlock = 512;
constexpr std::size_t kAccumulatorOffset = 128;  // the ticket has its own cache line
// Copies of the accumulator: block i adds into copy i % kAccumulators, so the blocks'
// global atomics, which all come at the end of a wave, queue on eight times as many
// cache lines (256 bins are only 8 lines of 128 bytes). 4,096 bins spread by themselves.
template <class V>
constexpr unsigned kAccumulators = V::kCount == 256 ? 8 : 1;

template <class V>
__global__ void __launch_bounds__(kBlock, common::full_sm_blocks(kBlock))
    one_wave(const typename V::T* __restrict__ in, std::size_t n, unsigned* __restrict__ hist,
             unsigned* __restrict__ ticket, unsigned* __restrict__ accumulator) {
  __shared__ alignas(16) unsigned local[LaneBanks<V>::kWords];
  __shared__ bool last;
  LaneBanks<V> h(local);
  h.zero(kBlock);
  __syncthreads();
  for_each_bin<V>(in, n, std::size_t{blockIdx.x} * kBlock + threadIdx.x, std::size_t{gridDim.x} * kBlock,
                  [&](unsigned bin) { h.count(bin); });
  __syncthreads();
  if (gridDim.x == 1) {  // a small input: one block has every count, and writes them
    for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) hist[b] = h.total(b);
    return;
  }
  unsigned* mine = accumulator + blockIdx.x % kAccumulators<V> * V::kCount;
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) {
    const unsigned total = h.total(b);
    if (total != 0) atomicAdd(&mine[b], total);
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) {
    unsigned sum = 0;
    for (unsigned k = 0; k < kAccumulators<V>; ++k) sum += atomicExch(&accumulator[k * V::kCount + b], 0u);
    hist[b] = sum;
  }
  if (threadIdx.x == 0) *ticket = 0;
}

template <class V>
unsigned one_wave_grid(std::size_t n, const common::DeviceInfo& device) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, one_wave<V>, kBlock, 0));
  if (per_sm < 1) per_sm = 1;
  const std::size_t wave = static_cast<std::size_t>(per_sm) * static_cast<std::size_t>(device.sm_count);
  const std::size_t per_block = std::size_t{kBlock} * (16 / sizeof(typename V::T));
  const std::size_t wanted = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(wanted < wave ? (wanted > 0 ? wanted : 1) : wave);
}

Plan plan(std::size_t n, Bins bins, const common::DeviceInfo& device) {
  Plan p;
  p.block = kBlock;
  p.grid = bins == Bins::b256 ? one_wave_grid<Bytes>(n, device) : one_wave_grid<Shorts>(n, device);
  p.scratch_bytes = kAccumulatorOffset +
                    (bins == Bins::b256 ? kAccumulators<Bytes> * 256 : kAccumulators<Shorts> * 4096) * sizeof(unsigned);
  p.zero_scratch_once = true;
  return p;
}

template <class V>
void launch_as(const HistArgs& a) {
  unsigned* ticket = static_cast<unsigned*>(a.scratch);
  unsigned* accumulator = reinterpret_cast<unsigned*>(static_cast<char*>(a.scratch) + kAccumulatorOffset);
  one_wave<V>
      <<<a.grid, kBlock, 0, a.stream>>>(static_cast<const typename V::T*>(a.in), a.n, a.hist, ticket, accumulator);
  CUDA_CHECK_LAUNCH();
}

void launch(const HistArgs& a) { a.bins == Bins::b256 ? launch_as<Bytes>(a) : launch_as<Shorts>(a); }

}  // namespace

Stage describe_one_wave() {
  Stage s;
  s.number = 6;
  s.id = "one_wave";
  s.title = "one wave, one launch";
  s.source = "histogram/06_one_wave.cu";
  s.chapter = "chapters/27_histogram.md";
  s.single_launch = true;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
