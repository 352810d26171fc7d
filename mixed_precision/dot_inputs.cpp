#include "dot_inputs.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "inputs.hpp"  // common/: hash64, parallel_chunks

namespace mixed_precision {

int int8_magnitude_limit(std::uint64_t n) {
  if (n == 0 || n > kInt8MaxN) return 0;
  std::uint64_t m = 127;
  while (m > 0 && n * m * m > kInt8MaxN) --m;  // n * 127^2 < 2^46: no overflow in 64 bits
  return static_cast<int>(m);
}

namespace {

std::uint64_t operand_seed(std::uint64_t seed, Operand which) { return 2 * seed + static_cast<std::uint64_t>(which); }

}  // namespace

float float_input_value(std::uint64_t seed, Operand which, std::size_t i) {
  const std::uint64_t h = common::hash64(operand_seed(seed, which), i);
  // 23 random bits: 0.5 + k 2^-24 with k < 2^23 is exactly a float in [0.5, 1), and a
  // power-of-two scale keeps it exact. The sign comes from the low bits, which the
  // magnitude does not use.
  const float magnitude = (0.5f + static_cast<float>(h >> 41) * 0x1p-24f) * kFloatInputScale;
  return h % kNegativeOneIn == 0 ? -magnitude : magnitude;
}

std::int8_t int8_input_value(std::uint64_t seed, Operand which, std::size_t i, int magnitude) {
  if (magnitude < 1 || magnitude > 127)
    throw std::invalid_argument("int8 magnitude " + std::to_string(magnitude) + " is not in 1..127");
  const std::uint64_t h = common::hash64(operand_seed(seed, which), i);
  const int m = magnitude;
  const int k = static_cast<int>((h >> 32) % static_cast<std::uint64_t>(2 * m));  // 0 .. 2m-1
  return static_cast<std::int8_t>(k < m ? k - m : k - m + 1);                     // -m..-1, 1..m
}

namespace {

template <typename E>
E to_element(double v);

template <>
float to_element<float>(double v) {
  return static_cast<float>(v);
}
template <>
__half to_element<__half>(double v) {
  // Through float first: exact for every value this project draws (they are
  // floats), and round-to-nearest-even from float to half after that.
  return __float2half_rn(static_cast<float>(v));
}
template <>
__nv_bfloat16 to_element<__nv_bfloat16>(double v) {
  return __float2bfloat16_rn(static_cast<float>(v));
}
template <>
std::int8_t to_element<std::int8_t>(double v) {
  if (!(v == std::floor(v)) || v < -128.0 || v > 127.0)
    throw std::invalid_argument("int8 input " + std::to_string(v) + " is not a whole number in [-128, 127]");
  return static_cast<std::int8_t>(v);
}

double from_element(float e) { return static_cast<double>(e); }
double from_element(__half e) { return static_cast<double>(__half2float(e)); }
double from_element(__nv_bfloat16 e) { return static_cast<double>(__bfloat162float(e)); }
double from_element(std::int8_t e) { return static_cast<double>(e); }

template <typename E>
void fill(HostVectors& v, const std::function<double(Operand, std::size_t)>& value) {
  v.x.resize(v.n * sizeof(E));
  v.y.resize(v.n * sizeof(E));
  E* x = reinterpret_cast<E*>(v.x.data());
  E* y = reinterpret_cast<E*>(v.y.data());
  common::parallel_chunks(v.n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      x[i] = to_element<E>(value(Operand::x, i));
      y[i] = to_element<E>(value(Operand::y, i));
    }
  });
}

template <typename E>
double decode_as(const HostVectors& v, Operand which, std::size_t i) {
  const auto& bytes = which == Operand::x ? v.x : v.y;
  E e;
  std::memcpy(&e, bytes.data() + i * sizeof(E), sizeof(E));
  return from_element(e);
}

// Calls body.template operator()<E>() with E the element type of `type`.
template <typename Body>
auto with_element(ElementType type, Body&& body) {
  switch (type) {
    case ElementType::f32: return body(float{});
    case ElementType::f16: return body(__half{});
    case ElementType::bf16: return body(__nv_bfloat16{});
    case ElementType::i8: return body(std::int8_t{});
  }
  throw std::logic_error("unknown element type");
}

}  // namespace

HostVectors encode(ElementType type, std::size_t n, const std::function<double(Operand, std::size_t)>& value) {
  HostVectors v;
  v.type = type;
  v.n = n;
  with_element(type, [&](auto tag) {
    fill<decltype(tag)>(v, value);
    return 0;
  });
  return v;
}

HostVectors make_inputs(ElementType type, std::uint64_t seed, std::size_t n, int int8_magnitude) {
  if (type == ElementType::i8)
    return encode(type, n, [&](Operand w, std::size_t i) {
      return static_cast<double>(int8_input_value(seed, w, i, int8_magnitude));
    });
  return encode(type, n, [&](Operand w, std::size_t i) { return static_cast<double>(float_input_value(seed, w, i)); });
}

double decode(const HostVectors& v, Operand which, std::size_t i) {
  return with_element(v.type, [&](auto tag) { return decode_as<decltype(tag)>(v, which, i); });
}

double DotReference::condition_number() const {
  const double v = std::fabs(value());
  return v > 0.0 ? sum_abs / v : INFINITY;
}

DotReference reference_dot(const HostVectors& v) {
  const std::size_t chunk = std::size_t{1} << 20;
  const std::size_t chunks = (v.n + chunk - 1) / chunk;
  std::vector<double> dots(chunks, 0.0);
  std::vector<double> abs_sums(chunks, 0.0);
  std::vector<std::int64_t> exact(chunks, 0);
  with_element(v.type, [&](auto tag) {
    using E = decltype(tag);
    const E* x = reinterpret_cast<const E*>(v.x.data());
    const E* y = reinterpret_cast<const E*>(v.y.data());
    common::parallel_chunks(chunks, [&](std::size_t begin, std::size_t end) {
      for (std::size_t c = begin; c < end; ++c) {
        double s = 0.0;
        double a = 0.0;
        std::int64_t e = 0;
        const std::size_t last = std::min(v.n, (c + 1) * chunk);
        for (std::size_t i = c * chunk; i < last; ++i) {
          const double p = from_element(x[i]) * from_element(y[i]);  // exact in double
          s += p;
          a += std::fabs(p);
          if constexpr (std::is_same_v<E, std::int8_t>) e += static_cast<std::int64_t>(x[i]) * y[i];
        }
        dots[c] = s;
        abs_sums[c] = a;
        exact[c] = e;
      }
    });
    return 0;
  });
  DotReference r;
  r.integer = v.type == ElementType::i8;
  for (std::size_t c = 0; c < chunks; ++c) {
    r.dot += dots[c];
    r.sum_abs += abs_sums[c];
    r.exact += exact[c];
  }
  return r;
}

}  // namespace mixed_precision
