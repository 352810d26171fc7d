#include "prepared_variant.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "row_measure.hpp"
#include "tolerance.hpp"

namespace mixed_precision {

DeviceVectors upload(const HostVectors& host) {
  DeviceVectors d;
  d.type = host.type;
  d.n = host.n;
  d.x = common::DeviceBuffer<unsigned char>(host.x.size());
  d.y = common::DeviceBuffer<unsigned char>(host.y.size());
  common::copy_to_device(d.x.get(), host.x.data(), host.x.size());
  common::copy_to_device(d.y.get(), host.y.data(), host.y.size());
  return d;
}

PreparedVariant::PreparedVariant(const Variant& variant, const DeviceVectors& vectors, const common::DeviceInfo& device,
                                 cudaStream_t stream, unsigned grid)
    : variant_(&variant), out_(1), stream_(stream) {
  if (vectors.type != variant.element)
    throw std::invalid_argument(std::string("variant ") + variant.id + " needs " + element_name(variant.element) +
                                " vectors, got " + element_name(vectors.type));
  args_.x = vectors.x.get();
  args_.y = vectors.y.get();
  args_.n = vectors.n;
  args_.grid = grid != 0 ? grid : variant.plan_grid(vectors.n, device);
  scratch_ = common::DeviceBuffer<unsigned char>(dot_scratch_bytes(args_.grid));
  CUDA_CHECK(cudaMemset(scratch_.get(), 0, scratch_.bytes()));  // the counter starts at zero
  args_.scratch = scratch_.get();
  args_.out = out_.get();
  args_.stream = stream;
}

DotOutput PreparedVariant::run_checked() {
  DotOutput out;
  out.is_integer = variant_->accumulator == Accumulator::i32;
  std::int32_t poison = kInt32Poison;
  if (!out.is_integer) {
    const float p = common::poison_value();
    std::memcpy(&poison, &p, sizeof p);
  }
  const std::int32_t bits = common::poisoned_run(
      out_.get(), poison, [this] { launch(); }, stream_);
  if (out.is_integer)
    out.integer = bits;
  else
    std::memcpy(&out.value, &bits, sizeof bits);
  return out;
}

std::size_t PreparedVariant::error_depth() const { return dot_depth(args_.n, args_.grid, variant_->shape); }

common::Check PreparedVariant::check(const DotOutput& out, const DotReference& ref) const {
  if (out.is_integer) return check_int_dot(out.integer, ref);
  return check_float_dot(out.value, ref, variant_->accumulator, error_depth(), args_.n);
}

}  // namespace mixed_precision
