// Variant 02: FP16 dot product with half2 math, accumulating in half.
//
// Idea: store x and y as 2-byte halves and do everything in half2 (two halves in
// one 32-bit register): each 16-byte load brings 8 elements, folded as four
// __hfma2 into a half2 accumulator. Half the bytes of FP32, so about twice the
// speed at large n.
// What goes wrong: the accumulator is a half, with an 11-bit significand and a
// largest finite value of 65504. A running sum past 65504 becomes infinity. An ulp
// of a running sum S is between 2^-11 S and 2^-10 S, and an addend below half an ulp
// rounds away: a product S / 2048 is still at least half an ulp (exactly half, a tie
// that rounds back to S, only when S is a power of two), one below S / 4096 is always
// lost, and in between it depends on where S sits between two powers of two. The
// worst-case bound (u = 2^-11, tolerance.hpp) is 8192 times looser than FP32's, and
// the table's rel-error column shows the real cost on ordinary data; the GPU tests
// show both failures.
// Variant 03 keeps the half loads and fixes the accumulator.
// Nsight Compute: dram__throughput as high as 01's with half the dram__bytes_read.sum
// (4n); the SM's compute throughput (sm__throughput.avg.pct_of_peak_sustained_elapsed)
// stays low: the half math is not what limits the speed.
// Chapter: chapters/20_mixed_precision.md
#include <cuda_fp16.h>

#include "dot_kernel.cuh"
#include "variant.hpp"

namespace mixed_precision {
namespace {

struct Fp16HalfAccumulate {
  using Element = __half;
  using Acc = __half2;
  using Partial = __half;
  using Result = float;
  static constexpr DotShape kShape{8, 2};

  __device__ static Acc zero_acc() { return __float2half2_rn(0.0f); }
  __device__ static void fold(Acc& acc, uint4 x, uint4 y) {
    acc = __hfma2(bits_as<__half2>(x.x), bits_as<__half2>(y.x), acc);
    acc = __hfma2(bits_as<__half2>(x.y), bits_as<__half2>(y.y), acc);
    acc = __hfma2(bits_as<__half2>(x.z), bits_as<__half2>(y.z), acc);
    acc = __hfma2(bits_as<__half2>(x.w), bits_as<__half2>(y.w), acc);
  }
  __device__ static void fold_one(Acc& acc, Element x, Element y) {
    acc = __halves2half2(__hfma(x, y, __low2half(acc)), __high2half(acc));
  }
  __device__ static Acc add_acc(Acc a, Acc b) { return __hadd2(a, b); }
  __device__ static Partial to_partial(Acc a) { return __hadd(__low2half(a), __high2half(a)); }
  __device__ static Partial zero_partial() { return __float2half_rn(0.0f); }
  __device__ static Partial add(Partial a, Partial b) { return __hadd(a, b); }
  __device__ static Result to_result(Partial p) { return __half2float(p); }  // exact
};

}  // namespace

Variant describe_fp16_half_accumulate() {
  Variant v;
  v.number = 2;
  v.id = "fp16_half_accumulate";
  v.title = "FP16 half2, half accumulate";
  v.source = "mixed_precision/02_fp16_half_accumulate.cu";
  v.chapter = "chapters/20_mixed_precision.md";
  v.element = ElementType::f16;
  v.accumulator = Accumulator::f16;
  v.shape = Fp16HalfAccumulate::kShape;
  v.plan_grid = plan_grid<Fp16HalfAccumulate>;
  v.launch = launch_dot<Fp16HalfAccumulate>;
  return v;
}

}  // namespace mixed_precision
