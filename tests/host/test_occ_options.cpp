// The occupancy programs' command lines, the SGEMM host check and the sweep verdict.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "gemm_check.hpp"
#include "inputs.hpp"
#include "options.hpp"
#include "sweep.hpp"
#include "verify.hpp"

using common::UsageError;

namespace {

template <typename Parse>
auto parse(Parse parse_fn, std::vector<const char*> args) {
  args.insert(args.begin(), "program");
  return parse_fn(static_cast<int>(args.size()), args.data());
}

// The message of the UsageError `fn` throws ("" if none).
template <typename Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("01_thread_hierarchy options", "[occupancy][cli]") {
  using occupancy::parse_hierarchy_options;
  const auto defaults = parse(parse_hierarchy_options, {});
  REQUIRE(defaults);
  CHECK_FALSE(defaults->grid);
  CHECK(defaults->block == 256);

  const auto o = parse(parse_hierarchy_options, {"--grid", "264", "--block=128", "--raw"});
  REQUIRE(o);
  CHECK(*o->grid == 264);
  CHECK(o->block == 128);
  CHECK(o->raw);

  CHECK_FALSE(parse(parse_hierarchy_options, {"--help"}));

  CHECK(usage_error([] { parse(parse_hierarchy_options, {"--grid", "0"}); }).find("zero blocks") != std::string::npos);
  CHECK(usage_error([] { parse(parse_hierarchy_options, {"--block", "0"}); }).find("no threads") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--grid", "ten"});
        }).find("'ten' is not a whole number") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--block", "-32"});
        }).find("out of range") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--grid", "5000", "--block", "1024"});
        }).find("at most 4194304") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--threads", "5"});
        }).find("unknown option") != std::string::npos);
  // Limits no device passes are judged here, before any device is looked for.
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--block", "1025"});
        }).find("--block 1025 is more than any CUDA device takes: at most 1024") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--first", "0"});
        }).find("--first 0 would list no blocks") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_hierarchy_options, {"--block", "0x20"});
        }).find("hexadecimal") != std::string::npos);
  const auto first = parse(parse_hierarchy_options, {"--first", "1", "--block", "1K"});
  REQUIRE(first);
  CHECK(first->first == 1);
  CHECK(first->block == 1024);
}

TEST_CASE("01_thread_hierarchy checks against the device", "[occupancy][cli]") {
  occupancy::DeviceLimits d = occupancy::hopper_limits(132);
  occupancy::HierarchyOptions o;
  o.block = 1024;
  occupancy::check_hierarchy_options(o, d);
  REQUIRE(o.grid);
  CHECK(*o.grid == 264);  // the default: 2 blocks per SM

  occupancy::HierarchyOptions big;
  big.block = 2048;
  const std::string err = usage_error([&] { occupancy::check_hierarchy_options(big, d); });
  CHECK(err.find("--block 2048 is above this device's limit of 1024") != std::string::npos);

  d.sm_count = 4000;  // a default grid that would record too many threads is refused too
  occupancy::HierarchyOptions many;
  many.block = 1024;
  CHECK(usage_error([&] { occupancy::check_hierarchy_options(many, d); }).find("at most") != std::string::npos);
}

TEST_CASE("02_resource_usage options", "[occupancy][cli]") {
  using occupancy::parse_sgemm_options;
  const auto o = parse(parse_sgemm_options, {});
  REQUIRE(o);
  CHECK(o->size == 2048);  // the book's size
  CHECK(o->check_size == 512);
  const auto p = parse(parse_sgemm_options, {"--size", "1000", "--check-size", "33", "--reps", "7", "--warm-l2"});
  REQUIRE(p);
  CHECK(p->size == 1000);
  CHECK(p->check_size == 33);
  CHECK(p->timing.reps == 7);
  CHECK(p->warm_l2);
  CHECK_THROWS_AS(parse(parse_sgemm_options, {"--size", "0"}), UsageError);
  CHECK_THROWS_AS(parse(parse_sgemm_options, {"--size", "big"}), UsageError);
  CHECK_THROWS_AS(parse(parse_sgemm_options, {"--check-size", "4096"}), UsageError);
  CHECK_THROWS_AS(parse(parse_sgemm_options, {"--csv", "/nonexistent-dir/x.csv"}), UsageError);
  CHECK_THROWS_AS(parse(parse_sgemm_options, {"--size"}), UsageError);
  // A 17 x 17 product has 289 elements: the default 4096 samples cannot be drawn from it.
  CHECK(usage_error([] {
          parse(parse_sgemm_options, {"--size", "17"});
        }).find("--samples 4096 is more than the 289 elements of the 17 x 17 product") != std::string::npos);
  const auto small = parse(parse_sgemm_options, {"--size", "17", "--samples", "289"});
  REQUIRE(small);
  CHECK(small->samples == 289);
  CHECK(usage_error([] {
          parse(parse_sgemm_options, {"--budget-ms", "0x10"});
        }).find("hexadecimal") != std::string::npos);
}

TEST_CASE("03_occupancy_sweep options", "[occupancy][cli]") {
  using occupancy::parse_sweep_options;
  const auto o = parse(parse_sweep_options, {});
  REQUIRE(o);
  CHECK(o->n == (std::uint64_t{1} << 26));
  CHECK(o->blocks == std::vector<int>{32, 64, 128, 256, 512, 1024});
  CHECK(o->per_sm == std::vector<int>{1, 2, 4, 8, 16, 32});

  const auto p = parse(parse_sweep_options, {"--n", "16M", "--blocks", "256,64,256", "--per-sm", "4,1"});
  REQUIRE(p);
  CHECK(p->n == (std::uint64_t{1} << 24));
  CHECK(p->blocks == std::vector<int>{64, 256});  // sorted, duplicates dropped
  CHECK(p->per_sm == std::vector<int>{1, 4});

  CHECK(usage_error([] {
          parse(parse_sweep_options, {"--per-sm", "2,0"});
        }).find("grid of zero blocks") != std::string::npos);
  CHECK(usage_error([] { parse(parse_sweep_options, {"--blocks", "96"}); }).find("powers of two") != std::string::npos);
  CHECK(usage_error([] { parse(parse_sweep_options, {"--blocks", "16"}); }).find("powers of two") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_sweep_options, {"--blocks", "x"});
        }).find("not a whole number") != std::string::npos);
  CHECK(usage_error([] { parse(parse_sweep_options, {"--blocks", ""}); }).find("empty") != std::string::npos);
  CHECK(usage_error([] { parse(parse_sweep_options, {"--n", "0"}); }).find("too small") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_sweep_options, {"--blocks", "256,2048"});
        }).find("--blocks item 2048 is more than any CUDA device takes") != std::string::npos);
  CHECK(usage_error([] {
          parse(parse_sweep_options, {"--per-sm", "33"});
        }).find("--per-sm item 33 is more than any CUDA device keeps") != std::string::npos);
  CHECK(usage_error([] { parse(parse_sweep_options, {"--n", "16m"}); }).find("upper case: 16M") != std::string::npos);

  const occupancy::DeviceLimits d = occupancy::hopper_limits();
  occupancy::SweepOptions s;
  CHECK_NOTHROW(occupancy::check_sweep_options(s, d));
  s.blocks = {2048};
  CHECK(usage_error([&] { occupancy::check_sweep_options(s, d); }).find("above this device's limit of 1024") !=
        std::string::npos);
  s.blocks = {256};
  s.per_sm = {64};
  CHECK(usage_error([&] { occupancy::check_sweep_options(s, d); }).find("limit of 32 resident blocks") !=
        std::string::npos);
}

TEST_CASE("check_gemm: the host reference and its tolerance", "[occupancy][gemm]") {
  const int m = 7, n = 5, k = 300;
  const auto a = common::make_input(common::Pattern::mixed_signs, 3, static_cast<std::size_t>(m) * k);
  const auto b = common::make_input(common::Pattern::mixed_signs, 4, static_cast<std::size_t>(k) * n);
  // A float FMA chain, the way the kernel computes each element.
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[p * n + j], acc);
      c[i * n + j] = acc;
    }
  const auto ok = occupancy::check_gemm(a, b, c, m, n, k);
  INFO(ok.detail);
  CHECK(ok.ok);
  CHECK(ok.checked == 35);
  CHECK(ok.worst_ratio < 1.0);
  CHECK(ok.max_abs_error > 0.0);  // float really differs from the double reference: the check is not vacuous

  SECTION("an element off by more than its tolerance fails") {
    auto bad = c;
    double scale = 0.0;
    for (int p = 0; p < k; ++p) scale += std::fabs(static_cast<double>(a[2 * k + p]) * b[p * n + 3]);
    bad[2 * n + 3] += static_cast<float>(2.0 * occupancy::gemm_tolerance(scale, k));
    const auto r = occupancy::check_gemm(a, b, bad, m, n, k);
    CHECK_FALSE(r.ok);
    CHECK(r.failures == 1);
    CHECK(r.detail.find("C[2][3]") != std::string::npos);
  }
  SECTION("an element never written fails, even among sampled positions") {
    auto bad = c;
    bad[4 * n + 1] = common::poison_value();
    const auto r = occupancy::check_gemm(a, b, bad, m, n, k, {4u * n + 1, 0});
    CHECK_FALSE(r.ok);
    CHECK(r.unwritten == 1);
    CHECK(r.checked == 2);
    CHECK(r.detail.find("never written") != std::string::npos);
  }
  SECTION("NaN fails") {
    auto bad = c;
    bad[0] = NAN;
    CHECK_FALSE(occupancy::check_gemm(a, b, bad, m, n, k).ok);
  }
  SECTION("the tolerance is (gamma(k + 1) + gamma_double(k)) x sum |a b|") {
    CHECK(occupancy::gemm_tolerance(2.0, 300) == Approx(2.0 * (common::gamma_float(301) + common::gamma_double(300))));
  }
}

TEST_CASE("sample_positions is repeatable and in range", "[occupancy][gemm]") {
  const auto p = occupancy::sample_positions(1000, 4096, 7);
  CHECK(p.size() == 1000);
  CHECK(p == occupancy::sample_positions(1000, 4096, 7));
  CHECK(p != occupancy::sample_positions(1000, 4096, 8));
  for (auto i : p) CHECK(i < 4096);
}

TEST_CASE("sweep verdict: fastest versus highest occupancy", "[occupancy][sweep]") {
  using occupancy::SweepPoint;
  SECTION("they agree when the fastest row has the highest occupancy") {
    const std::vector<SweepPoint> pts = {{32, 1, 1.0 / 64, 900.0, true},
                                         {256, 4, 0.5, 80.0, true},
                                         {256, 8, 1.0, 70.0, true},
                                         {512, 4, 1.0, 75.0, true}};
    const auto v = occupancy::judge_sweep(pts);
    CHECK(v.any);
    CHECK(v.fastest == 2);
    CHECK(v.max_occupancy == 1.0);
    CHECK(v.max_occupancy_rows == std::vector<std::size_t>{2, 3});
    CHECK(v.agree);
    CHECK(v.slowdown == 1.0);
    CHECK(v.text.find("They agree") != std::string::npos);
  }
  SECTION("they disagree when a lower-occupancy row is fastest") {
    const std::vector<SweepPoint> pts = {
        {256, 4, 0.5, 66.0, true}, {256, 8, 1.0, 72.6, true}, {1024, 2, 1.0, 80.0, true}};
    const auto v = occupancy::judge_sweep(pts);
    CHECK(v.fastest == 0);
    CHECK_FALSE(v.agree);
    CHECK(v.fastest_at_max == 1);
    CHECK(v.slowdown == Approx(1.1));
    CHECK(v.text.find("do not agree") != std::string::npos);
    CHECK(v.text.find("1.10x") != std::string::npos);
  }
  SECTION("rows that failed their check take no part") {
    const std::vector<SweepPoint> pts = {{256, 8, 1.0, 10.0, false}, {128, 4, 0.25, 90.0, true}};
    const auto v = occupancy::judge_sweep(pts);
    CHECK(v.fastest == 1);
    CHECK(v.max_occupancy == 0.25);
    CHECK(v.agree);
  }
  SECTION("no verified row, no verdict") {
    const auto v = occupancy::judge_sweep({{256, 8, 1.0, 10.0, false}});
    CHECK_FALSE(v.any);
    CHECK(v.text.find("no verdict") != std::string::npos);
  }
}

TEST_CASE("sweep error depth follows the two launches", "[occupancy][sweep]") {
  // 2^20 elements over 4 x 256 threads: 1024 each, a tree over 1024 threads (10), then
  // 4 partials over a 1024-thread block: 1 each and a tree of depth 2.
  CHECK(occupancy::sweep_error_depth(std::size_t{1} << 20, 4, 256, 1024) == 1024 + 10 + 1 + 2);
}
