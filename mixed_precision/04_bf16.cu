// Variant 04: BF16 dot product with __nv_bfloat162 loads, accumulating in float.
//
// Idea: bfloat16 keeps float's 8-bit exponent and cuts the significand to 8 bits,
// so it has float's range at FP16's 2 bytes: nothing overflows at 65504 or
// underflows near 6e-8 as in FP16. Each bfloat162 is widened with
// __bfloat1622float2 and folded into a float2 accumulator exactly as in variant 03.
// Compared with 03: the same traffic and speed; the rounded inputs are coarser
// (relative spacing 2^-8 instead of 2^-11), but the dot product of those rounded
// inputs is computed as accurately as FP32 computes its own (the product of two
// 8-bit significands is exact in a float). Accuracy against the original
// real-valued data is the input rounding's business, not the kernel's.
// Nsight Compute: the same dram__throughput and dram__bytes_read.sum as 03.
// Chapter: chapters/20_mixed_precision.md
#include <cuda_bf16.h>

#include "dot_kernel.cuh"
#include "variant.hpp"

namespace mixed_precision {
namespace {

struct Bf16 {
  using Element = __nv_bfloat16;
  using Acc = float2;
  using Partial = float;
  using Result = float;
  static constexpr DotShape kShape{8, 2};

  __device__ static void fold_pair(Acc& acc, unsigned x, unsigned y) {
    const float2 a = __bfloat1622float2(bits_as<__nv_bfloat162>(x));
    const float2 b = __bfloat1622float2(bits_as<__nv_bfloat162>(y));
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
    acc.x = fmaf(__bfloat162float(x), __bfloat162float(y), acc.x);
  }
  __device__ static Acc add_acc(Acc a, Acc b) { return make_float2(a.x + b.x, a.y + b.y); }
  __device__ static Partial to_partial(Acc a) { return a.x + a.y; }
  __device__ static Partial zero_partial() { return 0.0f; }
  __device__ static Partial add(Partial a, Partial b) { return a + b; }
  __device__ static Result to_result(Partial p) { return p; }
};

}  // namespace

Variant describe_bf16() {
  Variant v;
  v.number = 4;
  v.id = "bf16";
  v.title = "BF16 bfloat162, float accumulate";
  v.source = "mixed_precision/04_bf16.cu";
  v.chapter = "chapters/20_mixed_precision.md";
  v.element = ElementType::bf16;
  v.accumulator = Accumulator::f32;
  v.shape = Bf16::kShape;
  v.plan_grid = plan_grid<Bf16>;
  v.launch = launch_dot<Bf16>;
  return v;
}

}  // namespace mixed_precision
