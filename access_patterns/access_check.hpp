// Checking the access-pattern programs' results on the host, and the address
// arithmetic their predictions use (sectors a warp touches, bank wavefronts).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "runner.hpp"

namespace access_patterns {

constexpr std::uint32_t kPoisonBits = 0xCAFEBABEu;  // common::poison_value()'s bits

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
inline std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return ceil_div(a, b) * b; }

// `count` elements of device memory, copied back once the stream's work is done.
template <typename T>
std::vector<T> copy_back(const T* device, std::size_t count, cudaStream_t stream) {
  std::vector<T> host(count);
  if (count > 0) CUDA_CHECK(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

// Results that must equal the reference bit for bit: whole numbers, and floats that
// the kernel and the host compute with the same correctly rounded operations.
template <typename T>
Verdict compare_exact(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  static_assert(sizeof(T) == 4, "compare_exact takes 32-bit values");
  Verdict v;
  if (got.size() != want.size()) {
    v.detail = what + ": " + std::to_string(got.size()) + " values, expected " + std::to_string(want.size());
    return v;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::uint32_t g = 0;
    std::uint32_t w = 0;
    std::memcpy(&g, &got[i], 4);
    std::memcpy(&w, &want[i], 4);
    if (g == w) continue;
    std::ostringstream s;
    s.precision(9);
    s << what << "[" << i << "] is " << +got[i] << ", expected " << +want[i];
    if (g == kPoisonBits) s << " (still the poison value: never written)";
    v.detail = s.str();
    return v;
  }
  v.ok = true;
  v.detail = std::to_string(got.size()) + " " + what + " exact";
  return v;
}

// A float sum's reference: the double sum of the same floats, the sum of their
// magnitudes, and the most float additions any term passed through (common/verify.hpp).
struct SumRef {
  double sum = 0.0;
  double sum_abs = 0.0;
  std::size_t depth = 0;
  std::size_t terms = 0;
};

// Every sum within its error bound (common::check_sum); max_rel_error is filled in.
Verdict check_sums(const std::vector<float>& got, const std::vector<SumRef>& want, const std::string& what);

// Distinct 32-byte sectors among the byte addresses one warp request touches.
std::size_t distinct_sectors(const std::vector<std::uint64_t>& byte_addresses);

// Shared-memory wavefronts one warp request of 4-byte words needs: the most distinct
// words that fall in one bank (the same word read by several lanes is sent once).
unsigned bank_wavefronts(const std::vector<unsigned>& word_slots);

}  // namespace access_patterns
