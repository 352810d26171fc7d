// The contract every mixed-precision dot-product variant keeps.
//
// A variant computes x . y for two vectors of n elements of one type (FP32, FP16,
// BF16 or INT8) with one accumulator type. Every variant is the same templated kernel
// (dot_kernel.cuh) instantiated with a small traits struct in its numbered file,
// which also defines a describe_*() function filling in a Variant.
// mixed_precision/variants.cpp lists the describe_*() functions: that list is the
// only list of variants in the project.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device_info.hpp"

namespace mixed_precision {

// The shape every variant shares: kBlock threads per block, each issuing kUnroll
// 16-byte loads per vector before it uses any of them.
constexpr int kBlock = 256;
constexpr int kUnroll = 4;
constexpr std::size_t kLoadBytes = 16;
// The scratch memory starts with the completion counter, padded so the per-block
// partial results that follow it start on their own cache line.
constexpr std::size_t kCounterBytes = 256;

enum class ElementType { f32, f16, bf16, i8 };
enum class Accumulator { f32, f16, i32 };

std::size_t element_bytes(ElementType t);
std::string element_name(ElementType t);      // "fp32", "fp16", "bf16", "int8"
std::string accumulator_name(Accumulator a);  // "fp32", "fp16", "int32"

// What the launcher gets. It enqueues the whole dot product on `stream` (one
// kernel) and nothing else: no allocation, no synchronisation, no host copies.
struct DotArgs {
  const void* x = nullptr;  // n elements of the variant's type on the device, 16-byte aligned
  const void* y = nullptr;
  std::size_t n = 0;
  // 4 bytes on the device: a float for the float and half accumulators (a half
  // result widened to float, which is exact), an int32 for INT8.
  void* out = nullptr;
  // dot_scratch_bytes(grid) bytes. The caller zero-fills them once after
  // allocating; every launch leaves the completion counter at zero again.
  void* scratch = nullptr;
  unsigned grid = 0;  // blocks; any value from 1 up to the plan's grid is correct
  cudaStream_t stream = nullptr;
};

// Scratch bytes for a grid of `grid` blocks (a counter and one 4-byte partial per block).
inline std::size_t dot_scratch_bytes(unsigned grid) { return kCounterBytes + std::size_t{grid} * 4; }

// How the kernel's summation order looks to the error bound (see tolerance.hpp):
// a 16-byte chunk holds `per_chunk` elements, spread over `lanes` independent
// running sums in one accumulator, each receiving per_chunk / lanes additions.
struct DotShape {
  int per_chunk = 4;
  int lanes = 1;
};

struct Variant {
  int number = 0;            // 1, 2, ... in the order of the chapter
  const char* id = "";       // "fp16_half_accumulate"
  const char* title = "";    // short, for the table
  const char* source = "";   // path of the file, from the repository root
  const char* chapter = "";  // path of the chapter that explains it
  ElementType element = ElementType::f32;
  Accumulator accumulator = Accumulator::f32;
  DotShape shape;
  std::size_t max_n = ~std::size_t{0};  // largest n the variant is correct for
  bool deterministic = true;            // bitwise-identical result run to run for one grid
  // The grid for n on this device: blocks resident at once (occupancy x SMs),
  // fewer when n is too small to give every thread kUnroll chunks.
  unsigned (*plan_grid)(std::size_t n, const common::DeviceInfo& device) = nullptr;
  void (*launch)(const DotArgs& args) = nullptr;
};

// "03" for variant 3: what --variants and the table's # column use.
std::string variant_key(const Variant& v);

}  // namespace mixed_precision
