// The contract every reduction stage and baseline keeps.
//
// A stage is one file in reduction/ (a baseline one in reduction/baselines/) that
// defines its kernels, a planner and a launcher, and a describe_*() function that
// fills in a Stage. reduction/stages.cpp lists the describe_*() functions in chapter
// order: that list is the only stage list in the project.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "device_info.hpp"
#include "verify.hpp"

namespace reduction {

// What the launcher gets. It enqueues everything the sum needs on `stream` (every
// pass, any memset) and nothing else: no allocation, no synchronisation, no copies
// to the host.
struct StageArgs {
  const float* in = nullptr;  // n floats on the device
  std::size_t n = 0;
  float* out = nullptr;     // one float on the device; the launcher must write it
  void* scratch = nullptr;  // plan.scratch_bytes of device memory, contents undefined
  std::size_t scratch_bytes = 0;
  int block = 0;      // threads per block, already validated against BlockSizes
  unsigned grid = 0;  // from the plan
  cudaStream_t stream = nullptr;
};

// Decided once per (n, block, device), outside the timed region.
struct LaunchPlan {
  unsigned grid = 0;              // blocks of the main pass, if the stage chooses them
  std::size_t scratch_bytes = 0;  // device memory the launcher may use
  std::size_t error_depth = 0;    // most float additions any element passes through (common/verify.hpp)
  // A compensated stage also states the tighter bound of common::compensated_bound, which
  // the checks then use instead of the depth (a plain order cannot meet it when the sum
  // cancels, so a lost compensation fails).
  common::ErrorBound compensated{};
  common::ErrorBound bound() const {
    if (compensated.sum_units > 0) return compensated;
    common::ErrorBound b;
    b.depth = error_depth;
    return b;
  }
  // Scratch is zeroed once when the stage is prepared (outside any timing), for
  // stages that keep a counter there and leave it at zero after every launch
  // (the single-pass stages' "last block" ticket). Otherwise scratch is undefined.
  bool zero_scratch_once = false;
};

// Block sizes a stage accepts: min..max (0 = the device's limit), powers of two only
// when `powers_of_two`; a stage that takes no block size has `configurable` false.
struct BlockSizes {
  bool configurable = true;
  int min = 32;
  int max = 0;
  int preferred = 256;
  bool powers_of_two = true;
};

enum class Kind { stage, baseline };

struct Stage {
  Kind kind = Kind::stage;
  int number = 0;            // 1, 2, ... for stages in chapter order; 0 for baselines
  const char* id = "";       // "sequential_addressing"; baselines: "cub", "thrust", ...
  const char* title = "";    // short, for the table
  const char* source = "";   // path of the file, from the repository root
  const char* chapter = "";  // path of the chapter that explains it
  BlockSizes blocks;
  std::size_t max_n = ~std::size_t{0};  // largest n the stage is correct for
  bool deterministic = true;            // bitwise-identical result run to run
  bool single_launch = false;           // one kernel and nothing else enqueued
  double book_v100_ms = NAN;            // the book's published V100 time at 2^24 (historical)
  LaunchPlan (*plan)(std::size_t n, int block, const common::DeviceInfo& device) = nullptr;
  void (*launch)(const StageArgs& args) = nullptr;
};

// "05" for stage 5, the id for a baseline: what --stages and the table's # column use.
std::string stage_key(const Stage& s);

// Empty when `block` is acceptable for the stage on a device whose limit is
// `device_max_threads`; otherwise one sentence saying what is allowed.
std::string block_size_error(const Stage& s, int block, int device_max_threads);

// Every power of two (or every size) the stage accepts on this device, for tests.
int max_block_for(const Stage& s, int device_max_threads);

}  // namespace reduction
