// The scan ladder on the host (scan/): the registry and its selections, the launcher's
// refusals (before anything reaches a GPU), the plans' scratch and error depths, the
// reference checks and the float error bound (scan/check.hpp).
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "lookback_layout.hpp"
#include "scan.hpp"
#include "verify.hpp"

namespace {

const scan::ScanStage& stage(const char* key) {
  const scan::ScanStage* s = scan::find_stage(key);
  REQUIRE(s != nullptr);
  return *s;
}

std::vector<unsigned> int_scan(const std::vector<unsigned>& in, scan::ScanKind kind) {
  std::vector<unsigned> out(in.size());
  unsigned s = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = kind == scan::ScanKind::inclusive ? s + in[i] : s;
    s += in[i];
  }
  return out;
}

}  // namespace

TEST_CASE("scan registry: six stages in order, then CUB's two rows and the copy", "[scan]") {
  const auto& r = scan::registry();
  REQUIRE(r.size() == 9);
  for (int i = 0; i < 6; ++i) {
    CHECK(r[i].entry == scan::Entry::stage);
    CHECK(r[i].number == i + 1);
  }
  CHECK(scan::stage_key(r[4]) == "05");
  CHECK(&stage("5") == &r[4]);
  CHECK(&stage("vector_lookback") == &r[4]);
  CHECK(scan::stage_key(r[5]) == "06");
  CHECK(&stage("prefetch_lookback") == &r[5]);
  CHECK(scan::computes(stage("cub_inclusive"), scan::ScanKind::inclusive));
  CHECK_FALSE(scan::computes(stage("cub_inclusive"), scan::ScanKind::exclusive));
  CHECK(scan::select_stages("2-4").size() == 3);
  CHECK(scan::select_stages("stages").size() == 6);
  CHECK(scan::select_stages("baselines").size() == 3);
  CHECK(scan::select_stages("copy,1,01").size() == 2);
  CHECK_THROWS_AS(scan::select_stages("7"), common::UsageError);
  CHECK_THROWS_AS(scan::select_stages("4-2"), common::UsageError);
  CHECK_THROWS_AS(scan::select_stages(","), common::UsageError);
  CHECK_THROWS_AS(scan::select_stages("cub"), common::UsageError);
}

TEST_CASE("scan bounds: three copies kept out of the registry and of every selection", "[scan]") {
  const auto& b = scan::bounds();
  REQUIRE(b.size() == 3);
  CHECK(std::string(b[0].id) == "copy_stream");
  CHECK(std::string(b[1].id) == "copy_tiles");
  CHECK(std::string(b[2].id) == "phases_tiles");
  for (const scan::ScanStage& s : b) {
    CHECK(s.entry == scan::Entry::bound);
    CHECK_FALSE(s.in_place);
    CHECK(scan::find_stage(s.id) == nullptr);
    CHECK_THROWS_AS(scan::select_stages(s.id), common::UsageError);
  }
  for (const scan::ScanStage* s : scan::select_stages("all")) {
    CHECK(s->entry != scan::Entry::bound);
    CHECK(scan::checked_as_copy(*s) == (s->entry == scan::Entry::copy));  // the copy, no stage or CUB row
  }
  for (const scan::ScanStage& s : b) CHECK(scan::checked_as_copy(s));
  // copy_tiles and phases_tiles keep stage 06's shape: its grid and its prefetch distance.
  common::DeviceInfo h200;
  h200.sm_count = 132;
  for (const std::size_t n : {std::size_t{16384}, std::size_t{1} << 20, std::size_t{1} << 26})
    for (const scan::ScanStage* s : {&b[1], &b[2]}) {
      const scan::ScanPlan mine = s->plan(n, scan::ValueType::i32, h200);
      const scan::ScanPlan six = stage("06").plan(n, scan::ValueType::i32, h200);
      CHECK(mine.grid == six.grid);
      CHECK(mine.prefetch_tiles == six.prefetch_tiles);
    }
}

TEST_CASE("scan launcher refusals come before any GPU work", "[scan]") {
  std::vector<unsigned> host(64);
  scan::ScanArgs a;
  a.in = host.data();
  a.out = host.data() + 32;
  a.n = 16;
  // CUB's rows: one kind each, and not in place.
  a.kind = scan::ScanKind::exclusive;
  CHECK_THROWS_AS(scan::launch(stage("cub_inclusive"), a), std::invalid_argument);
  a.kind = scan::ScanKind::inclusive;
  a.out = host.data();
  CHECK_THROWS_AS(scan::launch(stage("cub_inclusive"), a), std::invalid_argument);
  // An output that overlaps the input without being it, for every row.
  a.out = host.data() + 1;
  for (const scan::ScanStage& s : scan::registry()) CHECK_THROWS_AS(scan::launch(s, a), std::invalid_argument);
  // Too little scratch (no GPU is touched: the launcher checks first).
  a.out = host.data() + 32;
  a.n = 100000;
  a.scratch = nullptr;
  a.scratch_bytes = 0;
  for (const char* key : {"01", "02", "03", "04", "05", "06"})
    CHECK_THROWS_AS(scan::launch(stage(key), a), std::invalid_argument);
}

TEST_CASE("scan plans: scratch for every tile and alignment, depths that grow as the orders do", "[scan]") {
  const common::DeviceInfo device;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20, (std::size_t{1} << 30) + 7}) {
    INFO("n = " << n);
    // The single passes: the header and one descriptor per tile of 4096 (04), 8192 (05) or
    // 16384 (06), with room (05, 06) for an input up to 3 elements below a 16-byte boundary.
    const auto p4 = stage("04").plan(n, scan::ValueType::i32, device);
    const auto p5 = stage("05").plan(n, scan::ValueType::i32, device);
    CHECK(p4.zero_scratch_once);
    CHECK(p5.zero_scratch_once);
    CHECK(p4.scratch_bytes == scan::lookback_scratch_bytes((n + 4095) / 4096));
    CHECK(p5.scratch_bytes == scan::lookback_scratch_bytes((n + 3 + 8191) / 8192));
    CHECK(p5.grid == (n + 8191) / 8192);
    const auto p6 = stage("06").plan(n, scan::ValueType::i32, device);
    CHECK(p6.zero_scratch_once);
    CHECK(p6.scratch_bytes == scan::lookback_scratch_bytes((n + 3 + 16383) / 16384));
    CHECK(p6.grid == (n + 16383) / 16384);
    CHECK(p6.prefetch_tiles == 1);  // a device of no SMs described: at least one tile ahead
    // Scan-then-add: 4 bytes per tile total of each level above the first.
    const auto p1 = stage("01").plan(n, scan::ValueType::i32, device);
    std::size_t values = 0;
    for (std::size_t m = (n + 1023) / 1024; m > 1; m = (m + 1023) / 1024) values += m;
    CHECK(p1.scratch_bytes == 4 * values);
    CHECK_FALSE(p1.zero_scratch_once);
    // Reduce-then-scan: one sum per tile of 4096 when there is more than one tile.
    const auto p3 = stage("03").plan(n, scan::ValueType::i32, device);
    CHECK(p3.scratch_bytes == (n > 4096 ? 4 * ((n + 4095) / 4096) : 0));
  }
  // A single pass's depth grows with the tile, the tree's with the levels only.
  const auto p5 = stage("05").plan(std::size_t{1} << 26, scan::ValueType::f32, device);
  CHECK(p5.depth.at(8191) == p5.depth.at(0));
  CHECK(p5.depth.at(8192) > p5.depth.at(8191));
  const auto p1 = stage("01").plan(std::size_t{1} << 26, scan::ValueType::f32, device);
  CHECK(p1.depth.at(0) == p1.depth.at((std::size_t{1} << 26) - 1));
  CHECK(p1.depth.at(0) == 22 * 3);
  // Stage 06 prefetches a quarter of a wave ahead: half a tile per SM (66 on an H200's 132).
  common::DeviceInfo h200;
  h200.sm_count = 132;
  CHECK(stage("06").plan(std::size_t{1} << 26, scan::ValueType::i32, h200).prefetch_tiles == 66);
  CHECK(stage("05").plan(std::size_t{1} << 26, scan::ValueType::i32, h200).prefetch_tiles == 0);
}

TEST_CASE("int scan check: exact, wrapping, each kind, the first wrong output named", "[scan]") {
  std::vector<unsigned> in = scan::make_int_input(100003, 5);
  in[0] = 0xFFFFFFFFu;  // -1 as int32
  in[1] = 0x80000000u;  // INT32_MIN: the running sum wraps
  for (const scan::ScanKind kind : {scan::ScanKind::inclusive, scan::ScanKind::exclusive}) {
    std::vector<unsigned> out = int_scan(in, kind);
    CHECK(scan::check_int_scan(in.data(), out.data(), in.size(), kind).ok);
    // The other kind's answer is wrong at output 0 already.
    const scan::ScanKind other =
        kind == scan::ScanKind::inclusive ? scan::ScanKind::exclusive : scan::ScanKind::inclusive;
    CHECK_FALSE(scan::check_int_scan(in.data(), out.data(), in.size(), other).ok);
    out[77777] += 1;
    out[88888] = scan::kPoisonBits;
    const scan::ScanVerdict v = scan::check_int_scan(in.data(), out.data(), in.size(), kind);
    CHECK_FALSE(v.ok);
    CHECK(v.detail.find("output 77777") != std::string::npos);
    out[77777] -= 1;
    const scan::ScanVerdict p = scan::check_int_scan(in.data(), out.data(), in.size(), kind);
    CHECK(p.detail.find("output 88888") != std::string::npos);
    CHECK(p.detail.find("poison") != std::string::npos);
  }
  const std::vector<unsigned> one = {42};
  const unsigned y42 = 42;
  const unsigned y0 = 0;
  const unsigned y43 = 43;
  CHECK(scan::check_int_scan(one.data(), &y42, 1, scan::ScanKind::inclusive).ok);
  CHECK(scan::check_int_scan(one.data(), &y0, 1, scan::ScanKind::exclusive).ok);
  CHECK(scan::check_copy(one.data(), &y42, 1).ok);
  CHECK_FALSE(scan::check_copy(one.data(), &y43, 1).ok);
}

TEST_CASE("float error bound: gamma(depth) and the reference's own, per output", "[scan]") {
  // (gamma(d) + gamma_double(n)) A, with gamma(d) = d u / (1 - d u), u = 2^-24.
  const double u = std::ldexp(1.0, -24);
  CHECK(scan::float_bound(10, 2.0, 1) ==
        Approx((10 * u / (1 - 10 * u) + std::ldexp(1.0, -53) / (1 - std::ldexp(1.0, -53))) * 2.0));
  CHECK(scan::float_bound(0, 5.0, 1000) == Approx(common::gamma_double(1000) * 5.0));
  CHECK(std::isinf(scan::float_bound(std::size_t{1} << 24, 1.0, 10)));
  scan::DepthModel d{5, 3, 100};
  CHECK(d.at(0) == 5);
  CHECK(d.at(99) == 5);
  CHECK(d.at(100) == 8);
  CHECK(d.at(1050) == 5 + 30);
}

TEST_CASE("float scan check: within the bound passes, past it fails, poison and NaN fail", "[scan]") {
  const std::size_t n = 50000;
  const std::vector<float> in = scan::make_float_input(n, 9);
  const scan::DepthModel depth{20, 0, 1};
  for (const scan::ScanKind kind : {scan::ScanKind::inclusive, scan::ScanKind::exclusive}) {
    // The exact prefix sums, rounded once to float: well inside any bound.
    std::vector<float> out(n);
    double s = 0.0;
    double a = 0.0;
    std::vector<double> abs_prefix(n);
    std::vector<double> exact(n);
    for (std::size_t i = 0; i < n; ++i) {
      exact[i] = kind == scan::ScanKind::inclusive ? s + in[i] : s;
      out[i] = static_cast<float>(exact[i]);
      s += in[i];
      a += std::fabs(in[i]);
      abs_prefix[i] = a;
    }
    const scan::ScanVerdict ok = scan::check_float_scan(in.data(), out.data(), in.size(), kind, depth);
    CHECK(ok.ok);
    CHECK(ok.max_error_ratio < 1.0);
    // Output 30000 moved to 0.9 and then to 1.1 of its bound (a float near it).
    const std::size_t i = 30000;
    const double bound = scan::float_bound(depth.at(i), abs_prefix[i], n);
    std::vector<float> near = out;
    near[i] = static_cast<float>(exact[i] + 0.9 * bound);
    REQUIRE(std::fabs(static_cast<double>(near[i]) - exact[i]) <= bound);
    CHECK(scan::check_float_scan(in.data(), near.data(), in.size(), kind, depth).ok);
    near[i] = static_cast<float>(exact[i] + 1.1 * bound);
    REQUIRE(std::fabs(static_cast<double>(near[i]) - exact[i]) > bound);
    const scan::ScanVerdict far = scan::check_float_scan(in.data(), near.data(), in.size(), kind, depth);
    CHECK_FALSE(far.ok);
    CHECK(far.detail.find("output 30000") != std::string::npos);
    std::vector<float> bad = out;
    bad[12] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(scan::check_float_scan(in.data(), bad.data(), in.size(), kind, depth).ok);
    bad = out;
    std::memcpy(&bad[40000], &scan::kPoisonBits, 4);
    const scan::ScanVerdict p = scan::check_float_scan(in.data(), bad.data(), in.size(), kind, depth);
    CHECK_FALSE(p.ok);
    CHECK(p.detail.find("poison") != std::string::npos);
  }
  // Past the bound's reach (depth u >= 1) an output is only required to be finite.
  const scan::DepthModel huge{std::size_t{1} << 25, 0, 1};
  std::vector<float> wrong(n, 1.0f);
  const scan::ScanVerdict v =
      scan::check_float_scan(in.data(), wrong.data(), in.size(), scan::ScanKind::inclusive, huge);
  CHECK(v.ok);
  CHECK(v.unbounded == n);
}
