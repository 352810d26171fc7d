#include "options.hpp"

#include <algorithm>
#include <climits>

#include "cli.hpp"

namespace occupancy {
namespace {

using common::parse_int;
using common::UsageError;

const char* kExitCodes =
    "Exit codes: 0 success, 1 a result failed its check or a CUDA error occurred, 2 bad usage, 3 no CUDA device.";

// A whole number from 1 to max_value; a zero gets its own message.
long long positive_int(const std::string& text, const std::string& what, long long max_value,
                       const std::string& zero_message) {
  bool zero = false;
  try {
    zero = parse_int(text, what, 0, 0) == 0;
  } catch (const UsageError&) {
  }
  if (zero) throw UsageError(zero_message);
  return parse_int(text, what, 1, max_value);
}

bool is_power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// Limits no CUDA device goes past, so a value beyond them is refused before a device
// is looked for; the device's own limits are checked once it is known.
constexpr long long kAnyDeviceThreadsPerBlock = 1024;
constexpr long long kAnyDeviceBlocksPerSm = 32;

void check_any_device_block(long long block, const std::string& what) {
  if (block > kAnyDeviceThreadsPerBlock)
    throw UsageError(what + " " + std::to_string(block) + " is more than any CUDA device takes: at most " +
                     std::to_string(kAnyDeviceThreadsPerBlock) + " threads per block.");
}

std::vector<int> parse_int_list(const std::string& text, const std::string& what, long long lo, long long hi) {
  const std::vector<std::string> items = common::split_list(text);
  if (items.empty()) throw UsageError(what + " '" + text + "' is empty: give a comma-separated list such as 1,2,4.");
  std::vector<int> out;
  for (const auto& item : items) out.push_back(static_cast<int>(parse_int(item, what + " item", lo, hi)));
  return out;
}

}  // namespace

std::optional<HierarchyOptions> parse_hierarchy_options(int argc, const char* const* argv) {
  HierarchyOptions opt;
  common::ArgParser args("01_thread_hierarchy",
                         "Launches a kernel in which every thread records its global index, block, warp, lane, the SM "
                         "it ran on and when it started, then prints a summary: the lanes of a warp run together, a "
                         "block stays on one SM, and blocks and warps start in no fixed order.");
  args.option("--grid", "G", "blocks in the grid (default: 2 per SM)", [&](const std::string& v) {
    opt.grid = static_cast<std::uint32_t>(positive_int(
        v, "--grid (blocks)", INT_MAX, "--grid 0 would launch a grid of zero blocks: give 1 or more blocks."));
  });
  args.option("--block", "B", "threads per block, 1 to the device's limit (default 256)", [&](const std::string& v) {
    const long long block =
        positive_int(v, "--block (threads per block)", 1 << 20,
                     "--block 0 would launch blocks of no threads: give 1 up to the device's threads-per-block limit.");
    check_any_device_block(block, "--block");
    opt.block = static_cast<std::uint32_t>(block);
  });
  args.option("--first", "K", "blocks of the start order to list, at least 1 (default 10)", [&](const std::string& v) {
    opt.first = static_cast<std::size_t>(
        positive_int(v, "--first", INT_MAX, "--first 0 would list no blocks: give 1 or more (the default is 10)."));
  });
  args.flag("--raw", "also print every record, one line per thread", &opt.raw);
  common::add_output_options(args, opt.csv, opt.json, "every record");
  common::add_device_option(args, opt.device);
  args.epilog(std::string("At most ") + std::to_string(kMaxRecordedThreads) +
              " threads (grid x block) are recorded.\n" + kExitCodes);
  if (!args.parse(argc, argv)) return std::nullopt;
  if (opt.grid && static_cast<std::uint64_t>(*opt.grid) * opt.block > kMaxRecordedThreads)
    throw UsageError("--grid " + std::to_string(*opt.grid) + " x --block " + std::to_string(opt.block) + " = " +
                     std::to_string(static_cast<std::uint64_t>(*opt.grid) * opt.block) +
                     " threads; this demo records at most " + std::to_string(kMaxRecordedThreads) + ".");
  return opt;
}

void check_hierarchy_options(HierarchyOptions& opt, const DeviceLimits& device) {
  if (static_cast<int>(opt.block) > device.max_threads_per_block)
    throw UsageError("--block " + std::to_string(opt.block) + " is above this device's limit of " +
                     std::to_string(device.max_threads_per_block) + " threads per block.");
  if (!opt.grid) opt.grid = static_cast<std::uint32_t>(2 * std::max(device.sm_count, 1));
  if (static_cast<long long>(*opt.grid) > device.max_grid_x)
    throw UsageError("--grid " + std::to_string(*opt.grid) + " is above this device's limit of " +
                     std::to_string(device.max_grid_x) + " blocks.");
  const std::uint64_t threads = static_cast<std::uint64_t>(*opt.grid) * opt.block;
  if (threads > kMaxRecordedThreads)
    throw UsageError("a grid of " + std::to_string(*opt.grid) + " blocks x " + std::to_string(opt.block) + " = " +
                     std::to_string(threads) + " threads; this demo records at most " +
                     std::to_string(kMaxRecordedThreads) + ".");
}

std::optional<SgemmOptions> parse_sgemm_options(int argc, const char* const* argv) {
  SgemmOptions opt;
  common::ArgParser args("02_resource_usage",
                         "Builds one tiled SGEMM kernel three ways (plain, with __launch_bounds__, and from a file "
                         "compiled with --maxrregcount) and prints, for each, the registers, spills and shared memory "
                         "it uses, its theoretical occupancy, and its verified time and GFLOP/s.");
  args.option("--size", "N", "M = N = K of the timed product (default 2048)",
              [&](const std::string& v) { opt.size = static_cast<int>(parse_int(v, "--size", 16, 16384)); });
  args.option("--check-size", "N", "M = N = K of the product checked element by element on the host (default 512)",
              [&](const std::string& v) { opt.check_size = static_cast<int>(parse_int(v, "--check-size", 1, 1024)); });
  args.option(
      "--samples", "S", "elements of the timed product also checked on the host (default 4096)",
      [&](const std::string& v) { opt.samples = static_cast<std::size_t>(parse_int(v, "--samples", 1, 1 << 20)); });
  opt.timing.reps = 50;
  common::add_timing_options(args, opt.timing, opt.warm_l2, false);
  common::add_seed_option(args, opt.seed, "random inputs");
  common::add_output_options(args, opt.csv, opt.json, "every column");
  common::add_device_option(args, opt.device);
  args.epilog(
      "The compiler's own report of the three builds: scripts/resource_usage.sh (no GPU needed), or configure with "
      "-DREDUCTION_RESOURCE_USAGE=ON.\n" +
      std::string(kExitCodes));
  args.after_parse([&] {
    const auto elements = static_cast<std::size_t>(opt.size) * static_cast<std::size_t>(opt.size);
    if (opt.samples > elements)
      throw UsageError("--samples " + std::to_string(opt.samples) + " is more than the " + std::to_string(elements) +
                       " elements of the " + std::to_string(opt.size) + " x " + std::to_string(opt.size) +
                       " product that is timed (--size " + std::to_string(opt.size) + "): give --samples at most " +
                       std::to_string(elements) + " or a larger --size.");
  });
  if (!args.parse(argc, argv)) return std::nullopt;
  return opt;
}

std::optional<SweepOptions> parse_sweep_options(int argc, const char* const* argv) {
  SweepOptions opt;
  common::ArgParser args("03_occupancy_sweep",
                         "Times one grid-stride, warp-shuffle reduction over block sizes and blocks per SM, next to "
                         "the theoretical occupancy of each configuration, and says whether the fastest configuration "
                         "is also the one with the highest occupancy.");
  args.option("--n", "N", "elements to sum (default 2^26); 67108864, 2^26, 64M or 256MiB",
              [&](const std::string& v) { opt.n = common::parse_count(v, "--n", 4, 1, std::uint64_t{1} << 36); });
  args.option("--blocks", "LIST", "block sizes, powers of two from 32 (default 32,64,128,256,512,1024)",
              [&](const std::string& v) {
                opt.blocks = parse_int_list(v, "--blocks", 1, 1 << 20);
                for (int b : opt.blocks) {
                  if (b < 32 || !is_power_of_two(b))
                    throw UsageError("--blocks item " + std::to_string(b) +
                                     " is not allowed: block sizes are powers of two from 32 (whole warps) to the "
                                     "device's limit.");
                  check_any_device_block(b, "--blocks item");
                }
              });
  args.option("--per-sm", "LIST", "blocks per SM; the grid is this times the SM count (default 1,2,4,8,16,32)",
              [&](const std::string& v) {
                for (const auto& item : common::split_list(v)) {
                  const long long per_sm =
                      positive_int(item, "--per-sm item", 1 << 16,
                                   "--per-sm item 0 would launch a grid of zero blocks: give 1 or more blocks per SM.");
                  if (per_sm > kAnyDeviceBlocksPerSm)
                    throw UsageError("--per-sm item " + std::to_string(per_sm) +
                                     " is more than any CUDA device keeps: at most " +
                                     std::to_string(kAnyDeviceBlocksPerSm) + " resident blocks per SM.");
                }
                opt.per_sm = parse_int_list(v, "--per-sm", 1, 1 << 16);
              });
  opt.timing.reps = 50;
  opt.timing.budget_ms = 500;
  common::add_timing_options(args, opt.timing, opt.warm_l2, false);
  common::add_seed_option(args, opt.seed, "random inputs");
  common::add_output_options(args, opt.csv, opt.json, "every column");
  common::add_device_option(args, opt.device);
  args.epilog("Configurations with more blocks per SM than the occupancy API says fit are skipped (and listed).\n" +
              std::string(kExitCodes));
  if (!args.parse(argc, argv)) return std::nullopt;
  std::sort(opt.blocks.begin(), opt.blocks.end());
  opt.blocks.erase(std::unique(opt.blocks.begin(), opt.blocks.end()), opt.blocks.end());
  std::sort(opt.per_sm.begin(), opt.per_sm.end());
  opt.per_sm.erase(std::unique(opt.per_sm.begin(), opt.per_sm.end()), opt.per_sm.end());
  return opt;
}

void check_sweep_options(const SweepOptions& opt, const DeviceLimits& device) {
  for (int b : opt.blocks)
    if (b > device.max_threads_per_block)
      throw UsageError("--blocks item " + std::to_string(b) + " is above this device's limit of " +
                       std::to_string(device.max_threads_per_block) + " threads per block.");
  for (int p : opt.per_sm)
    if (p > device.max_blocks_per_sm)
      throw UsageError("--per-sm item " + std::to_string(p) + " is above this device's limit of " +
                       std::to_string(device.max_blocks_per_sm) + " resident blocks per SM.");
}

}  // namespace occupancy
