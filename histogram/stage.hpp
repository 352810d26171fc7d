// The contract every histogram stage keeps, and the two histograms the ladder counts.
//
// A stage is one file in histogram/ that defines its kernel, a planner and a launcher,
// and a describe_*() function that fills in a Stage; histogram/stages.cpp lists them in
// chapter order (the only list of stages). The launcher enqueues everything the
// histogram needs (any memset included) and nothing else: no allocation, no copy, no
// synchronisation. It must write every one of the `bins` counters.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device_info.hpp"

namespace histogram {

// The two histograms:
//   256 bins:   the input is bytes and a byte's bin is its value;
//   4,096 bins: the input is 16-bit values and a value's bin is v >> 4 (its top 12 bits).
enum class Bins { b256, b4096 };
constexpr unsigned bin_count(Bins b) { return b == Bins::b256 ? 256u : 4096u; }
constexpr std::size_t value_bytes(Bins b) { return b == Bins::b256 ? 1 : 2; }

// n values of at most 2^32 - 1, so that no 32-bit count can overflow.
constexpr std::uint64_t kMaxValues = (std::uint64_t{1} << 32) - 1;

struct HistArgs {
  const void* in = nullptr;  // n values (bytes or 16-bit), any alignment of their size
  std::size_t n = 0;
  Bins bins = Bins::b256;
  unsigned* hist = nullptr;  // bin_count(bins) counters: the launcher writes every one
  void* scratch = nullptr;   // plan.scratch_bytes; zeroed once when zero_scratch_once
  std::size_t scratch_bytes = 0;
  unsigned grid = 0;  // from the plan
  cudaStream_t stream = nullptr;
};

// Decided once per (n, bins, device), outside the timed region.
struct Plan {
  unsigned grid = 0;
  int block = 0;
  std::size_t scratch_bytes = 0;
  // Scratch is zeroed once, before the first launch, for a stage that keeps counters
  // there and leaves them at zero after every launch (the one-launch stage).
  bool zero_scratch_once = false;
};

enum class Kind { stage, baseline };

struct Stage {
  Kind kind = Kind::stage;
  int number = 0;            // 1, 2, ... in chapter order; 0 for the baseline
  const char* id = "";       // "lane_banks"; the baseline: "cub"
  const char* title = "";    // short, for the table
  const char* source = "";   // the file, from the repository root
  const char* chapter = "";  // the chapter that explains it
  bool single_launch = false;
  Plan (*plan)(std::size_t n, Bins bins, const common::DeviceInfo& device) = nullptr;
  void (*launch)(const HistArgs& args) = nullptr;
};

// "05" for stage 5, "cub" for the baseline: what --stages and the table's # column show.
std::string stage_key(const Stage& s);

}  // namespace histogram
