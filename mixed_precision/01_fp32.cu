// Variant 01: FP32 dot product, float accumulate (the baseline).
//
// Idea: x . y with 4-byte floats: each 16-byte load brings 4 elements, each folded
// into the thread's accumulator with one fused multiply-add (fmaf: the product is
// not rounded on its own, only the sum). Every later variant is this kernel with a
// smaller element type, so this row is what their speed and accuracy are measured
// against.
// Traffic: 8 bytes per element pair. At large n the kernel is bound by DRAM
// bandwidth, so its time is 8n / bandwidth; the narrower types should approach
// 8 / (their bytes per pair) times this speed.
// Error: each product passes through at most d roundings of 2^-24 (tolerance.hpp).
// Nsight Compute: dram__throughput.avg.pct_of_peak_sustained_elapsed near the
// ceiling, and about the same for every variant; what changes between variants is
// dram__bytes_read.sum (8n here).
// Chapter: chapters/20_mixed_precision.md
#include "dot_kernel.cuh"
#include "variant.hpp"

namespace mixed_precision {
namespace {

struct Fp32 {
  using Element = float;
  using Acc = float;
  using Partial = float;
  using Result = float;
  static constexpr DotShape kShape{4, 1};

  __device__ static Acc zero_acc() { return 0.0f; }
  __device__ static void fold(Acc& acc, uint4 x, uint4 y) {
    acc = fmaf(__uint_as_float(x.x), __uint_as_float(y.x), acc);
    acc = fmaf(__uint_as_float(x.y), __uint_as_float(y.y), acc);
    acc = fmaf(__uint_as_float(x.z), __uint_as_float(y.z), acc);
    acc = fmaf(__uint_as_float(x.w), __uint_as_float(y.w), acc);
  }
  __device__ static void fold_one(Acc& acc, Element x, Element y) { acc = fmaf(x, y, acc); }
  __device__ static Acc add_acc(Acc a, Acc b) { return a + b; }
  __device__ static Partial to_partial(Acc a) { return a; }
  __device__ static Partial zero_partial() { return 0.0f; }
  __device__ static Partial add(Partial a, Partial b) { return a + b; }
  __device__ static Result to_result(Partial p) { return p; }
};

}  // namespace

Variant describe_fp32() {
  Variant v;
  v.number = 1;
  v.id = "fp32";
  v.title = "FP32, float accumulate";
  v.source = "mixed_precision/01_fp32.cu";
  v.chapter = "chapters/20_mixed_precision.md";
  v.element = ElementType::f32;
  v.accumulator = Accumulator::f32;
  v.shape = Fp32::kShape;
  v.plan_grid = plan_grid<Fp32>;
  v.launch = launch_dot<Fp32>;
  return v;
}

}  // namespace mixed_precision
