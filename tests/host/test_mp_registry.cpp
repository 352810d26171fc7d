// The variant registry and the runner's command line (everything that is refused
// before a device is needed).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "dot_runner.hpp"
#include "test_files.hpp"
#include "variants.hpp"

using mixed_precision::ElementType;

TEST_CASE("registry: numbered in order, unique ids, files exist", "[mp][registry]") {
  const auto& all = mixed_precision::registry();
  REQUIRE(all.size() >= 5);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& v = all[i];
    INFO(v.id);
    CHECK(v.number == static_cast<int>(i) + 1);
    CHECK(ids.insert(v.id).second);
    CHECK(v.launch != nullptr);
    CHECK(v.plan_grid != nullptr);
    // The source file is named after the key and the id, and exists.
    const std::string expected = "mixed_precision/" + mixed_precision::variant_key(v) + "_";
    CHECK(std::string(v.source).rfind(expected, 0) == 0);
    CHECK(std::ifstream(test_support::repo_path(v.source)).good());
    // Its chapter exists and names the file.
    std::ifstream chapter(test_support::repo_path(v.chapter));
    REQUIRE(chapter.good());
    const std::string text((std::istreambuf_iterator<char>(chapter)), std::istreambuf_iterator<char>());
    CHECK(text.find(v.source) != std::string::npos);
    // One chunk is one 16-byte load.
    CHECK(static_cast<std::size_t>(v.shape.per_chunk) * mixed_precision::element_bytes(v.element) == 16);
    CHECK(v.shape.per_chunk % v.shape.lanes == 0);
  }
  CHECK(&mixed_precision::baseline() == &all.front());
  CHECK(all.front().element == ElementType::f32);
  // Each kind the chapter discusses is present.
  for (const char* id : {"fp32", "fp16_half_accumulate", "fp16_float_accumulate", "bf16", "int8_dp4a"})
    CHECK(mixed_precision::find_variant(id) != nullptr);
}

TEST_CASE("registry: selection by number, id, range and all", "[mp][registry]") {
  using mixed_precision::select_variants;
  const auto& all = mixed_precision::registry();
  CHECK(select_variants("all").size() == all.size());
  CHECK(select_variants("3") == std::vector<const mixed_precision::Variant*>{&all[2]});
  CHECK(select_variants("03") == select_variants("fp16_float_accumulate"));
  const auto range = select_variants("2-4");
  REQUIRE(range.size() == 3);
  CHECK(range.front() == &all[1]);
  const auto unordered = select_variants("05,1,05");
  REQUIRE(unordered.size() == 2);
  CHECK(unordered[0] == &all[0]);
  CHECK(unordered[1] == &all[4]);
  CHECK_THROWS_AS(select_variants("fp64"), common::UsageError);
  CHECK_THROWS_AS(select_variants("4-2"), common::UsageError);
  CHECK_THROWS_AS(select_variants("1-99"), common::UsageError);
  CHECK_THROWS_AS(select_variants(""), common::UsageError);
}

TEST_CASE("registry listing: one tab-separated line per variant", "[mp][registry]") {
  std::istringstream in(mixed_precision::registry_listing());
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::size_t tabs = 0;
    for (char c : line) tabs += c == '\t';
    CHECK(tabs == 6);
  }
  CHECK(lines == mixed_precision::registry().size());
}

namespace {

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

// Runs the mixed_precision runner in this process, or, with `preselected`, a
// per-variant program such as 05_int8_dp4a.
Outcome run_main(std::vector<std::string> args, const char* preselected = nullptr) {
  const char* program = preselected != nullptr ? "05_int8_dp4a" : "mixed_precision";
  args.insert(args.begin(), program);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out;
  std::ostringstream err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  Outcome o;
  o.code = mixed_precision::mixed_precision_main(static_cast<int>(argv.size()), argv.data(), program, preselected);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

TEST_CASE("runner: bad input gets one sentence, exit 2 and no file", "[mp][cli]") {
  test_support::ScratchDir dir;
  const std::string csv = dir.file("mp_cli_test_output.csv");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--run-once", "--csv", csv}, "--run-once times nothing, so there is no table to write"},
      {{"--min-reps", "50", "--reps", "10"}, "--min-reps 50 is more than --reps 10"},
      {{"--budget-ms", "0x10"}, "hexadecimal"},
      {{"--n", "16m"}, "upper case: 16M"},
      {{"--n", "1^99"}, "the base of a power must be at least 2"},
      {{"--csv", csv, "--json", csv}, "name the same file"},
      {{"--n", "abc"}, "--n 'abc' is not a count"},
      {{"--n", "0"}, "--n '0' is too small"},
      {{"--n", "2^31", "--csv", csv}, "is larger than variant 05 (int8_dp4a) supports: at most 2147483647"},
      {{"--variants", "9", "--csv", csv}, "unknown variant '9'"},
      {{"--variants", "4-2"}, "is not a range of variant numbers"},
      {{"--reps", "0"}, "--reps '0' is out of range"},
      {{"--budget-ms", "x"}, "--budget-ms 'x' is not"},
      {{"--seed", "-3"}, "--seed '-3' is out of range"},
      {{"--csv", "/nonexistent/dir/x.csv"}, "cannot write --csv file"},
      {{"--json", "/nonexistent/dir/x.json"}, "cannot write --json file"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"--n"}, "option --n needs a value"},
      {{"--warm-l2=yes"}, "takes no value"},
  };
  for (const auto& [args, needle] : cases) {
    const Outcome o = run_main(args);
    INFO("args: " << args.front() << " ..., stderr: " << o.err);
    CHECK(o.code == common::kExitUsage);
    CHECK(o.err.find(needle) != std::string::npos);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(o.out.empty());
    CHECK_FALSE(exists(csv));
    CHECK_FALSE(exists(csv + ".tmp"));
  }
}

TEST_CASE("a per-variant program refuses --variants", "[mp][cli]") {
  const Outcome o = run_main({"--variants", "2"}, "05");
  CHECK(o.code == common::kExitUsage);
  CHECK(o.err.find("05_int8_dp4a runs variant 05 (and FP32) only, so it takes no --variants") != std::string::npos);
  const Outcome help = run_main({"--help"}, "05");
  CHECK(help.code == 0);
  CHECK(help.out.find("--variants") == std::string::npos);
}

TEST_CASE("runner: --help and --list need no device", "[mp][cli]") {
  const Outcome help = run_main({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.find("--variants") != std::string::npos);
  CHECK(help.out.find("2^31 - 1") != std::string::npos);
  const Outcome list = run_main({"--list"});
  CHECK(list.code == 0);
  CHECK(list.out == mixed_precision::registry_listing());
}

TEST_CASE("every variant refuses inputs that are not 16-byte aligned, before touching the GPU", "[mp][registry]") {
  // The kernel reads x and y as 16-byte vectors; a pointer one element past a boundary
  // would fault, so the launcher throws first (the pointers are never dereferenced here).
  alignas(16) static unsigned char bytes[64];
  for (const auto& v : mixed_precision::registry()) {
    INFO(v.id);
    mixed_precision::DotArgs a;
    a.n = 8;
    a.grid = 1;
    a.x = bytes + mixed_precision::element_bytes(v.element);
    a.y = bytes;
    CHECK_THROWS_AS(v.launch(a), std::invalid_argument);
    a.x = bytes;
    a.y = bytes + 16 + mixed_precision::element_bytes(v.element);
    CHECK_THROWS_AS(v.launch(a), std::invalid_argument);
  }
}
