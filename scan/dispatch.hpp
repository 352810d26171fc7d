// A launcher's one switch from the run-time (type, kind) to a kernel's template
// arguments: f(Tag<T, kInclusive>{}) with T unsigned (int32 bits) or float.
#pragma once

#include "scan.hpp"

namespace scan {

template <typename T, bool kInclusive>
struct Tag {
  using type = T;
  static constexpr bool inclusive = kInclusive;
};

template <typename F>
void dispatch(ValueType type, ScanKind kind, F&& f) {
  const bool inclusive = kind == ScanKind::inclusive;
  if (type == ValueType::i32) {
    if (inclusive)
      f(Tag<unsigned, true>{});
    else
      f(Tag<unsigned, false>{});
  } else {
    if (inclusive)
      f(Tag<float, true>{});
    else
      f(Tag<float, false>{});
  }
}

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace scan
