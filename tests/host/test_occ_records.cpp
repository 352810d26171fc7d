// 01_thread_hierarchy's record checks and summary, on hand-made records.
#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "thread_records.hpp"

using occupancy::ThreadRecord;

namespace {

// What a well-behaved launch would record: warps numbered in index order, every lane of
// a warp reading the same clocks, block b on SM b % sms.
std::vector<ThreadRecord> ideal_records(std::uint32_t grid, std::uint32_t block, std::uint32_t sms) {
  std::vector<ThreadRecord> out;
  const std::uint32_t warps_per_block = (block + 31) / 32;
  for (std::uint32_t b = 0; b < grid; ++b)
    for (std::uint32_t t = 0; t < block; ++t) {
      ThreadRecord r{};
      r.global_thread = static_cast<std::uint64_t>(b) * block + t;
      r.block = b;
      r.warp = t / 32;
      r.lane = t % 32;
      r.hw_lane = r.lane;
      r.smid = b % sms;
      r.warp_ticket = b * warps_per_block + r.warp;
      r.clock = 1000 + 10 * r.warp_ticket;
      r.globaltimer = 5000 + 100 * r.warp_ticket;
      out.push_back(r);
    }
  return out;
}

}  // namespace

TEST_CASE("check_coverage accepts one consistent record per thread", "[occupancy][records]") {
  for (const auto& [grid, block] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 1}, {3, 100}, {8, 256}}) {
    auto records = ideal_records(grid, block, 4);
    std::reverse(records.begin(), records.end());  // the order of the records does not matter
    const auto rep = occupancy::check_coverage(records, grid, block);
    INFO(rep.detail);
    CHECK(rep.ok);
    CHECK(rep.expected == static_cast<std::size_t>(grid) * block);
    CHECK(rep.detail.empty());
  }
}

TEST_CASE("check_coverage catches missing, duplicated, unwritten and inconsistent records", "[occupancy][records]") {
  const auto good = ideal_records(4, 64, 2);

  SECTION("a thread recorded twice and another not at all") {
    auto r = good;
    r[10] = r[11];
    const auto rep = occupancy::check_coverage(r, 4, 64);
    CHECK_FALSE(rep.ok);
    CHECK(rep.missing == 1);
    CHECK(rep.duplicates == 1);
    CHECK(rep.detail.find("thread 10 has no record") != std::string::npos);
  }
  SECTION("a record never written (the all-ones poison) is out of range") {
    auto r = good;
    std::fill_n(reinterpret_cast<unsigned char*>(&r[5]), sizeof(ThreadRecord), 0xFF);
    const auto rep = occupancy::check_coverage(r, 4, 64);
    CHECK_FALSE(rep.ok);
    CHECK(rep.out_of_range == 1);
    CHECK(rep.missing == 1);
  }
  SECTION("one record too few") {
    auto r = good;
    r.pop_back();
    const auto rep = occupancy::check_coverage(r, 4, 64);
    CHECK_FALSE(rep.ok);
    CHECK(rep.missing == 1);
  }
  SECTION("a wrong lane, a wrong block, a hardware lane that disagrees") {
    auto r = good;
    r[3].lane = 4;
    r[70].block = 0;
    r[100].hw_lane = 7;
    const auto rep = occupancy::check_coverage(r, 4, 64);
    CHECK_FALSE(rep.ok);
    CHECK(rep.inconsistent == 3);
    CHECK(rep.missing == 0);
  }
  SECTION("records of a different launch shape") {
    CHECK_FALSE(occupancy::check_coverage(good, 2, 128).ok);  // same count, other blocks
    CHECK_FALSE(occupancy::check_coverage(good, 5, 64).ok);   // one block missing
  }
}

TEST_CASE("summary of an in-order launch", "[occupancy][records]") {
  const auto records = ideal_records(8, 100, 4);  // 4 warps per block, the last one partial
  const auto s = occupancy::summarize_records(records, 8, 100);
  CHECK(s.threads == 800);
  CHECK(s.warps == 32);
  CHECK(s.warps_one_sm == 32);
  CHECK(s.warps_same_clock == 32);
  CHECK(s.warps_same_globaltimer == 32);
  CHECK(s.lanes_match_hardware == 800);
  CHECK(s.blocks_one_sm == 8);
  CHECK(s.blocks_out_of_order == 0);
  CHECK(s.blocks_with_warps_out_of_order == 0);
  CHECK(s.start_order == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(s.start_sm == std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(s.start_spread_ns == 100 * 4 * 7);  // block 7's first warp took ticket 28
  CHECK(s.sms_used == 4);
  CHECK(s.min_blocks_per_sm == 2);
  CHECK(s.max_blocks_per_sm == 2);

  const std::string text = occupancy::format_summary(s, 3, 132);
  CHECK(text.find("first 3 blocks in start order (block@SM): 0@0 1@1 2@2") != std::string::npos);
  CHECK(text.find("4 of 132 SMs ran blocks, 2 blocks each") != std::string::npos);
}

TEST_CASE("summary of a launch whose blocks and warps start out of order", "[occupancy][records]") {
  auto records = ideal_records(4, 64, 2);  // 2 warps per block, tickets 0..7
  // Start order of warps: block 2 first, then block 0, block 3, block 1; inside block 3
  // warp 1 starts before warp 0.
  const std::uint32_t tickets[4][2] = {{2, 3}, {7, 6}, {0, 1}, {5, 4}};
  for (auto& r : records) {
    r.warp_ticket = tickets[r.block][r.warp];
    r.globaltimer = 100 * r.warp_ticket;
  }
  records[1].globaltimer += 1;  // block 0, warp 0: one lane read a different %globaltimer
  records[64].smid = 9;         // block 1, warp 0: one lane on another SM
  records[40].clock += 1;       // block 0, warp 1: one lane read a different clock64
  const auto s = occupancy::summarize_records(records, 4, 64);
  CHECK(s.start_order == std::vector<std::uint32_t>{2, 0, 3, 1});
  CHECK(s.blocks_out_of_order == 4);             // no block started at its own index's position
  CHECK(s.blocks_with_warps_out_of_order == 2);  // block 1 (7, 6) and block 3 (5, 4)
  CHECK(s.warps_same_globaltimer == 7);
  CHECK(s.warps_one_sm == 7);
  CHECK(s.warps_same_clock == 7);
  CHECK(s.blocks_one_sm == 3);
  CHECK(s.start_spread_ns == 100 * 6);  // block 2 at ticket 0, block 1 at ticket 6
}

TEST_CASE("raw lines carry every field", "[occupancy][records]") {
  ThreadRecord r{};
  r.global_thread = 70;
  r.block = 1;
  r.warp = 0;
  r.lane = 6;
  r.hw_lane = 6;
  r.smid = 17;
  r.warp_ticket = 3;
  r.clock = 123456789012ull;
  r.globaltimer = 1700000000000000000ull;
  CHECK(occupancy::raw_line(r) == "70 1 0 6 6 17 3 123456789012 1700000000000000000");
  CHECK(occupancy::raw_header().find("smid") != std::string::npos);
}
