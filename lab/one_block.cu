// one_block: what the combine costs when one block reads everything, n = 2^10 .. 2^14.
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/one_block [--csv FILE]
//
// One block of n / 16 threads; each thread loads its four float4s (all in flight at
// once, the ceiling's 4-deep shape) and then:
//   stream-only  DIAGNOSTIC, no sum: folds the bit patterns with integer adds and stores
//                only if the fold equals a key it never equals (peers/ceiling.cu's
//                kernel on one block): the time of the loads alone
//   warp-only    DIAGNOSTIC, wrong sum: adds its floats, one warp shuffle tree, and
//                thread 0 stores its warp's sum; no other warp is added
//   block-sum    a correct sum: the same, then the warps' sums through shared memory,
//                one barrier and the first warp's shuffle tree (the stages' block sum)
//   stage15      stage 15 as the generic library runs it (its one-block kernel here)
// block-sum over stream-only is how close a plain correct sum of one block comes to
// the loads alone; warp-only shows how much of the gap one warp's tree is.
#include <cstdint>

#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::Experiment;

constexpr int kLoads = 4;  // float4s per thread, all issued before the first addition
constexpr unsigned kKey = 0xFFFFFFFFu;

enum class Combine { none, warp, block };

template <int kBlock, Combine kCombine>
__global__ void __launch_bounds__(kBlock) one_block(const float* __restrict__ in, float* out) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4 v[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) v[u] = in4[threadIdx.x + u * kBlock];
  if constexpr (kCombine == Combine::none) {
    unsigned fold = 0;
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      fold += __float_as_uint(v[u].x) + __float_as_uint(v[u].y) + __float_as_uint(v[u].z) + __float_as_uint(v[u].w);
    if (fold == kKey) *reinterpret_cast<unsigned*>(out) = fold;
  } else {
    float4 a = v[0];
#pragma unroll
    for (int u = 1; u < kLoads; ++u) {
      a.x += v[u].x;
      a.y += v[u].y;
      a.z += v[u].z;
      a.w += v[u].w;
    }
    float s = (a.x + a.y) + (a.z + a.w);
    s = kCombine == Combine::warp ? g::warp_reduce(s, g::Sum{}) : lab::block_sum_one_round<kBlock>(s);
    if (threadIdx.x == 0) *out = s;
  }
}

template <int kBlock>
void measure_block(Experiment& e) {
  auto row = [&](const char* design, auto kernel, bool diagnostic) {
    e.measure(
        design, kBlock, 1,
        [&] {
          kernel<<<1, kBlock, 0, e.stream()>>>(e.in(), e.out());
          CUDA_CHECK_LAUNCH();
        },
        diagnostic);
  };
  row("stream-only", one_block<kBlock, Combine::none>, true);
  row("warp-only", one_block<kBlock, Combine::warp>, true);
  row("block-sum", one_block<kBlock, Combine::block>, false);
}

std::vector<common::Record> one_block_rows(Experiment& e) {
  g::Workspace ws;
  for (int k = 10; k <= 14; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    e.measure("stage15", 512, g::grid_for<float, g::Sum>(n, e.device().sm_count),
              [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
    // n / (4 * kLoads) threads: every element read exactly once.
    switch (k) {
      case 10: measure_block<64>(e); break;
      case 11: measure_block<128>(e); break;
      case 12: measure_block<256>(e); break;
      case 13: measure_block<512>(e); break;
      default: measure_block<1024>(e); break;
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"one_block",
       "n = 2^10 .. 2^14: what combining costs when one block of n/16 threads reads everything.\n"
       "Designs: stream-only (diagnostic: loads only, no sum), warp-only (diagnostic, wrong sum: one warp's\n"
       "shuffle tree), block-sum (a correct sum: the block's two-level tree), stage15.\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 14, one_block_rows});
}
