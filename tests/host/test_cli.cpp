// The one command-line parser: sizes, numbers, options and every refusal.
#include <functional>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"

using common::parse_count;
using common::UsageError;

namespace {
std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("parse_count accepts every documented form", "[cli]") {
  CHECK(parse_count("16777216", "--n") == 16777216u);
  CHECK(parse_count("2^24", "--n") == 16777216u);
  CHECK(parse_count("16M", "--n") == 16777216u);
  CHECK(parse_count("64MiB", "--n") == 16777216u);  // bytes / 4
  CHECK(parse_count("1K", "--n") == 1024u);
  CHECK(parse_count("4G", "--n") == (std::uint64_t{4} << 30));
  CHECK(parse_count("4B", "--n") == 1u);
  CHECK(parse_count("1KiB", "--n", 2) == 512u);  // element size is a parameter
  CHECK(parse_count(" 33 ", "--n") == 33u);
  CHECK(parse_count("2^0", "--n") == 1u);
  CHECK(parse_count("10^3", "--n") == 1000u);
}

TEST_CASE("parse_count refuses bad sizes with one sentence naming the value", "[cli]") {
  const auto msg = [](const std::string& v) {
    return usage_message([&] { parse_count(v, "--n", 4, 1, std::uint64_t{1} << 40); });
  };
  CHECK(msg("abc").find("--n 'abc' is not a count") != std::string::npos);
  CHECK(msg("-5").find("--n '-5' is negative") != std::string::npos);
  CHECK(msg("2^70").find("--n '2^70' is too large") != std::string::npos);
  CHECK(msg("2^70").find("2^40") != std::string::npos);  // says what is allowed
  CHECK(msg("1e400").find("--n '1e400' is not a count") != std::string::npos);
  CHECK(msg("0").find("--n '0' is too small: it must be at least 1") != std::string::npos);
  CHECK(msg("").find("needs a value") != std::string::npos);
  CHECK(msg("3B").find("not a whole number of 4-byte elements") != std::string::npos);
  CHECK(msg("12Q").find("is not a count") != std::string::npos);
  CHECK(msg("2^").find("is not a count") != std::string::npos);
  CHECK(msg("99999999999999999999999").find("too large") != std::string::npos);
  CHECK(msg("16777216T").find("too large") != std::string::npos);
}

TEST_CASE("parse_int and parse_double check their range", "[cli]") {
  CHECK(common::parse_int("5", "--reps", 1, 10) == 5);
  CHECK(common::parse_int("-3", "--x", -5, 5) == -3);
  CHECK(usage_message([] { common::parse_int("0", "--reps", 1, 100); }).find("--reps '0' is out of range") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_int("2.5", "--reps", 1, 100); }).find("is not a whole number") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_int("99999999999999999999", "--reps", 1, 100); }).find("out of range") !=
        std::string::npos);
  CHECK(common::parse_double("2.5", "--budget-ms", 1, 10) == Approx(2.5));
  CHECK(usage_message([] { common::parse_double("nan", "--budget-ms", 1, 10); }).find("out of range") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_double("1e400", "--budget-ms", 1, 10); }).find("out of range") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_double("fast", "--budget-ms", 1, 10); }).find("is not a number") !=
        std::string::npos);
}

TEST_CASE("format_count writes powers of two as 2^k", "[cli]") {
  CHECK(common::format_count(16777216) == "2^24");
  CHECK(common::format_count(1000) == "1000");
  CHECK(common::format_count(512) == "512");
}

TEST_CASE("split_list drops empty items and spaces", "[cli]") {
  CHECK(common::split_list("1, 2,,cub ") == std::vector<std::string>{"1", "2", "cub"});
  CHECK(common::split_list(",").empty());
}

TEST_CASE("ArgParser parses options and flags and refuses the rest", "[cli]") {
  bool flag = false;
  std::string value;
  common::ArgParser p("prog", "summary");
  p.flag("--flag", "a flag", &flag);
  p.option("--opt", "V", "an option", [&](const std::string& v) { value = v; });

  auto run = [&](std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return p.parse(static_cast<int>(args.size()), args.data());
  };
  CHECK(run({"--flag", "--opt", "x"}));
  CHECK(flag);
  CHECK(value == "x");
  CHECK(run({"--opt=y"}));
  CHECK(value == "y");
  CHECK(usage_message([&] { run({"--nope"}); }).find("unknown option '--nope'") != std::string::npos);
  CHECK(usage_message([&] { run({"--opt"}); }).find("option --opt needs a value") != std::string::npos);
  CHECK(usage_message([&] { run({"--opt", "--flag"}); }).find("option --opt needs a value") != std::string::npos);
  CHECK(usage_message([&] { run({"--flag=1"}); }).find("takes no value") != std::string::npos);
  CHECK(usage_message([&] { run({"stray"}); }).find("unexpected argument 'stray'") != std::string::npos);
  CHECK_FALSE(run({"--help"}));
  CHECK(p.help().find("--opt V") != std::string::npos);
}

TEST_CASE("require_writable refuses a path in a missing directory", "[cli]") {
  const std::string msg = usage_message([] { common::require_writable("/nonexistent/dir/x.csv", "--csv"); });
  CHECK(msg.find("cannot write --csv file '/nonexistent/dir/x.csv'") != std::string::npos);
}
