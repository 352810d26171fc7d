// Stage 01: naive reduction in global memory.
//
// Idea: a tree of pairwise additions, one kernel launch per level. Level k adds
// neighbouring pairs of level k-1's values, so log2(n) launches leave one value.
// Every level reads and writes global memory and waits for a whole launch.
// Fixes (book erratum 3): the book's kernel updates the array it reads in place,
// which is a race between blocks; here each level reads one buffer and writes
// another, so no launch reads what it writes. The book's kernel also runs n threads
// at every level, reading and writing the whole array each time (O(n log n)
// traffic); this grid halves at every level, so all levels together read 2n floats
// and write n.
// Expect: about 3 x n x 4 bytes of traffic plus log2(n) launch latencies, far from
// the later stages. In Nsight Compute: many short kernels, each far below peak DRAM
// throughput (dram__throughput.avg.pct_of_peak_sustained_elapsed).
// Chapter: chapters/01_naive_global_memory.md
#include "passes.hpp"
#include "stage.hpp"

#include "cuda_check.hpp"

namespace reduction {
namespace {

// dst[i] = src[2i] + src[2i+1]; an odd last element is carried up unchanged.
__global__ void add_neighbour_pairs(const float* __restrict__ src, std::size_t m, float* __restrict__ dst) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t pairs = m / 2;
  if (i < pairs) {
    dst[i] = src[2 * i] + src[2 * i + 1];
  } else if (i == pairs && m % 2 == 1) {
    dst[i] = src[2 * i];
  }
}

LaunchPlan plan(std::size_t n, int /*block*/, const common::DeviceInfo& /*device*/) {
  LaunchPlan p;
  // Two ping-pong buffers: level 1 writes ceil(n/2) values, level 2 ceil(n/4).
  if (n > 2) p.scratch_bytes = (ceil_div(n, 2) + ceil_div(n, 4)) * sizeof(float);
  p.error_depth = common::tree_depth(n);
  return p;
}

void launch(const StageArgs& a) {
  if (a.n == 1) {
    CUDA_CHECK(cudaMemcpyAsync(a.out, a.in, sizeof(float), cudaMemcpyDeviceToDevice, a.stream));
    return;
  }
  float* level_out[2] = {static_cast<float*>(a.scratch), nullptr};
  if (a.scratch != nullptr) level_out[1] = level_out[0] + ceil_div(a.n, 2);
  const float* src = a.in;
  std::size_t m = a.n;
  int which = 0;
  while (m > 1) {
    const std::size_t next = ceil_div(m, 2);
    float* dst = next == 1 ? a.out : level_out[which];
    const unsigned blocks = static_cast<unsigned>(ceil_div(next, static_cast<std::size_t>(a.block)));
    add_neighbour_pairs<<<blocks, a.block, 0, a.stream>>>(src, m, dst);
    CUDA_CHECK_LAUNCH();
    src = dst;
    m = next;
    which ^= 1;
  }
}

}  // namespace

Stage describe_naive_global() {
  Stage s;
  s.number = 1;
  s.id = "naive_global";
  s.title = "naive global memory";
  s.source = "reduction/01_naive_global.cu";
  s.chapter = "chapters/01_naive_global_memory.md";
  s.blocks.preferred = 256;
  s.max_n = std::size_t{0x7FFFFFFF} * 32 * 2;  // grid.x limit at the smallest block
  s.deterministic = true;
  s.single_launch = false;
  s.book_v100_ms = 4.609;
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace reduction
