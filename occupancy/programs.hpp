// Entry points of the three occupancy programs and the GPU work the tests reuse.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "thread_records.hpp"

namespace occupancy {

int thread_hierarchy_main(int argc, const char* const* argv);  // 01_thread_hierarchy.cu
int resource_usage_main(int argc, const char* const* argv);    // 02_resource_usage.cu
int occupancy_sweep_main(int argc, const char* const* argv);   // 03_occupancy_sweep.cu

// Runs 01's kernel on the current device: one record per thread of a grid x block launch.
std::vector<ThreadRecord> record_threads(std::uint32_t grid, std::uint32_t block);

// Runs `body` and turns what it throws into the exit codes every program shares:
// UsageError 2, NoDeviceError 3, anything else 1, each with one line on stderr.
int run_program(const char* program, const std::function<int()>& body);

}  // namespace occupancy
