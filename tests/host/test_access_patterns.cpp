// access_patterns/ without a GPU: the program list against the files, every plan,
// row selection, the index arithmetic (permutation, sectors, banks, padding), the host
// references on cases small enough to work out by hand, and the checks' refusals.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "access_check.hpp"
#include "access_index.hpp"
#include "catch.hpp"
#include "cli.hpp"
#include "programs.hpp"
#include "test_files.hpp"
#include "verify.hpp"

namespace ap = access_patterns;

namespace {

ap::Options default_options(const ap::ProgramSpec& spec) {
  ap::Options opt;
  opt.n = spec.default_n;
  return opt;
}

ap::RowSpec row_of(const ap::ProgramSpec& spec, std::uint64_t n, const std::string& key) {
  ap::Options opt;
  opt.n = n;
  for (const auto& r : spec.plan(opt))
    if (r.key == key) return r;
  FAIL("no row " << key << " in " << spec.name);
  return {};
}

}  // namespace

TEST_CASE("every access_patterns/NN_*.cu file is one program, in order", "[host][access]") {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(test_support::repo_path("access_patterns"))) {
    const std::string name = e.path().filename().string();
    if (name.size() > 3 && std::isdigit(name[0]) && std::isdigit(name[1]) && name[2] == '_' &&
        e.path().extension() == ".cu")
      files.push_back(e.path().stem().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> names;
  for (const auto& p : ap::all_programs()) names.push_back(p.name);
  CHECK(names == files);
  CHECK(files.size() == 8);
}

TEST_CASE("every plan: unique keys, a base that comes earlier, bytes, the same columns", "[host][access]") {
  for (const auto& spec : ap::all_programs()) {
    INFO(spec.name);
    const auto rows = spec.plan(default_options(spec));
    REQUIRE(!rows.empty());
    std::set<std::string> seen;
    for (const auto& r : rows) {
      INFO(r.key);
      CHECK(seen.insert(r.key).second);
      CHECK(!r.label.empty());
      CHECK(r.bytes > 0.0);
      CHECK(r.key.find_first_of(" ,/\t") == std::string::npos);  // --only and NVTX ranges take it as is
      if (!r.base.empty()) CHECK(seen.count(r.base) == 1);       // measured before the rows that need it
      REQUIRE(r.params.size() == rows.front().params.size());
      for (std::size_t i = 0; i < r.params.size(); ++i) CHECK(r.params[i].key == rows.front().params[i].key);
    }
    for (const auto& c : spec.param_columns)
      CHECK(std::any_of(rows.front().params.begin(), rows.front().params.end(),
                        [&](const common::Field& f) { return f.key == c.key; }));
    CHECK(spec.device_bytes(default_options(spec)) > 0);
  }
}

TEST_CASE("--only selects rows in plan order and refuses unknown keys", "[host][access]") {
  const auto plan = ap::stride_offset_program().plan(default_options(ap::stride_offset_program()));
  const auto chosen = ap::select_rows(plan, "offset-3,stride-2");
  REQUIRE(chosen.size() == 2);
  CHECK(chosen[0].key == "stride-2");
  CHECK(chosen[1].key == "offset-3");
  CHECK(ap::select_rows(plan, "").size() == plan.size());
  CHECK(ap::select_rows(plan, "all").size() == plan.size());
  CHECK_THROWS_AS(ap::select_rows(plan, "stride-3"), common::UsageError);
  CHECK_THROWS_AS(ap::select_rows(plan, ","), common::UsageError);
}

TEST_CASE("random_index is a permutation of [0, m)", "[host][access]") {
  for (const std::uint64_t m : {1ull, 2ull, 3ull, 31ull, 32ull, 33ull, 1000ull, 1025ull, 4096ull, 100003ull}) {
    INFO("m = " << m);
    const unsigned bits = ap::bits_for(m);
    CHECK((std::uint64_t{1} << bits) >= m);
    std::vector<bool> hit(m, false);
    for (std::uint64_t j = 0; j < m; ++j) {
      const std::uint64_t x = ap::random_index(j, m, bits, 12345);
      REQUIRE(x < m);
      REQUIRE(!hit[x]);
      hit[x] = true;
    }
  }
}

TEST_CASE("sectors and bank wavefronts of hand-made warps", "[host][access]") {
  std::vector<std::uint64_t> bytes;
  for (std::uint64_t l = 0; l < 32; ++l) bytes.push_back(4 * l);
  CHECK(ap::distinct_sectors(bytes) == 4);
  for (auto& b : bytes) b += 4;  // one float past the sector boundary
  CHECK(ap::distinct_sectors(bytes) == 5);
  CHECK(ap::distinct_sectors({0, 0, 0, 31}) == 1);
  CHECK(ap::distinct_sectors({0, 32, 64, 4096}) == 4);

  CHECK(ap::bank_wavefronts({0, 1, 2, 31}) == 1);
  CHECK(ap::bank_wavefronts({0, 32, 64}) == 3);
  CHECK(ap::bank_wavefronts({5, 5, 5}) == 1);  // one word, broadcast
  CHECK(ap::padded_slot(31) == 31);
  CHECK(ap::padded_slot(32) == 33);
  CHECK(ap::padded_slot(64) == 66);
}

TEST_CASE("05: wavefronts without padding are gcd(stride, 32); padding cures powers of two", "[host][access]") {
  for (unsigned s = 1; s <= 33; ++s) {
    INFO("stride " << s);
    CHECK(ap::predicted_wavefronts(s, false) == std::gcd(s, 32u));
    if ((s & (s - 1)) == 0) CHECK(ap::predicted_wavefronts(s, true) == 1);
  }
  CHECK(ap::predicted_wavefronts(33, true) == 2);  // free without padding
  CHECK(ap::predicted_wavefronts(31, true) == 31);
}

TEST_CASE("05: the reference sums of constant and counting tiles", "[host][access]") {
  const unsigned tile_words = 2048;
  std::vector<unsigned> ones(64 * tile_words, 1u);
  for (const unsigned v : ap::reference_strided_sums(ones, 7, 3)) CHECK(v == 1024u);
  // Word i of every tile holds i: lane l sums 32 x sum_q (l s + 32 q) = 32 (32 l s + 32 x 496).
  std::vector<unsigned> counting(64 * tile_words);
  for (std::size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<unsigned>(i % tile_words);
  const unsigned s = 5;
  const auto sums = ap::reference_strided_sums(counting, s, 2);
  REQUIRE(sums.size() == 2 * 256);
  for (std::size_t t = 0; t < sums.size(); ++t) {
    const unsigned l = t % 32;
    CHECK(sums[t] == 32u * (32u * l * s + 32u * 496u));
  }
}

TEST_CASE("01: predicted sectors per request", "[host][access]") {
  const auto spec = ap::stride_offset_program();
  const std::uint64_t n = 1 << 20;
  CHECK(ap::predicted_sectors(row_of(spec, n, "stride-1"), n, 1) == 4);
  CHECK(ap::predicted_sectors(row_of(spec, n, "stride-2"), n, 1) == 8);
  CHECK(ap::predicted_sectors(row_of(spec, n, "stride-4"), n, 1) == 16);
  for (const char* k : {"stride-8", "stride-16", "stride-32"})
    CHECK(ap::predicted_sectors(row_of(spec, n, k), n, 1) == 32);
  for (int o = 0; o <= 31; ++o) {
    INFO("offset " << o);
    CHECK(ap::predicted_sectors(row_of(spec, n, "offset-" + std::to_string(o)), n, 1) == (o % 8 == 0 ? 4 : 5));
  }
  CHECK(ap::predicted_sectors(row_of(spec, n, "random"), n, 1) > 30);
}

TEST_CASE("01: reference partial sums follow the addresses", "[host][access]") {
  const auto spec = ap::stride_offset_program();
  const std::uint64_t n = 40;
  std::vector<float> in(n + 31);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  // stride 4: 10 reads; 256 threads (one block), thread t < 10 reads element 4t alone.
  const auto refs = ap::reference_read_sums(row_of(spec, n, "stride-4"), n, 1, in);
  REQUIRE(refs.size() == 256);
  for (std::size_t t = 0; t < refs.size(); ++t) {
    CHECK(refs[t].sum == (t < 10 ? 4.0 * static_cast<double>(t) : 0.0));
    CHECK(refs[t].terms == (t < 10 ? 1u : 0u));
  }
  const auto off = ap::reference_read_sums(row_of(spec, n, "offset-3"), n, 1, in);
  CHECK(off[0].sum == 3.0);
  CHECK(off[39].sum == 42.0);
  // Every element of [0, n) exactly once in the random row.
  const auto rnd = ap::reference_read_sums(row_of(spec, n, "random"), n, 1, in);
  double total = 0;
  for (const auto& r : rnd) total += r.sum;
  CHECK(total == static_cast<double>(n * (n - 1) / 2));
}

TEST_CASE("02: rows, columns and warps of a 2 x 3 buffer", "[host][access]") {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  const auto rows = ap::reference_line_sums(in, 2, 3, 0);  // [1 2 3; 4 5 6]
  CHECK(rows[0].sum == 6);
  CHECK(rows[1].sum == 15);
  CHECK(rows[0].depth == 3);
  const auto cols = ap::reference_line_sums(in, 2, 3, 1);  // 3 x 2: [1 2; 3 4; 5 6]
  CHECK(cols[0].sum == 9);
  CHECK(cols[1].sum == 12);
  CHECK(ap::reference_line_sums(in, 2, 3, 2)[1].depth == 1 + 5);  // 1 step per lane, 5 shuffles
}

TEST_CASE("02 refuses an n that is not a multiple of --terms", "[host][access]") {
  auto spec = ap::rows_columns_program();
  common::ArgParser args("t", "t");
  spec.add_options(args);
  const char* argv[] = {"t", "--terms", "31"};
  REQUIRE(args.parse(3, argv));
  ap::Options opt;
  opt.n = 31 * 33;
  CHECK_NOTHROW(spec.check_options(opt));
  CHECK(spec.plan(opt).front().params[0].number == 33);  // sums
  opt.n = 1000;
  CHECK_THROWS_AS(spec.check_options(opt), common::UsageError);
}

TEST_CASE("03: one particle step, and only the positions move", "[host][access]") {
  const auto p = ap::make_particles(100, 3);
  REQUIRE(p.size() == 800);
  const auto q = ap::update_particles(p, 0.01f);
  for (std::size_t i = 0; i < 100; ++i) {
    const float* a = &p[8 * i];
    const float* b = &q[8 * i];
    for (int f = 3; f < 6; ++f) CHECK(std::fabs(a[f]) >= 0.5f);
    for (int f = 0; f < 3; ++f) {
      CHECK(b[f] == std::fma(a[3 + f], 0.01f, a[f]));
      CHECK(b[f] != a[f]);  // a skipped particle cannot pass
    }
    for (int f = 3; f < 8; ++f) CHECK(b[f] == a[f]);
  }
}

TEST_CASE("04 and 07: the elementwise references", "[host][access]") {
  CHECK(ap::reference_scale({1.0f, -2.5f}, 3.0f) == std::vector<float>{3.0f, -7.5f});
  CHECK(ap::reference_add_scale({1.0f, 2.0f}, {3.0f, -4.0f}, 0.75f) == std::vector<float>{3.0f, -1.5f});
}

TEST_CASE("06: histogram data and counts", "[host][access]") {
  const std::uint64_t n = 1 << 16;
  for (const bool skewed : {false, true}) {
    const auto bytes = ap::make_histogram_data(n, 1, skewed);
    const auto hist = ap::reference_histogram(bytes);
    REQUIRE(hist.size() == ap::kBins);
    CHECK(std::accumulate(hist.begin(), hist.end(), std::uint64_t{0}) == n);
    const double zero_share = static_cast<double>(hist[0]) / n;
    if (skewed) {
      CHECK(zero_share > 0.45);  // floor(256 u^8) = 0 for u < 2^-1: half the bytes
      CHECK(zero_share < 0.55);
    } else {
      CHECK(zero_share < 0.01);
      CHECK(*std::min_element(hist.begin(), hist.end()) > 0);
    }
  }
  CHECK(ap::reference_histogram({0, 255, 255, 7})[255] == 2);
}

TEST_CASE("08: exclusive prefix sums restart at every tile", "[host][access]") {
  CHECK(ap::reference_tile_scan({1, 2, 3, 4, 5, 6}, 4) == std::vector<unsigned>{0, 1, 3, 6, 0, 5});
  const auto in = ap::make_scan_input(5000, 1);
  CHECK(*std::max_element(in.begin(), in.end()) < (1u << 16));
  CHECK(std::count(in.begin(), in.end(), 0u) < 5);  // not zeros
  const double unpadded = ap::predicted_scan_wavefronts(false);
  const double padded = ap::predicted_scan_wavefronts(true);
  CHECK(padded >= 1.0);
  CHECK(unpadded > padded);
}

TEST_CASE("the checks fail on poison, on one wrong bit and beyond the error bound", "[host][access]") {
  float poison;
  std::memcpy(&poison, &ap::kPoisonBits, 4);
  CHECK(common::is_poison(poison));
  CHECK(ap::compare_exact(std::vector<float>{1.0f, 2.0f}, {1.0f, 2.0f}, "x").ok);
  const auto unwritten = ap::compare_exact(std::vector<float>{1.0f, poison}, {1.0f, 2.0f}, "x");
  CHECK(!unwritten.ok);
  CHECK(unwritten.detail.find("never written") != std::string::npos);
  CHECK(!ap::compare_exact(std::vector<float>{1.0f, std::nextafter(2.0f, 3.0f)}, {1.0f, 2.0f}, "x").ok);
  CHECK(!ap::compare_exact(std::vector<unsigned>{ap::kPoisonBits}, {7u}, "x").ok);
  CHECK(!ap::compare_exact(std::vector<unsigned>{1u}, {1u, 2u}, "x").ok);

  const std::vector<ap::SumRef> refs = {{10.0, 10.0, 4, 4}};
  CHECK(ap::check_sums({10.0f}, refs, "s").ok);
  CHECK(!ap::check_sums({poison}, refs, "s").ok);
  CHECK(!ap::check_sums({10.001f}, refs, "s").ok);  // 1e-3 is far beyond 4 roundings of 2^-24
}
