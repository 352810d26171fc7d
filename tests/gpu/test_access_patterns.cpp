// access_patterns/ on the GPU: every row of every program at awkward sizes, through
// the same checked run the programs make before timing; a row that launches nothing
// fails; and one program end to end, timed, with its CSV.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_fixture.hpp"
#include "programs.hpp"

namespace ap = access_patterns;

namespace {

ap::ProgramSpec program(const std::string& name) {
  for (auto& p : ap::all_programs())
    if (p.name == name) return p;
  FAIL("no program " << name);
  return {};
}

// Every row of `spec` at size n (after `args`, the program's own options) passes.
void check_every_row(const ap::ProgramSpec& spec, std::uint64_t n, std::vector<const char*> args = {}) {
  if (spec.add_options) {
    common::ArgParser parser("test", "test");
    spec.add_options(parser);
    args.insert(args.begin(), "test");
    REQUIRE(parser.parse(static_cast<int>(args.size()), args.data()));
  }
  ap::Options opt;
  opt.n = n;
  if (spec.check_options) spec.check_options(opt);
  const auto work = spec.prepare(opt, gpu_test::device());
  for (const auto& row : spec.plan(opt)) {
    INFO(spec.name << " n = " << n << " row " << row.key);
    const ap::Verdict v = ap::run_checked(*work, row, gpu_test::stream());
    INFO(v.detail);
    CHECK(v.ok);
  }
}

}  // namespace

TEST_CASE("01: strides, offsets and the random order at awkward sizes", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 2ull, 31ull, 33ull, 1000ull, 1000003ull})
    check_every_row(program("01_stride_offset"), n);
}

TEST_CASE("02: row and column sums at awkward shapes", "[gpu][access]") {
  const auto spec = program("02_rows_columns");
  check_every_row(spec, 1, {"--terms", "1"});
  check_every_row(spec, 31 * 33, {"--terms", "31"});
  check_every_row(spec, 33 * 31, {"--terms", "33"});
  check_every_row(spec, 1000 * 256, {"--terms", "256"});
  check_every_row(spec, 7 * 142857, {"--terms", "7"});
  check_every_row(spec, 1000, {"--terms", "1000"});  // one sum
}

TEST_CASE("03: AoS and SoA at awkward sizes", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 31ull, 33ull, 1000003ull}) check_every_row(program("03_aos_soa"), n);
}

TEST_CASE("04: every width and index type, including the scalar tail", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 6ull, 7ull, 31ull, 33ull, 1000003ull})
    check_every_row(program("04_vector_width_index"), n);
}

TEST_CASE("05: strides 1 to 33 with and without padding", "[gpu][access]") {
  for (const std::uint64_t blocks : {1ull, 3ull, 65ull}) check_every_row(program("05_bank_padding"), blocks);
}

TEST_CASE("06: uniform and skewed data, every variant, bytes past the last whole word", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 31ull, 33ull, 1000003ull, 1ull << 24})
    check_every_row(program("06_histogram"), n);
}

TEST_CASE("07: two kernels and one at awkward sizes", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 31ull, 33ull, 1000003ull}) check_every_row(program("07_fusion"), n);
}

TEST_CASE("08: the tile scan is exact with and without padding, full and partial tiles", "[gpu][access]") {
  for (const std::uint64_t n : {1ull, 31ull, 33ull, 1023ull, 1024ull, 1025ull, 1000003ull})
    check_every_row(program("08_block_scan"), n);
}

TEST_CASE("a row whose kernel does not run fails its check", "[gpu][access]") {
  for (const auto& spec : ap::all_programs()) {
    INFO(spec.name);
    ap::Options opt;
    opt.n = spec.name == "05_bank_padding" ? 2 : 1024;
    if (spec.add_options) {
      common::ArgParser parser("test", "test");
      spec.add_options(parser);
      const char* argv[] = {"test"};
      REQUIRE(parser.parse(1, argv));
    }
    auto row = spec.plan(opt).front();
    row.variant = -1;  // no kernel has this number: the launch enqueues nothing
    const auto work = spec.prepare(opt, gpu_test::device());
    CHECK(!ap::run_checked(*work, row, gpu_test::stream()).ok);
  }
}

TEST_CASE("07_fusion end to end: timed rows and the CSV", "[gpu][access]") {
  const std::string csv = "access_test_fusion.csv";
  const char* argv[] = {"07_fusion", "--n", "2^20", "--reps", "3", "--budget-ms", "50", "--csv", csv.c_str()};
  REQUIRE(ap::run_access_program(9, argv, program("07_fusion")) == 0);
  std::ifstream in(csv);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(csv.c_str());
  const std::string s = text.str();
  CHECK(s.find("# program: 07_fusion") != std::string::npos);
  CHECK(s.find("\n2^20") == std::string::npos);  // n is written as a number
  CHECK(s.find("two-kernels") != std::string::npos);
  CHECK(s.find(",fused,") != std::string::npos);
  CHECK(s.find("FAIL") == std::string::npos);
  CHECK(s.find(",ok,") != std::string::npos);
}
