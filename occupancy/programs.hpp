// Entry points of the three occupancy programs and the GPU work the tests reuse.
#pragma once

#include <cstdint>
#include <vector>

#include "thread_records.hpp"

namespace occupancy {

int thread_hierarchy_main(int argc, const char* const* argv);  // 01_thread_hierarchy.cu
int resource_usage_main(int argc, const char* const* argv);    // 02_resource_usage.cu
int occupancy_sweep_main(int argc, const char* const* argv);   // 03_occupancy_sweep.cu

// Runs 01's kernel on the current device: one record per thread of a grid x block launch.
std::vector<ThreadRecord> record_threads(std::uint32_t grid, std::uint32_t block);

}  // namespace occupancy
