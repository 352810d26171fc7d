// The one command-line parser: sizes, numbers, options and every refusal.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "test_files.hpp"
#include "timing.hpp"

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
  CHECK(parse_count("16K", "--n") == 16384u);
}

TEST_CASE("one grammar: every parser refuses the same mistakes with a reason", "[cli]") {
  const auto count = [](const std::string& v) { return usage_message([&] { parse_count(v, "--n"); }); };
  const auto whole = [](const std::string& v) {
    return usage_message([&] { common::parse_int(v, "--reps", 1, 1000); });
  };
  const auto real = [](const std::string& v) {
    return usage_message([&] { common::parse_double(v, "--budget-ms", 1, 3.6e6); });
  };
  for (const std::function<std::string(const std::string&)>& parse :
       std::vector<std::function<std::string(const std::string&)>>{count, whole, real}) {
    CHECK(parse("0x10").find("hexadecimal") != std::string::npos);
    CHECK(parse("16k").find("upper case: 16K") != std::string::npos);
    CHECK(parse("16m").find("upper case: 16M") != std::string::npos);
    CHECK(parse("1e2").find("exponent notation") != std::string::npos);
    CHECK(parse("0^0").find("the base of a power must be at least 2") != std::string::npos);
    CHECK(parse("1^99").find("the base of a power must be at least 2") != std::string::npos);
    CHECK(parse("nan").find("not a number") != std::string::npos);
    CHECK(parse("inf").find("not a number") != std::string::npos);
    CHECK(parse("+5").find("'+5' is not") != std::string::npos);
    CHECK(parse("5 5").find("'5 5' is not") != std::string::npos);
  }
  CHECK(count("64mib").find("upper case: 64MiB") != std::string::npos);
  // Whole numbers take every whole form; only counts of elements take bytes.
  CHECK(common::parse_int("2^9", "--reps", 1, 1000) == 512);
  CHECK(common::parse_int("1K", "--reps", 1, 1024) == 1024);
  CHECK(whole("4KiB").find("bytes are only for sizes") != std::string::npos);
  CHECK(common::parse_double("16", "--budget-ms", 1, 3.6e6) == 16.0);
  CHECK(common::parse_double("2^4", "--budget-ms", 1, 3.6e6) == 16.0);
  CHECK(common::parse_double("2.5", "--budget-ms", 1, 3.6e6) == 2.5);
  CHECK(real("2.").find("is not") != std::string::npos);
  CHECK(real(".5").find("is not") != std::string::npos);
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
  CHECK(usage_message([] { common::parse_double("nan", "--budget-ms", 1, 10); }).find("is not a number") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_double("11", "--budget-ms", 1, 10); }).find("out of range") !=
        std::string::npos);
  CHECK(usage_message([] { common::parse_double("2^2000", "--budget-ms", 1, 10); }).find("out of range") !=
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

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

TEST_CASE("output paths: what cannot be written is refused with its reason", "[cli]") {
  test_support::ScratchDir dir;
  const auto problem = [](const std::string& path) { return common::output_path_problem(path, "--csv"); };
  CHECK(problem("").find("--csv '' is not a file name") != std::string::npos);
  CHECK(problem(dir.path()).find("is a directory") != std::string::npos);
  CHECK(problem(".").find("--csv '.' is a directory") != std::string::npos);
  CHECK(problem(dir.path() + "/").find("is a directory") != std::string::npos);
  CHECK(problem(dir.file("sub/")).find("ends in '/'") != std::string::npos);
  CHECK(problem("/dev/null").find("is not a regular file") != std::string::npos);
  CHECK(problem(dir.file("missing/x.csv")).find("the directory '" + dir.file("missing") + "' does not exist") !=
        std::string::npos);
  const std::string locked = dir.file("locked.csv");
  std::ofstream(locked) << "keep\n";
  std::filesystem::permissions(locked, std::filesystem::perms::owner_read);
  CHECK(problem(locked).find("is a read-only file") != std::string::npos);
  CHECK(read_all(locked) == "keep\n");
  CHECK(problem(dir.file("fine.csv")).empty());
  // The checks leave nothing behind.
  CHECK(entries(dir.path()) == std::vector<std::string>{"locked.csv"});
}

TEST_CASE("output paths: the same file under two names is one file", "[cli]") {
  test_support::ScratchDir dir;
  CHECK(common::same_output_file(dir.file("a.csv"), dir.file("a.csv")));
  CHECK(common::same_output_file(dir.file("a.csv"), dir.path() + "/./a.csv"));
  CHECK_FALSE(common::same_output_file(dir.file("a.csv"), dir.file("a.json")));
  std::ofstream(dir.file("a.csv")) << "x";
  std::filesystem::create_hard_link(dir.file("a.csv"), dir.file("b.csv"));
  CHECK(common::same_output_file(dir.file("a.csv"), dir.file("b.csv")));
}

TEST_CASE("writing a file goes through a unique temporary name and touches nothing else", "[cli]") {
  test_support::ScratchDir dir;
  const std::string target = dir.file("out.csv");
  std::ofstream(target + ".tmp") << "the user's own file\n";
  common::write_file_atomically(target, "a,b\n1,2\n");
  CHECK(read_all(target) == "a,b\n1,2\n");
  CHECK(read_all(target + ".tmp") == "the user's own file\n");
  CHECK(entries(dir.path()) == std::vector<std::string>{"out.csv", "out.csv.tmp"});
  // A new file gets the usual permissions, not mkstemp's private ones.
  const auto perms = std::filesystem::status(target).permissions();
  CHECK((perms & std::filesystem::perms::owner_write) != std::filesystem::perms::none);
  CHECK((perms & std::filesystem::perms::others_read) != std::filesystem::perms::none);
  common::write_file_atomically(target, "replaced\n");
  CHECK(read_all(target) == "replaced\n");
  CHECK(entries(dir.path()) == std::vector<std::string>{"out.csv", "out.csv.tmp"});
  CHECK_THROWS(common::write_file_atomically(dir.file("missing/x.csv"), "x"));
}

TEST_CASE("ArgParser: refused options, checks after parsing, and which options were given", "[cli]") {
  std::string n;
  bool sweep = false;
  common::ArgParser p("prog", "summary");
  p.option("--n", "N", "size", [&](const std::string& v) { n = v; });
  p.flag("--sweep", "sweep", &sweep);
  p.refuse("--stages", "prog runs one stage only.");
  p.after_parse([&] {
    if (p.given("--n") && sweep) throw UsageError("--n and --sweep cannot be combined.");
  });
  auto run = [&](std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return p.parse(static_cast<int>(args.size()), args.data());
  };
  CHECK(usage_message([&] { run({"--stages", "13"}); }) == "prog runs one stage only.");
  CHECK(usage_message([&] { run({"--n", "5", "--sweep"}); }) == "--n and --sweep cannot be combined.");
  CHECK(run({"--sweep"}));
  CHECK_FALSE(p.given("--n"));
  CHECK(p.help().find("--stages") == std::string::npos);
  CHECK(p.help().find("Numbers: a whole number") != std::string::npos);
}

TEST_CASE("timing options: --min-reps above --reps is refused; without it the floor follows --reps", "[cli]") {
  auto parse = [](std::vector<const char*> args, common::TimingOptions& timing) {
    bool warm = false;
    common::ArgParser p("prog", "summary");
    common::add_timing_options(p, timing, warm, true);
    args.insert(args.begin(), "prog");
    return p.parse(static_cast<int>(args.size()), args.data());
  };
  common::TimingOptions t;
  CHECK(usage_message([&] {
          parse({"--min-reps", "50", "--reps", "10"}, t);
        }).find("--min-reps 50 is more than --reps 10") != std::string::npos);
  common::TimingOptions t2;
  CHECK(usage_message([&] { parse({"--min-reps", "500"}, t2); }).find("is more than --reps 100") != std::string::npos);
  common::TimingOptions t3;
  CHECK(parse({"--reps", "2"}, t3));
  CHECK(t3.reps == 2);
  CHECK(t3.min_reps == 2);
  common::TimingOptions t4;
  CHECK(parse({"--reps", "10", "--min-reps", "10"}, t4));
  CHECK(t4.min_reps == 10);
}

TEST_CASE("output options: both checked after parsing, and never the same file", "[cli]") {
  test_support::ScratchDir dir;
  auto parse = [](std::vector<std::string> args) {
    std::string csv;
    std::string json;
    common::ArgParser p("prog", "summary");
    common::add_output_options(p, csv, json, "rows");
    args.insert(args.begin(), "prog");
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    return usage_message([&] { p.parse(static_cast<int>(argv.size()), argv.data()); });
  };
  CHECK(parse({"--csv", ""}).find("--csv '' is not a file name") != std::string::npos);
  CHECK(parse({"--json="}).find("--json '' is not a file name") != std::string::npos);
  CHECK(parse({"--csv", dir.file("r"), "--json", dir.file("r")}).find("name the same file") != std::string::npos);
  CHECK(parse({"--csv", dir.file("r.csv"), "--json", dir.file("r.json")}) == "(no error)");
  CHECK(parse({"--csv", dir.path()}).find("is a directory") != std::string::npos);
}
