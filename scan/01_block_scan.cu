// Scan stage 01: a block scan in shared memory, made whole-array by scan-then-add.
//
// Idea: the block scan of access_patterns/08_block_scan.cu (a two-sweep tree over a
// tile of 1024 values in shared memory) scans each tile on its own. Two more steps
// make it a scan of the whole array: the tiles' totals are scanned the same way (a
// second level, a third for more than 2^20 values), and a last pass adds to every
// value of tile t the sum of the tiles before it (scan/tree_scan.cuh).
// Cost: the outputs are written, read back and written again: 16 bytes of traffic per
// value where a scan needs 8, and a launch per level and pass.
// Expect: well below the copy bound at every size; the tree's bank conflicts (stage 02)
// and the second pass over the outputs (stage 03) are what the next stages remove.
// Chapter: chapters/28_scan.md
#include "tree_scan.cuh"

namespace scan {
namespace {

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo&) { return tree_plan<false>(n); }
void launch(const ScanArgs& a) { tree_launch<false>(a, "01"); }

}  // namespace

ScanStage describe_block_scan() {
  ScanStage s;
  s.number = 1;
  s.id = "block_scan";
  s.title = "tree scan, then add";
  s.source = "scan/01_block_scan.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
