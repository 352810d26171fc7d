// What stages 16 (reproducible) and 17 (compensated) promise beyond a correct sum:
// stage 16's result does not change by a single bit with the block size, the grid or
// the start address, and carries the bits of the host replay of its order
// (reduction/16_reproducible_order.hpp), which no GPU enters; stage 17's error is a fraction of the plain stages'; both
// are right above 2^32 elements. (tests/gpu/test_stages.cpp checks them like every other stage as well.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu_fixture.hpp"
#include "inputs.hpp"
#include "reduction/16_reproducible_order.hpp"
#include "reduction/prepared_stage.hpp"
#include "reduction/registry.hpp"
#include "verify.hpp"

using common::Pattern;
using reduction::PreparedStage;
using reduction::Stage;

namespace {

using gpu_test::device;
using gpu_test::stream;

// A registry entry, which lives as long as the program. The key is a plain pointer:
// a std::string parameter would make every `const Stage& s = stage("...")` bind the
// result of a call that took a temporary, which GCC 13 reports (-Wdangling-reference).
const Stage& stage(const char* key) {
  const Stage* s = reduction::find_stage(key);
  INFO("stage " << key);
  REQUIRE(s != nullptr);
  return *s;
}

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::string hex(float f) {
  std::ostringstream s;
  s.precision(9);
  s << f << " (0x" << std::hex << bits(f) << ")";
  return s.str();
}

// Runs a stage `runs` times with a grid we choose (0: the plan's) rather than the
// plan's, in scratch allocated and zeroed here as PreparedStage would. The repeats
// reuse the scratch, so a ticket left non-zero by one launch breaks the next.
struct ForcedRuns {
  std::vector<float> results;
  reduction::LaunchPlan plan;
  unsigned grid = 0;
};

ForcedRuns run_with_grid(const Stage& s, const float* in, std::size_t n, int block, unsigned grid, int runs = 2) {
  ForcedRuns r;
  r.plan = s.plan(n, block, device());
  r.grid = grid != 0 ? grid : r.plan.grid;
  common::DeviceBuffer<unsigned char> scratch(r.plan.scratch_bytes);
  if (scratch.bytes() > 0) CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), stream()));
  common::DeviceBuffer<float> out(1);
  reduction::StageArgs a;
  a.in = in;
  a.n = n;
  a.out = out.get();
  a.scratch = scratch.get();
  a.scratch_bytes = r.plan.scratch_bytes;
  a.block = block;
  a.grid = r.grid;
  a.stream = stream();
  const float poison = common::poison_value();
  for (int i = 0; i < runs; ++i) {
    CUDA_CHECK(cudaMemcpyAsync(out.get(), &poison, sizeof poison, cudaMemcpyHostToDevice, stream()));
    s.launch(a);
    float result = 0.0f;
    CUDA_CHECK(cudaMemcpyAsync(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost, stream()));
    CUDA_CHECK(cudaStreamSynchronize(stream()));
    r.results.push_back(result);
  }
  return r;
}

std::vector<int> blocks_of(const Stage& s, std::vector<int> wanted) {
  std::vector<int> ok;
  for (int b : wanted)
    if (reduction::block_size_error(s, b, device().max_threads_per_block).empty()) ok.push_back(b);
  return ok;
}

// Every block size the stage accepts on this device (powers of two from 32 to 1024).
std::vector<int> accepted_blocks(const Stage& s) {
  std::vector<int> all;
  for (int b = 32; b <= 1024; b *= 2) all.push_back(b);
  const std::vector<int> ok = blocks_of(s, all);
  INFO("stage " << s.id);
  REQUIRE(!ok.empty());
  return ok;
}

// The host replay of stage 16's order. Inputs with a NaN are left out of bit comparisons:
// a GPU writes one canonical NaN, the host keeps an input's payload.
bool replayable(const std::vector<float>& host) {
  for (float v : host)
    if (std::isnan(v)) return false;
  return true;
}

// Stage 16 on `host` placed at every start offset in `offsets`, with every block size
// and grid listed: every result must carry the bits of the first, that one must pass
// the tolerance check, and (inputs without NaN) carry the bits of the host replay.
void check_reproducible(const std::vector<float>& host, const std::vector<std::size_t>& offsets,
                        const std::vector<int>& blocks, const std::vector<unsigned>& grids, const std::string& what) {
  const Stage& s = stage("reproducible");
  const std::size_t n = host.size();
  const auto ref = common::reference_sum(host);
  const bool replay = replayable(host);
  const float order = replay ? reduction::reproducible::reproducible_order_sum(host.data(), n) : 0.0f;
  common::DeviceBuffer<float> buffer(n + 3);
  float expected = 0.0f;
  int configurations = 0;
  for (std::size_t offset : offsets) {
    float* start = buffer.get() + offset;
    common::copy_to_device(start, host.data(), n * sizeof(float));
    for (int block : blocks_of(s, blocks)) {
      for (unsigned grid : grids) {
        const ForcedRuns r = run_with_grid(s, start, n, block, grid);
        INFO(what << " n=" << n << " offset=" << offset << " block=" << block << " grid=" << r.grid
                  << " (plan: " << r.plan.grid << ")");
        if (configurations == 0) {
          expected = r.results[0];
          const auto check = common::check_sum(expected, ref, r.plan.error_depth, n);
          INFO(check.detail);
          REQUIRE(check.ok);
          if (replay) {
            INFO("GPU " << hex(expected) << ", host replay of the order " << hex(order));
            CHECK(bits(expected) == bits(order));
          }
        }
        for (float got : r.results) {
          INFO("got " << hex(got) << ", first configuration gave " << hex(expected));
          CHECK(bits(got) == bits(expected));
        }
        ++configurations;
      }
    }
  }
  CHECK(configurations >= 5);
}

// The registered error bound of a stage for one input, run through PreparedStage.
float run_and_check(const Stage& s, const float* in, std::size_t n, const common::Reference& ref,
                    const std::string& what) {
  PreparedStage prepared(s, in, n, 0, device(), stream());
  const float result = prepared.run_checked();
  const auto check = common::check_sum(result, ref, prepared.plan().bound(), n);
  INFO(s.id << " " << what << " n=" << n << ": " << check.detail);
  CHECK(check.ok);
  return result;
}

// Stage 17's error bound for one input, the derivation of chapters/17_compensated.md with |sum x| in
// place of sum|x| for the final rounding: u|s| + (1 + u)((1 + u)^D_c - 1)(1 + u)^D_s u D_s sum|x|.
double compensated_bound(const common::Reference& ref, std::size_t n, unsigned grid, int block) {
  const double u = 0x1p-24;
  const std::size_t threads = static_cast<std::size_t>(grid) * static_cast<std::size_t>(block);
  const std::size_t per_thread = (n / 4 + threads - 1) / threads + 2;
  const std::size_t b = static_cast<std::size_t>(block);
  const double d_s =
      static_cast<double>(per_thread + 2 + 2 * common::tree_depth(b) + (static_cast<std::size_t>(grid) + b - 1) / b);
  const auto growth = [&](double k) { return std::expm1(k * std::log1p(u)); };
  return u * std::fabs(ref.sum) + (1.0 + u) * growth(2.0 * d_s) * (1.0 + growth(d_s)) * u * d_s * ref.sum_abs;
}

}  // namespace

TEST_CASE("stage 16 gives the same bits for every block size, grid and start address", "[gpu][reproducible]") {
  const std::vector<unsigned> grids = {0, 1, 7, 132, 1056};  // 0: the plan's grid
  const std::vector<int> blocks = accepted_blocks(stage("reproducible"));
  for (Pattern p : {Pattern::uniform, Pattern::mixed_signs}) {
    for (std::size_t n : {std::size_t{3000}, (std::size_t{1} << 20) + 7, (std::size_t{1} << 24) + 3}) {
      check_reproducible(common::make_input(p, 1, n), {0, 1, 2, 3}, blocks, grids, common::pattern_name(p));
    }
  }
}

TEST_CASE("stage 16 gives the host replay's bits where its tile size or launch shape changes", "[gpu][reproducible]") {
  // The one-block kernel up to 2^15 (32 tiles of 1024), the tiled kernel above; tiles
  // of 1024 up to 2^21 - 1, doubling at 2^21, 2^22, ..., 2^25 (32768 from there on).
  // Each boundary, one below and one above, at every start offset, block size and a
  // few grids.
  const std::vector<int> blocks = accepted_blocks(stage("reproducible"));
  std::vector<std::size_t> sizes = {1, 2, 3, 4, 5, 1023, 1024, 1025};
  for (int k : {15, 21, 22, 23, 24, 25})
    for (std::size_t n : {(std::size_t{1} << k) - 1, std::size_t{1} << k, (std::size_t{1} << k) + 1})
      sizes.push_back(n);
  for (std::size_t n : sizes) {
    INFO("n = " << n << ", tile " << reduction::reproducible::tile_floats(n));
    check_reproducible(common::make_input(Pattern::mixed_signs, 5, n), {0, 1, 2, 3}, blocks, {0, 1, 7, 1056},
                       "mixed_signs");
  }
}

TEST_CASE("stage 16 gives the same bits at small, odd and large sizes", "[gpu][reproducible]") {
  // Sizes around one tile and a group of 32 tiles (1024 floats each below 2^21, 32768
  // from 2^25), sizes with more tiles than two rounds of a 7-block grid cover (the
  // counter hands out the later chunks), and one whose 1025 group sums take the final
  // tree through its scratch (global memory) levels.
  constexpr std::size_t kSmall = 1024;
  constexpr std::size_t kLarge = 32768;
  for (std::size_t n : {std::size_t{33}, 32 * kSmall + 5, 33 * kSmall - 1, 64 * kSmall + 1, (std::size_t{3} << 20) + 1,
                        (std::size_t{1} << 26) + 32 * kLarge + 5, (std::size_t{1} << 26) + 33 * kLarge - 1})
    check_reproducible(common::make_input(Pattern::mixed_signs, 2, n), {0, 1, 3}, {128, 1024}, {0, 1, 7, 1056},
                       "mixed_signs");
  check_reproducible(common::make_input(Pattern::uniform, 3, 1024 * 32 * kLarge + 5), {0, 1}, {256, 1024}, {0, 7, 1056},
                     "uniform");
}

TEST_CASE("stages 16 and 17 at every size, input pattern and start address", "[gpu][reproducible][compensated]") {
  std::vector<std::size_t> sizes = {1, 2, 3, 4, 5, 31, 33, 4097, (std::size_t{1} << 20) + 7};
  std::mt19937_64 rng(20261121);
  for (int i = 0; i < 3; ++i) sizes.push_back(1 + rng() % (std::size_t{3} << 20));
  for (Pattern p : common::all_patterns()) {
    for (std::size_t n : sizes) {
      const auto host = common::make_input(p, 1, n);
      common::DeviceBuffer<float> buffer(n + 3);
      const auto ref = common::reference_sum(host);
      for (std::size_t offset = 0; offset < 4; ++offset) {
        common::copy_to_device(buffer.get() + offset, host.data(), n * sizeof(float));
        const std::string what = common::pattern_name(p) + " offset=" + std::to_string(offset);
        for (const char* key : {"reproducible", "compensated"}) {
          const float result = run_and_check(stage(key), buffer.get() + offset, n, ref, what);
          if (p == Pattern::ones && n <= (std::size_t{1} << 24)) CHECK(result == static_cast<float>(n));
        }
      }
    }
  }
}

TEST_CASE("stage 17's error on mixed signs is within its bound and several times below stages 05 and CUB",
          "[gpu][compensated]") {
  // mixed_signs at 2^24: the sum is ~10^3 against sum|x| ~ 8.4 * 10^6, so a plain
  // float sum is off by several units in the last place of the result. Stage 17's
  // error is at most the final rounding of s + c, u|s| (u = 2^-24), plus the
  // second-order term of chapters/17_compensated.md, which depends on the
  // launch (compensated_bound below). With the H200's grid (D_s ~ 40) that bound is
  // below 2^-20 |s| = 16 u|s| for every seed here (the smallest |s| is ~200); the
  // errors actually seen are a fraction of u|s|: the rounding of the result alone.
  //
  // The comparison cannot be "10x per input": the result is a float, so even the
  // exactly rounded sum is off by up to half a unit in the last place, and a pairwise
  // tree (stage 05) is itself only a few units off on random signs; for single seeds
  // the two can coincide. Summed over these 16 seeds, a host replay of stage 05's
  // order gives 8.3x the error of the exactly rounded sums, and a model of CUB's order
  // (16 elements per thread, then trees) 6.0x. The compensated stage must keep at
  // least kGain = 4x over both.
  constexpr double kRelBound = 0x1p-20;
  constexpr double kGain = 4.0;
  const std::size_t n = std::size_t{1} << 24;
  const Stage& compensated = stage("compensated");
  const Stage& sequential = stage("05");
  const Stage& cub = stage("cub");
  common::DeviceBuffer<float> dev(n);
  double err_compensated = 0.0, err_sequential = 0.0, err_cub = 0.0, worst_rel = 0.0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto host = common::make_input(Pattern::mixed_signs, seed, n);
    const auto ref = common::reference_sum(host);
    common::copy_to_device(dev.get(), host.data(), n * sizeof(float));
    const std::string what = "mixed_signs seed=" + std::to_string(seed);

    PreparedStage prepared(compensated, dev.get(), n, 0, device(), stream());
    const float result = prepared.run_checked();
    const double e15 = std::fabs(static_cast<double>(result) - ref.sum);
    const double bound = compensated_bound(ref, n, prepared.plan().grid, prepared.block());
    const double e05 = std::fabs(run_and_check(sequential, dev.get(), n, ref, what) - ref.sum);
    const double ecub = std::fabs(run_and_check(cub, dev.get(), n, ref, what) - ref.sum);
    const double rel = e15 / std::fabs(ref.sum);
    INFO(what << ": sum " << ref.sum << ", errors: stage 17 " << e15 << " (relative " << rel << ", bound " << bound
              << "), stage 05 " << e05 << ", CUB " << ecub);
    CHECK(common::check_sum(result, ref, prepared.plan().bound(), n).ok);
    CHECK(e15 <= bound);
    CHECK(rel <= kRelBound);
    worst_rel = std::max(worst_rel, rel);
    err_compensated += e15;
    err_sequential += e05;
    err_cub += ecub;
  }
  INFO("summed absolute errors over 16 seeds: stage 17 " << err_compensated << ", stage 05 " << err_sequential
                                                         << ", CUB " << err_cub);
  CHECK(err_compensated * kGain <= err_sequential);
  CHECK(err_compensated * kGain <= err_cub);
  WARN("mixed_signs 2^24, 16 seeds: stage 17 worst relative error "
       << worst_rel << "; summed errors: stage 05 / stage 17 = " << err_sequential / err_compensated
       << ", CUB / stage 17 = " << err_cub / err_compensated);
}

TEST_CASE("stages 16 and 17 are exact at n = 2^32 + 3 (64-bit indices)", "[gpu][reproducible][compensated][big]") {
  // x_i = 0.25 (i % 4) for i < 2^32 and x_i = 2^20 for the last three elements: the
  // sum is 1.5 * 2^30 + 3 * 2^20 = 1539 * 2^20, a float. An index that wraps at 2^32
  // reads 0, 0.25 and 0.5 instead of the last three and misses by 3 * 2^20.
  // Stage 17 must hit the sum exactly: every value is a multiple of 0.25, so every
  // TwoSum error is one as well and every compensation (< 2^22 in size) is exact; s + c
  // is then the exact sum, a float. Stage 16 must give its order's bits, worked out here
  // from the tile sums: a stripe (512 elements) sums to 192, a tile to 192 per full stripe
  // it owns, plus 3 * 2^20 for the tile that owns the last stripe (the three 2^20s), each
  // exact; combine_tile_sums then replays steps 5 and 6 (two of whose additions round
  // at this n).
  const std::size_t head = std::size_t{1} << 32;
  const std::size_t n = head + 3;
  const float last = 0x1p20f;
  const double exact = 1.5 * 0x1p30 + 3.0 * 0x1p20;
  const std::size_t bytes = n * sizeof(float);
  std::size_t free_bytes = 0, total_bytes = 0;
  common::device_memory(free_bytes, total_bytes);
  if (free_bytes < bytes + (std::size_t{1} << 30))
    FAIL("n = 2^32 + 3 needs " << bytes << " bytes of input and about 1 GiB more; only " << free_bytes
                               << " bytes are free on " << device().name << ".");

  // Filled on the device: one chunk from the host, doubled by device-to-device copies
  // (the period 4 divides the chunk), then the last three elements.
  common::DeviceBuffer<float> x(n);
  const std::size_t chunk = std::size_t{1} << 24;
  std::vector<float> pattern(chunk);
  for (std::size_t i = 0; i < chunk; ++i) pattern[i] = 0.25f * static_cast<float>(i % 4);
  common::copy_to_device(x.get(), pattern.data(), chunk * sizeof(float));
  for (std::size_t have = chunk; have < head; have *= 2)
    common::copy_to_device(x.get() + have, x.get(), have * sizeof(float), cudaMemcpyDeviceToDevice);
  const float tail[3] = {last, last, last};
  common::copy_to_device(x.get() + head, tail, sizeof tail);

  namespace ro = reduction::reproducible;
  const std::size_t tiles = ro::tile_count(n);
  const std::size_t stripes = ro::div_up(n, ro::kStripe);
  const std::size_t steps = ro::tile_floats(n) / ro::kStripe;
  std::vector<float> tile_sums(tiles);
  for (std::size_t t = 0; t < tiles; ++t) {
    std::size_t owned = 0;
    bool owns_last = false;
    for (std::size_t k = 0; k < steps && ro::stripe_of(t, k, tiles, steps) < stripes; ++k) {
      ++owned;
      owns_last = ro::stripe_of(t, k, tiles, steps) == stripes - 1;
    }
    tile_sums[t] =
        owns_last ? 192.0f * static_cast<float>(owned - 1) + 3.0f * last : 192.0f * static_cast<float>(owned);
  }
  const float order16 = ro::combine_tile_sums(tile_sums);

  common::Reference ref;
  ref.sum = exact;
  ref.sum_abs = exact;
  const float result16 = run_and_check(stage("reproducible"), x.get(), n, ref, "n = 2^32 + 3");
  INFO("stage 16: got " << hex(result16) << ", its order gives " << hex(order16));
  CHECK(result16 == order16);
  const float result17 = run_and_check(stage("compensated"), x.get(), n, ref, "n = 2^32 + 3");
  INFO("stage 17: got " << hex(result17) << ", expected " << exact);
  CHECK(static_cast<double>(result17) == exact);
  // And stage 16 keeps its bits on another configuration at this size.
  const Stage& s16 = stage("reproducible");
  const auto r = run_with_grid(s16, x.get(), n, blocks_of(s16, {1024, 512, 256}).front(), 132, 1);
  INFO("stage 16 with grid 132: got " << hex(r.results[0]));
  CHECK(r.results[0] == order16);
}

TEST_CASE("the compensated stage keeps what a plain sum drops, and its check catches a plain sum",
          "[gpu][compensated]") {
  // Ones, with 2^30 in the first component of every 64th float4 and -2^30 in the next such
  // one: float spacing at 2^30 is 128, so an accumulator that holds 2^30 drops the ones
  // added after it. The exact sum is a whole number below 2^24, a float.
  const std::size_t n = std::size_t{1} << 20;
  std::vector<float> host(n, 1.0f);
  int sign = 1;
  for (std::size_t i = 0; i < n; i += 4 * 64, sign = -sign) host[i] = static_cast<float>(sign) * std::ldexp(1.0f, 30);
  const auto ref = common::reference_sum(host);
  REQUIRE(ref.sum == static_cast<double>(n - n / 256));
  common::DeviceBuffer<float> dev(n);
  common::copy_to_device(dev.get(), host.data(), n * sizeof(float));

  PreparedStage compensated(stage("compensated"), dev.get(), n, 0, device(), stream());
  const float result = compensated.run_checked();
  CHECK(result == static_cast<float>(ref.sum));
  CHECK(common::check_sum(result, ref, compensated.plan().bound(), n).ok);

  // The plain single pass (stage 15) on the same input: within its own depth bound, but the
  // compensated stage's bound rejects it, as it would reject stage 17 without its c.
  PreparedStage plain(stage("one_cluster"), dev.get(), n, 0, device(), stream());
  const float plain_result = plain.run_checked();
  INFO("exact " << ref.sum << ", stage 17 " << result << ", stage 15 " << plain_result);
  CHECK(common::check_sum(plain_result, ref, plain.plan().bound(), n).ok);
  CHECK_FALSE(common::check_sum(plain_result, ref, compensated.plan().bound(), n).ok);
}
