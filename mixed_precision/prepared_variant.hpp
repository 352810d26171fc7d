// A variant made ready to run on one pair of vectors: its grid, its scratch memory
// (zero-filled once), its output and its arguments. The runner and the GPU tests
// both run variants through this.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "dot_inputs.hpp"
#include "variant.hpp"
#include "verify.hpp"

namespace mixed_precision {

// x and y copied to the device.
struct DeviceVectors {
  ElementType type = ElementType::f32;
  std::size_t n = 0;
  common::DeviceBuffer<unsigned char> x;
  common::DeviceBuffer<unsigned char> y;
};
DeviceVectors upload(const HostVectors& host);

// What a variant wrote: `value` for the float and half accumulators, `integer` for INT8.
struct DotOutput {
  float value = 0.0f;
  std::int32_t integer = 0;
  bool is_integer = false;
  double as_double() const { return is_integer ? static_cast<double>(integer) : static_cast<double>(value); }
};

class PreparedVariant {
 public:
  // `grid` 0 means the variant's own plan for this n and device.
  PreparedVariant(const Variant& variant, const DeviceVectors& vectors, const common::DeviceInfo& device,
                  cudaStream_t stream, unsigned grid = 0);

  // Poisons the output, launches once, waits, and returns what the variant wrote.
  DotOutput run_checked();
  // Enqueues the variant once (for timing); nothing else.
  void launch() const { variant_->launch(args_); }
  // Checks an output against the reference with the variant's tolerance.
  common::Check check(const DotOutput& out, const DotReference& ref) const;

  const Variant& variant() const { return *variant_; }
  unsigned grid() const { return args_.grid; }
  std::size_t error_depth() const;

 private:
  const Variant* variant_;
  common::DeviceBuffer<unsigned char> scratch_;
  common::DeviceBuffer<std::int32_t> out_;
  DotArgs args_;
  cudaStream_t stream_;
};

}  // namespace mixed_precision
