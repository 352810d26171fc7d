// lab/warp_tools.cuh: every design's sum at sizes that leave warps partly full
// (n not a multiple of 32, fewer elements than threads) and at sizes that fill the GPU;
// floats within the bound of common/verify.hpp, integers exactly (modulo 2^32).
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu_fixture.hpp"
#include "inputs.hpp"
#include "verify.hpp"
#include "warp_tools.cuh"

namespace {

// Partly full warps and blocks first (the last block has threads with no element below
// one element per thread), then 2^20 + 7 and 2^24 + 1, which fill the GPU.
const std::vector<std::size_t> kSizes = {1,    2,    31,   32,   33,    100,    255,     256,     257,
                                         1000, 1023, 1025, 4097, 65535, 270000, 1048583, 16777217};

// The design's sum of `host` on the GPU, its output poisoned first with `poison`.
template <typename T>
T run_design(const warp_tools::Design& d, const std::vector<T>& host, T poison, unsigned* grid_used) {
  const std::size_t n = host.size();
  const unsigned grid = d.grid(n, gpu_test::device().sm_count);
  common::DeviceBuffer<T> in(n);
  common::DeviceBuffer<T> out(1);
  common::DeviceBuffer<T> partials(grid);
  common::copy_to_device(in.get(), host.data(), in.bytes());
  common::copy_to_device(out.get(), &poison, sizeof poison);
  d.launch(in.get(), n, out.get(), partials.get(), grid, gpu_test::stream());
  CUDA_CHECK(cudaStreamSynchronize(gpu_test::stream()));
  T result{};
  CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
  *grid_used = grid;
  return result;
}

}  // namespace

TEST_CASE("warp tools: every float design is within its bound, partly full warps included", "[gpu][warp_tools]") {
  for (const auto& d : warp_tools::designs()) {
    if (d.element != warp_tools::Element::f32) continue;
    for (const common::Pattern p : {common::Pattern::uniform, common::Pattern::mixed_signs, common::Pattern::ones}) {
      for (const std::size_t n : kSizes) {
        const std::vector<float> host = common::make_input(p, 3, n);
        unsigned grid = 0;
        const float result = run_design(d, host, common::poison_value(), &grid);
        const common::Check c =
            common::check_sum(result, common::reference_sum(host), warp_tools::float_depth(n, grid), n);
        INFO(d.key << " n=" << n << " pattern=" << common::pattern_name(p) << " grid=" << grid << ": " << c.detail);
        CHECK(c.ok);
        // All ones up to 2^24: every partial sum is an exact integer, so every order gives n.
        if (p == common::Pattern::ones && n <= (std::size_t{1} << 24)) CHECK(result == static_cast<float>(n));
      }
    }
  }
}

TEST_CASE("warp tools: every integer design is exact, partly full warps included", "[gpu][warp_tools]") {
  for (const auto& d : warp_tools::designs()) {
    if (d.element != warp_tools::Element::u32) continue;
    if (!d.runs_here()) continue;
    for (const std::size_t n : kSizes) {
      const std::vector<unsigned> host = warp_tools::make_u32_input(n, 5 + n);
      const unsigned ref = warp_tools::u32_reference(host, n);
      unsigned grid = 0;
      const unsigned result = run_design(d, host, ~ref, &grid);
      INFO(d.key << " n=" << n << " grid=" << grid);
      CHECK(result == ref);
    }
  }
}

TEST_CASE("warp tools: integer sums wrap modulo 2^32, so no order can hide a lost element", "[gpu][warp_tools]") {
  // 2^20 + 3 copies of 2^31 + 1: the exact sum is far past 2^32; modulo 2^32 it is
  // 2^31 + 2^20 + 3 (an odd count of 2^31 leaves 2^31). One element fewer or more changes it.
  const std::vector<unsigned> host((std::size_t{1} << 20) + 3, 0x80000001u);
  const unsigned expected = 0x80000000u + (1u << 20) + 3u;
  REQUIRE(warp_tools::u32_reference(host, host.size()) == expected);
  for (const auto& d : warp_tools::designs()) {
    if (d.element != warp_tools::Element::u32 || !d.runs_here()) continue;
    unsigned grid = 0;
    INFO(d.key);
    CHECK(run_design(d, host, ~expected, &grid) == expected);
  }
}

TEST_CASE("warp tools: the plan leaves threads without elements only below one element per thread",
          "[gpu][warp_tools]") {
  const int sms = gpu_test::device().sm_count;
  for (const auto& d : warp_tools::designs()) {
    INFO(d.key);
    CHECK(d.grid(1, sms) == 1);
    CHECK(d.grid(1000, sms) == 4);  // 1000 = 3 x 256 + 232: the last block's warp 7 holds 8 lanes
    CHECK(d.grid(std::size_t{1} << 24, sms) <= static_cast<unsigned>(sms) * 8);
  }
}
