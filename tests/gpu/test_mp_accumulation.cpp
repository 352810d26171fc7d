// Where accumulating in half goes wrong, and the float accumulators on the same
// data do not: overflow past 65504, small addends lost once the running sum is
// large, and a larger error than float accumulation on ordinary inputs.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dot_inputs.hpp"
#include "gpu_fixture.hpp"
#include "prepared_variant.hpp"
#include "variants.hpp"

using mixed_precision::Accumulator;
using mixed_precision::DeviceVectors;
using mixed_precision::DotOutput;
using mixed_precision::DotReference;
using mixed_precision::ElementType;
using mixed_precision::Operand;
using mixed_precision::PreparedVariant;
using mixed_precision::Variant;

namespace {

using gpu_test::device;
using gpu_test::stream;

const Variant& variant(const char* id) {
  const Variant* v = mixed_precision::find_variant(id);
  REQUIRE(v != nullptr);
  return *v;
}

// The float-typed variants (everything but INT8).
std::vector<const Variant*> float_variants() {
  std::vector<const Variant*> out;
  for (const Variant& v : mixed_precision::registry())
    if (v.element != ElementType::i8) out.push_back(&v);
  return out;
}

struct Result {
  DotOutput out;
  common::Check check;
  DotReference ref;
};

// Runs `v` on x_i = x, y_i = y (both exact in every float type), with `grid`
// blocks (0: the variant's plan).
Result run_constant(const Variant& v, std::size_t n, double x, double y, unsigned grid = 0) {
  const auto host =
      mixed_precision::encode(v.element, n, [&](Operand w, std::size_t) { return w == Operand::x ? x : y; });
  Result r;
  r.ref = mixed_precision::reference_dot(host);
  const DeviceVectors dev = mixed_precision::upload(host);
  PreparedVariant p(v, dev, device(), stream(), grid);
  r.out = p.run_checked();
  r.check = p.check(r.out, r.ref);
  return r;
}

}  // namespace

TEST_CASE("half accumulation overflows past 65504; float accumulation is exact", "[mp][gpu][half]") {
  // 2^17 products of 1 x 1: the answer, 131072, is twice the largest finite half.
  const std::size_t n = std::size_t{1} << 17;
  for (const Variant* v : float_variants()) {
    const Result r = run_constant(*v, n, 1.0, 1.0);
    INFO(v->id << ": got " << r.out.value << " (" << r.check.detail << ")");
    REQUIRE(r.ref.dot == 131072.0);
    if (v->accumulator == Accumulator::f16) {
      CHECK(std::isinf(r.out.value));
      CHECK(r.out.value > 0.0f);
      CHECK_FALSE(r.check.ok);
    } else {
      CHECK(r.out.value == 131072.0f);  // every partial sum is a whole number below 2^24
      CHECK(r.check.ok);
    }
  }
}

TEST_CASE("half accumulation loses small addends once the running sum is large", "[mp][gpu][half]") {
  // One block, so every half2 lane (256 threads x 4 accumulators x 2 lanes = 2048
  // lanes) receives 2^23 / 2048 = 4096 products of 1 x 2^-12. A lane reaches 0.5
  // after 2048 of them; there a half's spacing is 2^-11, so 0.5 + 2^-12 is a tie
  // that rounds back to 0.5 (the even neighbour), and the other 2048 products are
  // lost. Every lane ends at 0.5 instead of 1, and the exact tree over the lanes
  // gives 1024 instead of 2048. The float accumulators hold every addend.
  const std::size_t n = std::size_t{1} << 23;
  const double small = std::ldexp(1.0, -12);
  for (const Variant* v : float_variants()) {
    const Result r = run_constant(*v, n, 1.0, small, 1);
    INFO(v->id << ": got " << r.out.value << " (" << r.check.detail << ")");
    REQUIRE(r.ref.dot == 2048.0);
    if (v->accumulator == Accumulator::f16) {
      CHECK(r.out.value == 1024.0f);
      CHECK_FALSE(r.check.ok);  // 4096 additions per lane: past 2048 the half bound says nothing
    } else {
      CHECK(r.out.value == 2048.0f);
      CHECK(r.check.ok);
    }
  }
}

TEST_CASE("on ordinary inputs half accumulation meets its own bound but not float's accuracy", "[mp][gpu][half]") {
  // Variants 02 and 03 read the same FP16 vectors in the same order; only the
  // accumulator differs.
  const Variant& half_acc = variant("fp16_half_accumulate");
  const Variant& float_acc = variant("fp16_float_accumulate");
  REQUIRE(half_acc.element == float_acc.element);
  for (std::size_t n : {std::size_t{1} << 20, (std::size_t{1} << 22) + 1, std::size_t{1} << 24}) {
    const auto host = mixed_precision::make_inputs(ElementType::f16, 3, n, 0);
    const DotReference ref = mixed_precision::reference_dot(host);
    const DeviceVectors dev = mixed_precision::upload(host);
    PreparedVariant ph(half_acc, dev, device(), stream());
    PreparedVariant pf(float_acc, dev, device(), stream());
    const auto ch = ph.check(ph.run_checked(), ref);
    const auto cf = pf.check(pf.run_checked(), ref);
    INFO("n = " << n << ": half error " << ch.abs_error << " (tolerance " << ch.tolerance << "), float error "
                << cf.abs_error << " (tolerance " << cf.tolerance << ")");
    CHECK(ch.ok);
    CHECK(cf.ok);
    CHECK(ch.abs_error > cf.abs_error);
    CHECK(ch.tolerance > 1000.0 * cf.tolerance);
  }
}
