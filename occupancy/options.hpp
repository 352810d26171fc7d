// The command lines of the three occupancy programs, parsed and checked on the host.
//
// Parsing (syntax and fixed ranges) happens before any CUDA call; the checks that need
// the device's limits take a DeviceLimits, so both are testable without a GPU. Every
// refusal is a common::UsageError (exit code 2) naming the value and what is allowed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "occupancy_calc.hpp"
#include "timing.hpp"

namespace occupancy {

// Exit codes shared by the three programs.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // a result failed its check, or a CUDA error

// 01_thread_hierarchy records one 48-byte record per thread; this caps the demo's size.
constexpr std::uint64_t kMaxRecordedThreads = std::uint64_t{1} << 22;

struct HierarchyOptions {
  std::optional<std::uint32_t> grid;  // default: 2 blocks per SM
  std::uint32_t block = 256;
  std::size_t first = 10;  // blocks of the start order to list
  bool raw = false;
  std::string csv;
  std::string json;
  int device = 0;
};

struct SgemmOptions {
  int size = 2048;             // M = N = K of the timed product (the book's 2048^3)
  int check_size = 512;        // fully checked against the host reference
  std::size_t samples = 4096;  // elements of the timed product checked against the host
  bool warm_l2 = false;
  common::TimingOptions timing;
  std::uint64_t seed = 1;
  std::string csv;
  std::string json;
  int device = 0;
};

struct SweepOptions {
  std::uint64_t n = std::uint64_t{1} << 26;
  std::vector<int> blocks = {32, 64, 128, 256, 512, 1024};
  std::vector<int> per_sm = {1, 2, 4, 8, 16, 32};
  bool warm_l2 = false;
  common::TimingOptions timing;
  std::uint64_t seed = 1;
  std::string csv;
  std::string json;
  int device = 0;
};

// nullopt when --help was given (the help has been printed).
std::optional<HierarchyOptions> parse_hierarchy_options(int argc, const char* const* argv);
std::optional<SgemmOptions> parse_sgemm_options(int argc, const char* const* argv);
std::optional<SweepOptions> parse_sweep_options(int argc, const char* const* argv);

// The checks that need the device. They may fill in defaults that depend on it.
void check_hierarchy_options(HierarchyOptions& opt, const DeviceLimits& device);
void check_sweep_options(const SweepOptions& opt, const DeviceLimits& device);

}  // namespace occupancy
