// Scan stage 02: stage 01 with bank-conflict padding.
//
// Idea: the tree's lanes touch slots 2d apart, so at d = 16 a warp's 32 loads all fall
// in one bank of shared memory (32-way conflicts). Storing value i at slot i + i / 32
// moves each row of 32 slots one bank along and spreads them out (tree_slot<true> in
// scan/tree_scan.cuh; chapters/25_shared_memory_and_atomics.md measures the tree alone).
// Fixes: stage 01's bank conflicts. Keeps: its second pass over the outputs.
// Expect: faster than stage 01 where the tile scan, not DRAM, limits it.
// Chapter: chapters/28_scan.md
#include "tree_scan.cuh"

namespace scan {
namespace {

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo&) { return tree_plan<true>(n); }
void launch(const ScanArgs& a) { tree_launch<true>(a, "02"); }

}  // namespace

ScanStage describe_padded_block_scan() {
  ScanStage s;
  s.number = 2;
  s.id = "padded_block_scan";
  s.title = "padded tree scan, then add";
  s.source = "scan/02_padded_block_scan.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
