// Variant 03: FP16 dot product with half2 loads, accumulating in float.
//
// Idea: the loads are variant 02's (8 halves per 16-byte load), but each half2 is
// widened with __half22float2 and folded into a float2 accumulator with fmaf, in
// the same order as 02 (two lanes, four additions per lane per chunk). Only the
// accumulator's precision differs from 02.
// Fixes: 02's accumulator. The product of two halves (11-bit significands) is
// exact in a float, so the only rounding left is the float sum's (u = 2^-24): the
// same bound as FP32 on the rounded inputs, at FP16's traffic (4 bytes per pair).
// The conversions are a few extra instructions per element in a kernel that waits
// on memory, so the speed should match 02.
// Nsight Compute: dram__throughput and dram__bytes_read.sum equal to 02's; more
// executed instructions (smsp__inst_executed.sum) for the conversions, with no
// effect on the time.
// Chapter: chapters/20_mixed_precision.md
#include <cuda_fp16.h>

#include "dot_kernel.cuh"
#include "variant.hpp"

namespace mixed_precision {
namespace {

struct Fp16FloatAccumulate {
  using Element = __half;
  using Acc = float2;
  using Partial = float;
  using Result = float;
  static constexpr DotShape kShape{8, 2};

  __device__ static void fold_pair(Acc& acc, unsigned x, unsigned y) {
    const float2 a = __half22float2(bits_as<__half2>(x));
    const float2 b = __half22float2(bits_as<__half2>(y));
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.y = fmaf(a.y, b.y, acc.y);
  }

  __device__ static Acc zero_acc() { return make_float2(0.0f, 0.0f); }
  __device__ static void fold(Acc& acc, uint4 x, uint4 y) {
    fold_pair(acc, x.x, y.x);
    fold_pair(acc, x.y, y.y);
    fold_pair(acc, x.z, y.z);
    fold_pair(acc, x.w, y.w);
  }
  __device__ static void fold_one(Acc& acc, Element x, Element y) {
    acc.x = fmaf(__half2float(x), __half2float(y), acc.x);
  }
  __device__ static Acc add_acc(Acc a, Acc b) { return make_float2(a.x + b.x, a.y + b.y); }
  __device__ static Partial to_partial(Acc a) { return a.x + a.y; }
  __device__ static Partial zero_partial() { return 0.0f; }
  __device__ static Partial add(Partial a, Partial b) { return a + b; }
  __device__ static Result to_result(Partial p) { return p; }
};

}  // namespace

Variant describe_fp16_float_accumulate() {
  Variant v;
  v.number = 3;
  v.id = "fp16_float_accumulate";
  v.title = "FP16 half2, float accumulate";
  v.source = "mixed_precision/03_fp16_float_accumulate.cu";
  v.chapter = "chapters/20_mixed_precision.md";
  v.element = ElementType::f16;
  v.accumulator = Accumulator::f32;
  v.shape = Fp16FloatAccumulate::kShape;
  v.plan_grid = plan_grid<Fp16FloatAccumulate>;
  v.launch = launch_dot<Fp16FloatAccumulate>;
  return v;
}

}  // namespace mixed_precision
