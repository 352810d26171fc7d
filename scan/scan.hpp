// The contract every scan stage and baseline keeps (the scan ladder's stage.hpp).
//
// A stage is one file scan/NN_name.cu (baselines in scan/baselines.cu) that defines its
// kernels, a planner and a launcher, and a describe_*() function; scan/stages.cpp lists
// them in ladder order: the only list of scan stages in the project.
//
// Values: int32 sums wrap like two's complement, so the kernels compute them in unsigned
// arithmetic (the same bits, and no signed overflow); float sums are checked against a
// double reference within the error bound of their summation order (scan/check.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device_info.hpp"

namespace scan {

enum class ValueType { i32, f32 };
enum class ScanKind { inclusive, exclusive };

const char* type_name(ValueType t);  // "int", "float"
const char* kind_name(ScanKind k);   // "inclusive", "exclusive"

// What a launcher gets. It enqueues everything the scan needs on `stream` and nothing
// else: no allocation, no synchronisation, no copy to the host.
struct ScanArgs {
  const void* in = nullptr;  // n values of `type` on the device, any 4-byte alignment
  void* out = nullptr;       // n values; may equal `in` when the stage allows it in place
  std::size_t n = 0;
  ValueType type = ValueType::i32;
  ScanKind kind = ScanKind::inclusive;
  void* scratch = nullptr;  // plan.scratch_bytes (or more) of device memory
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
  unsigned prefetch_tiles = 0;  // the plan's (stage 06)
  unsigned grid = 0;            // the plan's (the bounds that size their grid by the device)
};

// The float error model of a stage: output i passes through at most
//   depth(i) = base + per_tile * (i / tile)
// float additions (per_tile > 0 for a single pass, whose prefix of tile t is built from
// the descriptors of the tiles before it). scan/check.hpp turns it into a bound.
struct DepthModel {
  std::size_t base = 0;
  std::size_t per_tile = 0;
  std::size_t tile = 1;
  std::size_t at(std::size_t i) const { return base + per_tile * (i / tile); }
};

// Decided once per (n, type), outside the timed region.
struct ScanPlan {
  unsigned grid = 0;              // blocks of the main kernel (0: not the stage's to say)
  std::size_t scratch_bytes = 0;  // device memory the launcher may use
  // Zeroed once when the row is prepared, never again: the single-pass stages keep their
  // ticket, counter and epoch there and leave them ready for the next launch themselves.
  bool zero_scratch_once = false;
  DepthModel depth;
  // Tiles ahead of its own that a block prefetches into L2 (stage 06), from the device's SM
  // count; the caller copies it into ScanArgs.
  unsigned prefetch_tiles = 0;
};

// A bound (scan/bounds.cu) copies its input through part of a stage's shape: checked as
// a copy, run only by `scan --bounds`, never a scan.
enum class Entry { stage, cub, copy, bound };

struct ScanStage {
  Entry entry = Entry::stage;
  int number = 0;           // 1, 2, ... for stages; 0 for baselines
  const char* id = "";      // "block_scan"; baselines: "cub_inclusive", "cub_exclusive", "copy"
  const char* title = "";   // short, for the table
  const char* source = "";  // path of the file, from the repository root
  bool in_place = true;     // out == in allowed (otherwise the launcher refuses it)
  // A baseline that computes one kind only (CUB's two rows); -1: either kind.
  int only_kind = -1;
  ScanPlan (*plan)(std::size_t n, ValueType type, const common::DeviceInfo& device) = nullptr;
  void (*launch)(const ScanArgs& args) = nullptr;
};

// "05" for stage 5, the id for a baseline.
std::string stage_key(const ScanStage& s);
bool computes(const ScanStage& s, ScanKind k);
// The copy and the bounds: their output is checked as a copy of the input, not as a scan.
inline bool checked_as_copy(const ScanStage& s) { return s.entry == Entry::copy || s.entry == Entry::bound; }

// Stages in ladder order, then cub_inclusive, cub_exclusive and copy.
const std::vector<ScanStage>& registry();
// The bounds of `scan --bounds` (scan/bounds.cu): kept apart from the registry, so no
// selection of stages (all, baselines) runs them.
const std::vector<ScanStage>& bounds();
// A stage by number ("5", "05"), id, or baseline id; nullptr when none.
const ScanStage* find_stage(const std::string& key);
// A --stages value: keys, ranges of stage numbers (1-5), all, stages, baselines; throws
// common::UsageError naming an unknown item.
std::vector<const ScanStage*> select_stages(const std::string& spec);

// s.launch(a) after the checks every stage shares: a kind the entry computes, and an
// in-place call (out == in) only where the entry allows it; throws std::invalid_argument
// with one sentence otherwise. Each launcher checks its own scratch (require_scratch).
void launch(const ScanStage& s, const ScanArgs& a);
// Throws std::invalid_argument unless a.scratch holds at least `bytes`.
void require_scratch(const ScanArgs& a, std::size_t bytes, const char* stage);

}  // namespace scan
