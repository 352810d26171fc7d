// Entry points of the three occupancy programs and the GPU work the tests reuse.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cli.hpp"
#include "device_info.hpp"
#include "device_limits.hpp"
#include "options.hpp"
#include "thread_records.hpp"

namespace occupancy {

int thread_hierarchy_main(int argc, const char* const* argv);  // 01_thread_hierarchy.cu
int resource_usage_main(int argc, const char* const* argv);    // 02_resource_usage.cu
int occupancy_sweep_main(int argc, const char* const* argv);   // 03_occupancy_sweep.cu

// The start the three programs share, inside common::run_program (exit codes): parse the
// options (nullopt: --help was printed, exit 0), look up the device and its limits, and
// hand all three to `body`, whose return value is the exit code.
template <typename Options, typename Body>
int run_on_device(const char* program, std::optional<Options> (*parse)(int, const char* const*), int argc,
                  const char* const* argv, Body body) {
  return common::run_program(program, [&] {
    const std::optional<Options> parsed = parse(argc, argv);
    if (!parsed) return kExitOk;
    Options opt = *parsed;
    const common::DeviceInfo info = common::query_device(opt.device);
    const DeviceLimits limits = query_device_limits(opt.device);
    return body(opt, info, limits);
  });
}

// Runs 01's kernel on the current device: one record per thread of a grid x block launch.
std::vector<ThreadRecord> record_threads(std::uint32_t grid, std::uint32_t block);

}  // namespace occupancy
