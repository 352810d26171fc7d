// Every registered dot-product variant, verified on the GPU: edge and random sizes,
// several grids, repeated launches (the completion counter must reset), INT8 at the
// edge of its overflow limit, and a stand-in that writes 0 being caught. The variant
// list comes from the registry.
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dot_inputs.hpp"
#include "gpu_fixture.hpp"
#include "prepared_variant.hpp"
#include "variants.hpp"

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

struct Input {
  DeviceVectors vectors;
  DotReference ref;
};

// The runner's standard inputs for one element type and n, cached.
const Input& standard_input(ElementType t, std::size_t n, std::uint64_t seed = 1) {
  static std::map<std::tuple<int, std::size_t, std::uint64_t>, std::unique_ptr<Input>> cache;
  auto& slot = cache[{static_cast<int>(t), n, seed}];
  if (!slot) {
    const auto host = mixed_precision::make_inputs(t, seed, n, mixed_precision::int8_magnitude_limit(n));
    slot = std::make_unique<Input>();
    slot->ref = mixed_precision::reference_dot(host);
    slot->vectors = mixed_precision::upload(host);
  }
  return *slot;
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s = {1,
                                2,
                                3,
                                4,
                                5,
                                7,
                                8,
                                9,
                                15,
                                16,
                                17,
                                31,
                                33,
                                1023,
                                1024,
                                1025,
                                4097,
                                65537,
                                (std::size_t{1} << 20) + 3,
                                std::size_t{1} << 22,
                                (std::size_t{1} << 24) + 5};
  std::mt19937_64 rng(20261121);
  for (int i = 0; i < 4; ++i) s.push_back(1 + rng() % (std::size_t{3} << 20));
  return s;
}

bool same_bits(const DotOutput& a, const DotOutput& b) {
  return a.is_integer ? a.integer == b.integer : std::memcmp(&a.value, &b.value, sizeof a.value) == 0;
}

}  // namespace

TEST_CASE("every variant verifies at edge and random sizes", "[mp][gpu]") {
  for (const Variant& v : mixed_precision::registry()) {
    for (std::size_t n : sizes()) {
      const Input& in = standard_input(v.element, n);
      PreparedVariant p(v, in.vectors, device(), stream());
      const DotOutput out = p.run_checked();
      const auto check = p.check(out, in.ref);
      INFO(v.id << " n = " << n << " grid " << p.grid() << ": " << check.detail);
      CHECK(check.ok);
    }
  }
}

TEST_CASE("every variant verifies for every grid from one block to the plan", "[mp][gpu]") {
  const std::size_t n = (std::size_t{1} << 20) + 3;
  for (const Variant& v : mixed_precision::registry()) {
    const Input& in = standard_input(v.element, n);
    const unsigned planned = v.plan_grid(n, device());
    for (unsigned grid : {1u, 2u, 3u, 7u, 64u, planned > 1 ? planned - 1 : 1u, planned}) {
      if (grid > planned) continue;
      PreparedVariant p(v, in.vectors, device(), stream(), grid);
      const DotOutput out = p.run_checked();
      const auto check = p.check(out, in.ref);
      INFO(v.id << " grid " << grid << " of " << planned << ": " << check.detail);
      // With one block, each half accumulator lane takes hundreds of additions and the
      // half bound reaches |reference|: that row is no-bound, never a failure. Every
      // float accumulator is verified at every grid.
      CHECK(check.acceptable());
      if (v.accumulator != mixed_precision::Accumulator::f16 || grid > 1) CHECK(check.ok);
    }
  }
}

namespace {

// A "kernel" that writes 0 (0.0f for the float variants, 0 for INT8) and nothing else.
void write_zero(const mixed_precision::DotArgs& a) { CUDA_CHECK(cudaMemsetAsync(a.out, 0, sizeof(float), a.stream)); }

}  // namespace

TEST_CASE("a variant that writes 0 fails its check: the bounds are smaller than the result", "[mp][gpu]") {
  // With inputs whose dot product cancelled to near 0 (a condition number growing like
  // sqrt(n)), a float bound could exceed the result and accept 0. The standard inputs
  // keep the condition number near 4, so every row below is checked for real.
  for (const Variant& v : mixed_precision::registry()) {
    for (std::size_t n : {(std::size_t{1} << 20) + 3, (std::size_t{1} << 24) + 5}) {
      const Input& in = standard_input(v.element, n);
      REQUIRE(in.ref.value() != 0.0);
      Variant zero = v;
      zero.launch = write_zero;
      PreparedVariant real(v, in.vectors, device(), stream());
      PreparedVariant p(zero, in.vectors, device(), stream());
      const DotOutput out = p.run_checked();
      const auto check = p.check(out, in.ref);
      INFO(v.id << " n = " << n << ": condition number " << in.ref.condition_number() << ", " << check.detail);
      CHECK(out.as_double() == 0.0);
      CHECK_FALSE(check.acceptable());
      // The same row with the real kernel is verified, not merely no-bound.
      CHECK(real.check(real.run_checked(), in.ref).ok);
    }
  }
}

TEST_CASE("repeated launches give bitwise-identical, verified results", "[mp][gpu]") {
  // The second and later launches only work if the last block reset the counter.
  for (const Variant& v : mixed_precision::registry()) {
    for (std::size_t n : {std::size_t{1000}, (std::size_t{1} << 22) + 1}) {
      const Input& in = standard_input(v.element, n);
      PreparedVariant p(v, in.vectors, device(), stream());
      const DotOutput first = p.run_checked();
      INFO(v.id << " n = " << n);
      REQUIRE(p.check(first, in.ref).ok);
      for (int rep = 0; rep < 5; ++rep) {
        const DotOutput again = p.run_checked();
        CHECK(p.check(again, in.ref).ok);
        if (v.deterministic) CHECK(same_bits(first, again));
      }
    }
  }
}

TEST_CASE("int8 is exact at the edge of its overflow limit", "[mp][gpu][int8]") {
  const Variant* int8 = mixed_precision::find_variant("int8_dp4a");
  REQUIRE(int8 != nullptr);
  struct Case {
    std::size_t n;
    int x_sign;
    const char* what;
  };
  for (const Case c :
       {Case{std::size_t{1} << 24, 1, "2^24 products of 11 x 11"},
        Case{std::size_t{1} << 24, -1, "2^24 products of -11 x 11"}, Case{133144, 1, "133144 products of 127 x 127"},
        Case{133144, -1, "133144 products of -127 x 127"}}) {
    const int m = mixed_precision::int8_magnitude_limit(c.n);
    const auto host = mixed_precision::encode(ElementType::i8, c.n, [&](Operand w, std::size_t) {
      return static_cast<double>(w == Operand::x ? c.x_sign * m : m);
    });
    const DotReference ref = mixed_precision::reference_dot(host);
    // The largest sum the range allows, within a whisker of 2^31 - 1.
    REQUIRE(ref.exact == static_cast<std::int64_t>(c.x_sign) * static_cast<std::int64_t>(c.n) * m * m);
    // In magnitude: the negative cases sit just above -2^31.
    const std::int64_t magnitude = ref.exact < 0 ? -ref.exact : ref.exact;
    REQUIRE(magnitude <= 2147483647);
    REQUIRE(magnitude > 2000000000);
    const DeviceVectors dev = mixed_precision::upload(host);
    PreparedVariant p(*int8, dev, device(), stream());
    const DotOutput out = p.run_checked();
    INFO(c.what << ": got " << out.integer << ", expected " << ref.exact);
    CHECK(p.check(out, ref).ok);
    CHECK(static_cast<std::int64_t>(out.integer) == ref.exact);
  }
}

TEST_CASE("int8 gives the same exact answer for every grid", "[mp][gpu][int8]") {
  const Variant* int8 = mixed_precision::find_variant("int8_dp4a");
  REQUIRE(int8 != nullptr);
  const std::size_t n = (std::size_t{1} << 22) + 13;
  const Input& in = standard_input(ElementType::i8, n, 42);
  for (unsigned grid : {1u, 5u, 100u, int8->plan_grid(n, device())}) {
    PreparedVariant p(*int8, in.vectors, device(), stream(), grid);
    const DotOutput out = p.run_checked();
    INFO("grid " << grid);
    CHECK(static_cast<std::int64_t>(out.integer) == in.ref.exact);
  }
}
