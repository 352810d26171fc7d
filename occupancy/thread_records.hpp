// What 01_thread_hierarchy records for every thread, and the host-side analysis of it.
//
// The kernel writes one ThreadRecord per thread into device memory (no printf, so the
// order of output says nothing and nothing is lost); everything below is pure host
// code, tested on hand-made records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace occupancy {

struct ThreadRecord {
  std::uint64_t global_thread;  // blockIdx.x * blockDim.x + threadIdx.x
  std::uint64_t clock;          // clock64(): the SM's own cycle counter, comparable only within one SM
  std::uint64_t globaltimer;    // %globaltimer: nanoseconds, one clock for the whole GPU
  std::uint32_t block;          // blockIdx.x
  std::uint32_t warp;           // warp within the block: threadIdx.x / 32
  std::uint32_t lane;           // threadIdx.x % 32
  std::uint32_t hw_lane;        // %laneid as the hardware reports it
  std::uint32_t smid;           // %smid: the SM the thread ran on
  std::uint32_t warp_ticket;    // position of this thread's warp in the order warps reached the kernel's start
};

// Every thread [0, grid x block) recorded exactly once, with consistent indices.
struct CoverageReport {
  bool ok = false;
  std::size_t records = 0;
  std::size_t expected = 0;
  std::size_t missing = 0;       // thread indices with no record
  std::size_t duplicates = 0;    // thread indices with more than one record
  std::size_t out_of_range = 0;  // records whose thread index is >= grid x block (e.g. never written)
  std::size_t inconsistent = 0;  // records whose block / warp / lane disagree with the thread index
  std::string detail;            // first problems, empty when ok
};

CoverageReport check_coverage(const std::vector<ThreadRecord>& records, std::uint32_t grid, std::uint32_t block,
                              int warp_size = 32);

struct HierarchySummary {
  std::uint32_t grid = 0;
  std::uint32_t block = 0;
  std::size_t threads = 0;
  std::size_t warps = 0;
  // Lanes of a warp run together.
  std::size_t warps_one_sm = 0;            // all lanes on one SM
  std::size_t warps_same_clock = 0;        // all lanes read the same clock64
  std::size_t warps_same_globaltimer = 0;  // all lanes read the same %globaltimer
  std::size_t lanes_match_hardware = 0;    // threadIdx.x % 32 == %laneid
  // Blocks stay on one SM but start in no fixed order.
  std::size_t blocks_one_sm = 0;
  std::size_t blocks_out_of_order = 0;             // start position != block index
  std::size_t blocks_with_warps_out_of_order = 0;  // warps of the block started in another order than 0, 1, 2, ...
  std::vector<std::uint32_t> start_order;          // block indices in the order their first warp started
  std::vector<std::uint32_t> start_sm;             // the SM of each block in start_order
  std::uint64_t start_spread_ns = 0;               // last block start - first block start (%globaltimer)
  // How the blocks were spread over SMs.
  std::size_t sms_used = 0;
  std::size_t min_blocks_per_sm = 0;  // over the SMs used
  std::size_t max_blocks_per_sm = 0;
};

// Requires records that passed check_coverage.
HierarchySummary summarize_records(const std::vector<ThreadRecord>& records, std::uint32_t grid, std::uint32_t block,
                                   int warp_size = 32);

// The readable report 01_thread_hierarchy prints. `first` is how many blocks of the
// start order to list; `sm_count` is the device's SM count (0 if unknown).
std::string format_summary(const HierarchySummary& s, std::size_t first, int sm_count);

// One record as a line for --raw, and its header.
std::string raw_header();
std::string raw_line(const ThreadRecord& r);

}  // namespace occupancy
