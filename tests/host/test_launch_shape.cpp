// The launch planners (reduction/launch_shape.hpp) on GPUs described by hand: what a
// reader's T4, RTX 3090, RTX 4090 or A100 would get, and that an H100 and an H200 get
// exactly the grids recorded in the committed results.
//
// Per-SM limits (threads, blocks) are compute-capability facts: the CUDA C++ Programming
// Guide's table "Technical Specifications per Compute Capability" (7.5: 1,024 threads and
// 16 blocks; 8.0 and 9.0: 2,048 and 32; 8.6: 1,536 and 16; 8.9: 1,536 and 24), which
// common/sm_limits.hpp also holds. SM counts and L2 sizes are product facts, from NVIDIA's
// architecture whitepapers (Turing: T4 40 SMs, 4 MB L2; Ampere GA100: A100 108 SMs, 40 MB
// L2; Ampere GA102: RTX 3090 82 SMs, 6 MB L2; Ada: RTX 4090 128 SMs, 72 MB L2) and, for the
// H100 and H200, from the metadata of the committed results (132 SMs; l2_bytes).
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_info.hpp"
#include "reduction/16_reproducible_order.hpp"
#include "reduction/grid.hpp"
#include "reduction/launch_shape.hpp"
#include "sm_limits.hpp"
#include "test_files.hpp"
#include "timing.hpp"

namespace ro = reduction::reproducible;
namespace shape = reduction::shape;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

common::DeviceInfo described(const char* name, int major, int minor, int sms, int threads_per_sm, int blocks_per_sm,
                             std::size_t l2_bytes, std::size_t shared_per_sm) {
  common::DeviceInfo d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sms;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = threads_per_sm;
  d.max_blocks_per_sm = blocks_per_sm;
  d.l2_bytes = l2_bytes;
  d.shared_mem_per_sm = shared_per_sm;
  d.shared_mem_per_block = 48 * 1024;
  d.cluster_launch = major >= 9;
  return d;
}

common::DeviceInfo t4() { return described("Tesla T4", 7, 5, 40, 1024, 16, 4 * kMiB, 64 * 1024); }
common::DeviceInfo rtx3090() { return described("GeForce RTX 3090", 8, 6, 82, 1536, 16, 6 * kMiB, 100 * 1024); }
common::DeviceInfo rtx4090() { return described("GeForce RTX 4090", 8, 9, 128, 1536, 24, 72 * kMiB, 100 * 1024); }
common::DeviceInfo a100() { return described("A100-SXM4-40GB", 8, 0, 108, 2048, 32, 40 * kMiB, 164 * 1024); }
common::DeviceInfo h100() { return described("H100 80GB HBM3", 9, 0, 132, 2048, 32, 52428800, 228 * 1024); }
common::DeviceInfo h200() { return described("H200", 9, 0, 132, 2048, 32, 62914560, 228 * 1024); }

std::vector<common::DeviceInfo> all_devices() { return {t4(), rtx3090(), rtx4090(), a100(), h100(), h200()}; }

// Occupancy answers to try: one block, a full SM of threads, and more than any SM holds
// (what no real occupancy API answers, which the planners must still bound).
std::vector<int> occupancies(const common::DeviceInfo& d, int block) { return {1, d.max_threads_per_sm / block, 64}; }

const std::vector<int> kBlocks{64, 128, 256, 512, 1024};
const std::vector<std::size_t> kSizes{1,
                                      1000,
                                      std::size_t{1} << 15,
                                      std::size_t{1} << 20,
                                      3000001,
                                      std::size_t{1} << 24,
                                      std::size_t{1} << 28,
                                      std::size_t{1} << 30};

}  // namespace

TEST_CASE("the per-SM limits of common/sm_limits.hpp match the described GPUs", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    INFO(d.name);
    const int arch = d.cc_major * 10 + d.cc_minor;
    CHECK(common::max_threads_for_arch(arch) == d.max_threads_per_sm);
    CHECK(common::max_blocks_for_arch(arch) == d.max_blocks_per_sm);
  }
  CHECK(common::max_threads_for_arch(120) == 1536);  // Blackwell GeForce (12.0)
  CHECK(common::max_blocks_for_arch(100) == 32);     // Blackwell data centre (10.0)
}

TEST_CASE("one wave is SMs x resident blocks, and never more blocks per SM than the SM holds", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    for (int block : kBlocks) {
      for (int occupancy : occupancies(d, block)) {
        INFO(d.name << ", block " << block << ", occupancy answer " << occupancy);
        const int per_sm = shape::resident_per_sm(d, block, occupancy);
        CHECK(per_sm >= 1);
        CHECK(per_sm <= d.max_blocks_per_sm);
        CHECK(per_sm * block <= d.max_threads_per_sm);
        CHECK(per_sm <= std::max(occupancy, 1));
        CHECK(shape::one_wave(d, block, occupancy) ==
              static_cast<std::size_t>(per_sm) * static_cast<std::size_t>(d.sm_count));
      }
    }
  }
  // The examples the chapters use: 256-thread blocks filling each SM.
  CHECK(shape::one_wave(t4(), 256, 4) == 160);
  CHECK(shape::one_wave(rtx3090(), 256, 6) == 492);
  CHECK(shape::one_wave(rtx4090(), 256, 6) == 768);
  CHECK(shape::one_wave(a100(), 256, 8) == 864);
  CHECK(shape::one_wave(h200(), 256, 8) == 1056);
  // Small blocks: the T4's 16 block slots bind before its 1,024 threads do...
  CHECK(shape::resident_per_sm(t4(), 64, 16) == 16);
  CHECK(shape::resident_per_sm(t4(), 32, 32) == 16);
  // ... and an sm_86 card's 1,536 threads hold 3 blocks of 512 where an H200 holds 4.
  CHECK(shape::resident_per_sm(rtx3090(), 512, 4) == 3);
  CHECK(shape::resident_per_sm(h200(), 512, 4) == 4);
  // A limit the description does not know (0) bounds nothing.
  common::DeviceInfo unknown;
  unknown.sm_count = 10;
  CHECK(shape::resident_per_sm(unknown, 256, 12) == 12);
}

TEST_CASE("a one-wave grid has work for every block and is no larger than one wave", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    for (int block : kBlocks) {
      for (int occupancy : occupancies(d, block)) {
        for (std::size_t n : kSizes) {
          const std::size_t per_block = static_cast<std::size_t>(block) * 4;
          INFO(d.name << ", block " << block << ", occupancy " << occupancy << ", n " << n);
          const std::size_t grid = shape::wave_grid(d, block, occupancy, n, per_block);
          const std::size_t wave = shape::one_wave(d, block, occupancy);
          CHECK(grid >= 1);
          CHECK(grid <= wave);
          CHECK(grid <= std::max<std::size_t>(1, shape::div_up(n, per_block)));
          // Either every resident block runs or each block's slice is no larger than per_block.
          CHECK((grid == wave || grid * per_block >= n));
          // Stages 06-12 and 17 call reduction::resident_grid with the SM count and the
          // occupancy API's answer, which never exceeds the SM's limits: the same grid.
          const int per_sm = shape::resident_per_sm(d, block, occupancy);
          CHECK(reduction::resident_grid(per_sm, d.sm_count, n, per_block) == grid);
        }
      }
    }
  }
}

TEST_CASE("the single-pass grid (stages 13 and 14) stays within the SM and gives each thread two float4s",
          "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    for (int block : kBlocks) {
      for (int occupancy : occupancies(d, block)) {
        for (std::size_t n : kSizes) {
          INFO(d.name << ", block " << block << ", occupancy " << occupancy << ", n " << n);
          const unsigned grid = shape::ticket_grid(d, n, block, occupancy);
          CHECK(grid >= 1);
          // Threads per SM: at most the measured cap (1,536) and at most what the SM holds,
          // except that one block of more than 1,536 threads still runs.
          const std::size_t per_sm = shape::div_up(grid, static_cast<std::size_t>(d.sm_count));
          CHECK(per_sm * block <= std::max<std::size_t>(std::min(1536, d.max_threads_per_sm), block));
          // No thread with fewer than kMinVectorsPerThread float4s, unless one block is all there is.
          if (grid > 1)
            CHECK(static_cast<std::size_t>(grid) * block * shape::kMinVectorsPerThread * 4 <= n + 8 * block);
        }
      }
    }
  }
  // At 2^24 with 512-thread blocks: 3 per SM where a full SM holds 3 or 4 of them, 2 on a T4.
  const std::size_t n = std::size_t{1} << 24;
  CHECK(shape::ticket_grid(h200(), n, 512, 4) == 396);
  CHECK(shape::ticket_grid(rtx4090(), n, 512, 3) == 384);
  CHECK(shape::ticket_grid(a100(), n, 512, 4) == 324);
  CHECK(shape::ticket_grid(t4(), n, 512, 2) == 80);
}

TEST_CASE("stage 16's teams cover every tile and fit in one wave", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    for (int block : {128, 256, 512, 1024}) {
      const std::size_t teams_per_block = static_cast<std::size_t>(block / 128);
      for (int occupancy : occupancies(d, block)) {
        for (std::size_t tiles :
             {std::size_t{1}, std::size_t{33}, std::size_t{1024}, std::size_t{8192}, std::size_t{32768}}) {
          INFO(d.name << ", block " << block << ", occupancy " << occupancy << ", tiles " << tiles);
          const std::size_t grid = shape::team_grid(d, block, occupancy, tiles, teams_per_block);
          const std::size_t wave = shape::one_wave(d, block, occupancy);
          const std::size_t rounds = shape::div_up(tiles, wave * teams_per_block);
          CHECK(grid >= 1);
          CHECK(grid <= wave);
          CHECK(grid * teams_per_block * rounds >= tiles);                     // every tile has a team
          CHECK((grid - 1) * teams_per_block < shape::div_up(tiles, rounds));  // no block without a tile
        }
      }
    }
  }
}

TEST_CASE("stage 18's grid is one wave, or whole rounds when a thread has few", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    for (int block : kBlocks) {
      for (int occupancy : occupancies(d, block)) {
        for (std::size_t n : kSizes) {
          if (n < 4) continue;
          INFO(d.name << ", block " << block << ", occupancy " << occupancy << ", n " << n);
          const unsigned grid = shape::stream_order_grid(d, n, block, occupancy, 4, 4);
          const std::size_t wave = shape::one_wave(d, block, occupancy);
          CHECK(grid >= 1);
          CHECK(grid <= wave);
          const std::size_t per_round = static_cast<std::size_t>(block) * 4;  // float4s a block takes per round
          const std::size_t rounds = shape::div_up(n / 4, static_cast<std::size_t>(grid) * per_round);
          if (grid < wave) CHECK(rounds <= 4);
        }
      }
    }
  }
}

TEST_CASE("clusters (stage 15) are refused below compute capability 9.0, with the reason", "[launch_shape]") {
  for (const common::DeviceInfo& d : {t4(), rtx3090(), rtx4090(), a100()}) {
    INFO(d.name);
    const std::string why = shape::cluster_refusal(d, 80);
    CHECK(why.find("need compute capability 9.0; this GPU has " + d.compute_capability()) != std::string::npos);
    CHECK(why.find("stage 14's path") != std::string::npos);
    CHECK(shape::cluster_refusal(d, 90) == why);  // a build with sm_90 code does not help an older GPU
  }
  CHECK(shape::cluster_refusal(h100(), 90).empty());
  CHECK(shape::cluster_refusal(h200(), 100).empty());
  const std::string old_build = shape::cluster_refusal(h200(), 80);
  CHECK(old_build.find("compiled for compute capability 8.0") != std::string::npos);
  common::DeviceInfo no_clusters = h100();
  no_clusters.cluster_launch = false;
  CHECK(shape::cluster_refusal(no_clusters, 90).find("does not launch clusters") != std::string::npos);
}

TEST_CASE("the L2 flush buffer is twice each GPU's L2", "[launch_shape]") {
  for (const common::DeviceInfo& d : all_devices()) {
    INFO(d.name);
    CHECK(common::l2_flush_bytes(d.l2_bytes) == 2 * d.l2_bytes);
  }
  CHECK(common::l2_flush_bytes(h200().l2_bytes) == 120 * kMiB);
  CHECK(common::l2_flush_bytes(t4().l2_bytes) == 8 * kMiB);
  CHECK(common::l2_flush_bytes(0) == 4 * kMiB);  // an L2 size that reads 0 still gets a buffer
}

namespace {

// (key, block, grid) of every row of a committed ladder CSV that records a grid.
struct GridRow {
  std::string key;
  int block = 0;
  unsigned grid = 0;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

std::vector<GridRow> committed_grids(const std::string& relative, std::size_t* n) {
  std::ifstream in(test_support::repo_path(relative));
  REQUIRE(in);
  std::string line;
  std::vector<std::string> header;
  std::vector<GridRow> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = split_csv(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    if (row["grid"].empty() || row["block"] == "-") continue;
    *n = std::stoull(row["n"]);
    rows.push_back({row["key"], std::stoi(row["block"]), static_cast<unsigned>(std::stoul(row["grid"]))});
  }
  return rows;
}

// The stage's planner on `d` as its plan() calls it (per block: 06 block elements, 07-11
// 4 x block, 12 block x 4 float4s, 17 block x 8 float4s of n / 4), given the occupancy
// API's answer for its kernel; 0 for a row this test does not plan.
unsigned planned_grid(const std::string& key, const common::DeviceInfo& d, std::size_t n, int block, int occupancy) {
  const std::size_t b = static_cast<std::size_t>(block);
  const auto one_wave = [&](std::size_t count, std::size_t per_block) {
    return static_cast<unsigned>(reduction::resident_grid(occupancy, d.sm_count, count, per_block));
  };
  if (key == "06") return one_wave(n, b);
  if (key >= "07" && key <= "11") return one_wave(n, b * 4);
  if (key == "12") return one_wave(n, b * 4 * 4);
  if (key == "13" || key == "14" || key == "15") return shape::ticket_grid(d, n, block, occupancy);
  if (key == "16")
    return static_cast<unsigned>(shape::team_grid(d, block, occupancy, ro::tile_count(n), b / ro::kTeam));
  if (key == "17") return one_wave(n / 4, b * 8);
  if (key == "18") return shape::stream_order_grid(d, n, block, occupancy, 4, 4);
  return 0;
}

}  // namespace

// The grids on an H100 and an H200 are the ones the committed results were measured with:
// the planners read the device, and the Hopper descriptions give the same shapes as before.
// The occupancy API's answers on Hopper, per stage at its default block: 8 blocks of 256
// threads (a full SM) for 06-11 and 17, 6 for stage 12 (its registers), 4 of 512 for 13-15
// and 18, 4 of 256 for stage 16's tiled kernel.
TEST_CASE("the H100 and H200 descriptions give the grids in the committed results", "[launch_shape]") {
  const std::map<std::string, int> hopper_occupancy{{"06", 8}, {"07", 8}, {"08", 8}, {"09", 8}, {"10", 8},
                                                    {"11", 8}, {"12", 6}, {"13", 4}, {"14", 4}, {"15", 4},
                                                    {"16", 4}, {"17", 8}, {"18", 4}};
  int compared = 0;
  for (const auto& [dir, device] : {std::pair<std::string, common::DeviceInfo>{"h200", h200()}, {"h100", h100()}}) {
    for (const char* size : {"2p24", "2p28", "2p30"}) {
      std::size_t n = 0;
      const std::string file = "results/" + dir + "/reduce_" + size + ".csv";
      for (const GridRow& row : committed_grids(file, &n)) {
        const auto occ = hopper_occupancy.find(row.key);
        if (occ == hopper_occupancy.end()) continue;  // baselines and the library plan for themselves
        if (row.key == "15") REQUIRE(n > std::size_t{16} * 512 * 4 * 4);  // past one cluster: stage 14's plan
        INFO(file << ", stage " << row.key << ", block " << row.block);
        CHECK(planned_grid(row.key, device, n, row.block, occ->second) == row.grid);
        ++compared;
      }
    }
  }
  CHECK(compared >= 60);  // 13 stages x 3 sizes x 2 GPUs, less rows without a grid
}
