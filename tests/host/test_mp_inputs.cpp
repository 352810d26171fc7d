// The dot-product inputs: ranges, rounding to each type, INT8 packing, references.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>

#include "catch.hpp"
#include "dot_inputs.hpp"

using mixed_precision::ElementType;
using mixed_precision::Operand;

TEST_CASE("float inputs: +-[2^-7, 2^-6), a quarter negative, repeatable, x and y differ", "[mp][inputs]") {
  const float lo = std::ldexp(1.0f, -7);
  const float hi = std::ldexp(1.0f, -6);
  int negative = 0;
  int negative_products = 0;
  int equal_xy = 0;
  const int count = 100000;
  for (int i = 0; i < count; ++i) {
    const float x = mixed_precision::float_input_value(7, Operand::x, static_cast<std::size_t>(i));
    const float y = mixed_precision::float_input_value(7, Operand::y, static_cast<std::size_t>(i));
    REQUIRE(std::fabs(x) >= lo);
    REQUIRE(std::fabs(x) < hi);
    REQUIRE(std::fabs(y) >= lo);
    REQUIRE(std::fabs(y) < hi);
    REQUIRE(x == mixed_precision::float_input_value(7, Operand::x, static_cast<std::size_t>(i)));
    negative += x < 0.0f;
    negative_products += (x < 0.0f) != (y < 0.0f);
    equal_xy += x == y;
  }
  // One in four elements is negative, so 2 x 1/4 x 3/4 = 3/8 of the products are.
  CHECK(negative > count * 23 / 100);
  CHECK(negative < count * 27 / 100);
  CHECK(negative_products > count * 355 / 1000);
  CHECK(negative_products < count * 395 / 1000);
  CHECK(equal_xy < 10);
  CHECK(mixed_precision::float_input_value(1, Operand::x, 0) != mixed_precision::float_input_value(2, Operand::x, 0));
}

TEST_CASE("FP16 inputs and products stay normal: no underflow (erratum 9)", "[mp][inputs]") {
  const std::size_t n = 50000;
  const auto v = mixed_precision::make_inputs(ElementType::f16, 3, n, 0);
  const double smallest_normal = std::ldexp(1.0, -14);  // 6.1e-5
  double smallest_product = 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = mixed_precision::decode(v, Operand::x, i);
    const double y = mixed_precision::decode(v, Operand::y, i);
    REQUIRE(std::fabs(x) >= std::ldexp(1.0, -7));
    REQUIRE(std::fabs(x) <= std::ldexp(1.0, -6));  // rounding may reach 2^-6
    smallest_product = std::min(smallest_product, std::fabs(x * y));
  }
  CHECK(smallest_product >= smallest_normal);
}

TEST_CASE("float inputs keep the condition number near 4 and the sum inside a half", "[mp][inputs]") {
  // The expected sum is n / 4 times the mean |product| (9/16 x 2^-12): at 2^30 pairs
  // it stays below 65504, the largest half, so variant 02 can be checked there too.
  const double mean_abs_product = 0.5625 * std::ldexp(1.0, -12);
  CHECK(std::ldexp(1.0, 30) * mean_abs_product / 4.0 < 65504.0 * 0.6);
  for (ElementType t : {ElementType::f32, ElementType::f16, ElementType::bf16}) {
    for (std::size_t n : {std::size_t{1} << 16, (std::size_t{1} << 20) + 7}) {
      const auto r = mixed_precision::reference_dot(mixed_precision::make_inputs(t, 1, n, 0));
      INFO("type " << static_cast<int>(t) << ", n = " << n << ": condition number " << r.condition_number());
      CHECK(r.dot > 0.0);
      CHECK(r.condition_number() > 3.5);
      CHECK(r.condition_number() < 4.6);
      CHECK(r.sum_abs / static_cast<double>(n) == Approx(mean_abs_product).epsilon(0.02));
    }
  }
}

TEST_CASE("rounding to each type is to nearest, from the same real values", "[mp][inputs]") {
  const std::size_t n = 20000;
  const auto f32 = mixed_precision::make_inputs(ElementType::f32, 9, n, 0);
  const auto f16 = mixed_precision::make_inputs(ElementType::f16, 9, n, 0);
  const auto bf16 = mixed_precision::make_inputs(ElementType::bf16, 9, n, 0);
  REQUIRE(f32.x.size() == 4 * n);
  REQUIRE(f16.x.size() == 2 * n);
  REQUIRE(bf16.x.size() == 2 * n);
  bool any_f16_changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = mixed_precision::decode(f32, Operand::y, i);
    REQUIRE(exact == static_cast<double>(mixed_precision::float_input_value(9, Operand::y, i)));
    // Half an ulp of [2^-7, 2^-6) at most: 2^-18 for FP16 (11-bit significand), 2^-15
    // for BF16 (8 bits).
    const double h = mixed_precision::decode(f16, Operand::y, i);
    const double b = mixed_precision::decode(bf16, Operand::y, i);
    REQUIRE(std::fabs(h - exact) <= std::ldexp(1.0, -18));
    REQUIRE(std::fabs(b - exact) <= std::ldexp(1.0, -15));
    any_f16_changed = any_f16_changed || h != exact;
  }
  CHECK(any_f16_changed);
}

TEST_CASE("int8 inputs: non-zero, in [-m, m], every value drawn", "[mp][inputs][int8]") {
  for (int m : {1, 2, 11, 127}) {
    std::set<int> seen;
    for (std::size_t i = 0; i < 20000; ++i) {
      const int v = mixed_precision::int8_input_value(4, Operand::x, i, m);
      REQUIRE(v != 0);
      REQUIRE(v >= -m);
      REQUIRE(v <= m);
      seen.insert(v);
    }
    CHECK(seen.size() == static_cast<std::size_t>(2 * m));
  }
  CHECK_THROWS_AS(mixed_precision::int8_input_value(4, Operand::x, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(mixed_precision::int8_input_value(4, Operand::x, 0, 128), std::invalid_argument);
  CHECK_THROWS_AS(mixed_precision::encode(ElementType::i8, 3, [](Operand, std::size_t) { return 0.5; }),
                  std::invalid_argument);
  CHECK_THROWS_AS(mixed_precision::encode(ElementType::i8, 3, [](Operand, std::size_t) { return 128.0; }),
                  std::invalid_argument);
}

namespace {

// __dp4a(a, b, c) as the CUDA documentation defines it: the four byte pairs of two
// words, each byte a signed 8-bit integer, multiplied and added to c.
std::int32_t dp4a_model(std::uint32_t a, std::uint32_t b, std::int32_t c) {
  for (int k = 0; k < 4; ++k) {
    const auto ak = static_cast<std::int8_t>(static_cast<std::uint8_t>(a >> (8 * k)));
    const auto bk = static_cast<std::int8_t>(static_cast<std::uint8_t>(b >> (8 * k)));
    c += static_cast<std::int32_t>(ak) * static_cast<std::int32_t>(bk);
  }
  return c;
}

}  // namespace

TEST_CASE("int8 packing: each 32-bit word holds four consecutive elements, signed", "[mp][inputs][int8]") {
  const std::size_t n = 4096;
  const int m = 127;
  const auto v = mixed_precision::make_inputs(ElementType::i8, 11, n, m);
  REQUIRE(v.x.size() == n);
  std::int64_t scalar = 0;
  std::int32_t packed = 0;
  for (std::size_t w = 0; w < n / 4; ++w) {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::memcpy(&a, v.x.data() + 4 * w, 4);  // what the kernel loads as one word of a uint4
    std::memcpy(&b, v.y.data() + 4 * w, 4);
    for (int k = 0; k < 4; ++k) {
      const std::size_t i = 4 * w + static_cast<std::size_t>(k);
      REQUIRE(static_cast<std::int8_t>(static_cast<std::uint8_t>(a >> (8 * k))) ==
              static_cast<std::int8_t>(mixed_precision::decode(v, Operand::x, i)));
      scalar += static_cast<std::int64_t>(mixed_precision::decode(v, Operand::x, i) *
                                          mixed_precision::decode(v, Operand::y, i));
    }
    packed = dp4a_model(a, b, packed);
  }
  CHECK(packed == scalar);
  CHECK(dp4a_model(0xFFFFFFFFu, 0xFFFFFFFFu, 0) == 4);           // four (-1) x (-1)
  CHECK(dp4a_model(0x80808080u, 0x7F7F7F7Fu, 0) == -4 * 16256);  // four (-128) x 127
}

TEST_CASE("references: hand-computed dot products", "[mp][inputs]") {
  const std::vector<double> xs = {1.0, 2.0, -3.0, 0.75};
  const std::vector<double> ys = {0.5, 0.25, 1.0, -2.0};
  for (ElementType t : {ElementType::f32, ElementType::f16, ElementType::bf16}) {
    const auto v = mixed_precision::encode(t, xs.size(),
                                           [&](Operand w, std::size_t i) { return w == Operand::x ? xs[i] : ys[i]; });
    const auto r = mixed_precision::reference_dot(v);
    CHECK(r.dot == 0.5 + 0.5 - 3.0 - 1.5);
    CHECK(r.sum_abs == 0.5 + 0.5 + 3.0 + 1.5);
    CHECK_FALSE(r.integer);
  }
  const auto iv = mixed_precision::encode(ElementType::i8, 3, [](Operand w, std::size_t i) {
    const double x[] = {127, -128, 5};
    const double y[] = {127, -128, -7};
    return w == Operand::x ? x[i] : y[i];
  });
  const auto ir = mixed_precision::reference_dot(iv);
  CHECK(ir.integer);
  CHECK(ir.exact == 16129 + 16384 - 35);
}

TEST_CASE("references over many chunks match a long double sum", "[mp][inputs]") {
  const std::size_t n = (std::size_t{3} << 20) + 5;
  const auto v = mixed_precision::make_inputs(ElementType::f16, 1, n, 0);
  const auto r = mixed_precision::reference_dot(v);
  long double s = 0.0L;
  long double a = 0.0L;
  for (std::size_t i = 0; i < n; ++i) {
    const long double p = static_cast<long double>(mixed_precision::decode(v, Operand::x, i)) *
                          static_cast<long double>(mixed_precision::decode(v, Operand::y, i));
    s += p;
    a += std::fabs(p);
  }
  CHECK(std::fabs(r.dot - static_cast<double>(s)) <= 1e-12 * static_cast<double>(a));
  CHECK(r.sum_abs == Approx(static_cast<double>(a)).epsilon(1e-12));
  const auto again = mixed_precision::reference_dot(v);
  CHECK(again.dot == r.dot);  // fixed chunk order: bitwise repeatable
}
