#include "sum_options.hpp"

#include <algorithm>
#include <cstdlib>

namespace multi_gpu {
namespace {

constexpr long long kMostCount = 1024;

std::vector<int> parse_counts(const std::string& text, const Unit& unit) {
  std::vector<int> counts;
  for (const std::string& item : common::split_list(text))
    counts.push_back(static_cast<int>(common::parse_int(item, "--gpus item", 1, kMostCount)));
  if (counts.empty())
    throw common::UsageError("--gpus '" + text + "' names no " + unit.one + " count: write counts such as 1,2,4,8.");
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

}  // namespace

std::string join(const std::vector<int>& v) {
  std::string s;
  for (const int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

void require_divisible(std::uint64_t n_total, const std::vector<int>& counts, const Unit& unit) {
  for (const int g : counts)
    if (n_total % static_cast<std::uint64_t>(g) != 0)
      throw common::UsageError("--n " + std::to_string(n_total) + " does not split evenly over " + std::to_string(g) +
                               " " + unit.many + " (--gpus " + join(counts) + "): give a multiple of every " +
                               unit.one + " count, or --n-per-gpu N.");
}

std::vector<std::uint64_t> sizes_for(const SumOptions& opt, int count) {
  if (!opt.sweep.empty()) return opt.sweep;
  if (opt.n_total > 0) return {opt.n_total / static_cast<std::uint64_t>(count)};
  return {opt.n_per_gpu};
}

std::vector<std::uint64_t> all_sizes(const SumOptions& opt, const std::vector<int>& counts) {
  std::vector<std::uint64_t> sizes;
  for (const int g : counts)
    for (const std::uint64_t n : sizes_for(opt, g)) sizes.push_back(n);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string env_or_dash(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "-";
}

void add_size_options(common::ArgParser& args, SumOptions& opt, const Unit& unit) {
  args.option("--gpus", "LIST",
              std::string(unit.one) + " counts to run, each with " + unit.many +
                  " 0..count-1, in increasing order (default: 1 and every " + unit.one + " present)",
              [&opt, unit](const std::string& v) { opt.gpus = parse_counts(v, unit); });
  args.option("--n-per-gpu", "N",
              std::string("floats in each ") + unit.one + "'s shard (default 2^24); 16777216, 2^24, 16M or 64MiB",
              [&opt](const std::string& v) {
                opt.n_per_gpu = common::parse_count(v, "--n-per-gpu", 4, 1, std::uint64_t{1} << 36);
              });
  args.option(
      "--n", "N", std::string("floats in the whole array, split evenly over the ") + unit.many + " of each count",
      [&opt](const std::string& v) { opt.n_total = common::parse_count(v, "--n", 4, 1, std::uint64_t{1} << 40); });
  args.option("--sweep", "LO:HI[:F]", "n per GPU: every size from LO to HI, multiplying by F (default 2)",
              [&opt](const std::string& v) { opt.sweep = common::parse_sweep(v); });
  args.after_parse([&args, &opt, unit] {
    const int given = args.given("--n") + args.given("--n-per-gpu") + args.given("--sweep");
    if (given > 1)
      throw common::UsageError(
          "--n, --n-per-gpu and --sweep each give the sizes, so they cannot be combined: keep one.");
    if (args.given("--n") && !opt.gpus.empty()) require_divisible(opt.n_total, opt.gpus, unit);
  });
}

void add_run_options(common::ArgParser& args, SumOptions& opt, const std::string& seed_note) {
  common::add_timing_options(args, opt.timing, opt.warm_l2, true);
  common::add_pattern_option(args, opt.pattern);
  common::add_seed_option(args, opt.seed, seed_note);
  common::add_output_options(args, opt.csv, opt.json, "every column");
  common::add_flush_option(args, opt.flush);
}

}  // namespace multi_gpu
