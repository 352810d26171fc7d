// histogram/ on the GPU: every stage and CUB, every input, both histograms, at sizes
// of 1 value up, around each stage's path limits (the 16-byte head and tail, the
// two-loads step, the grid's threads) and at every misalignment of the input; the
// output poisoned before each run and every count compared exactly. The one-launch
// stage again and again on one scratch. The runner end to end, with its CSV.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_buffer.hpp"
#include "gpu_fixture.hpp"
#include "registry.hpp"

namespace hg = histogram;

namespace {

// The input of one case on the device, `offset` bytes past a 256-byte boundary.
struct DeviceInput {
  common::DeviceBuffer<unsigned char> buffer;
  const void* in = nullptr;
  std::vector<unsigned> want;
};

DeviceInput upload(hg::Input input, hg::Bins bins, std::size_t n, unsigned offset) {
  const auto values = hg::make_values(input, bins, 11, n);
  DeviceInput d{common::DeviceBuffer<unsigned char>(values.size() + 16), nullptr,
                std::vector<unsigned>(hg::bin_count(bins), 0)};
  common::copy_to_device(d.buffer.get() + offset, values.data(), values.size());
  d.in = d.buffer.get() + offset;
  hg::count_values(values, bins, 0, n, d.want);
  return d;
}

// Every stage (and CUB) on one input: `launches` checked runs each, all exact.
void check_all_stages(hg::Input input, hg::Bins bins, std::size_t n, unsigned offset, int launches = 1) {
  const DeviceInput d = upload(input, bins, n, offset);
  common::DeviceBuffer<unsigned> hist(hg::bin_count(bins));
  for (const auto& s : hg::registry()) {
    const hg::PreparedStage prepared(s, d.in, n, bins, hist.get(), gpu_test::device(), gpu_test::stream());
    for (int k = 0; k < launches; ++k) {
      INFO(hg::stage_key(s) << " " << hg::input_name(input) << " bins " << hg::bin_count(bins) << " n " << n
                            << " offset " << offset << " launch " << k + 1 << " of " << launches);
      const std::string verdict = hg::compare_counts(prepared.checked_run(), d.want);
      INFO(verdict);
      CHECK(verdict.empty());
    }
  }
}

const hg::Bins kBins[] = {hg::Bins::b256, hg::Bins::b4096};

}  // namespace

TEST_CASE("histogram: every stage, input and histogram at small and odd sizes", "[gpu][histogram]") {
  for (const hg::Bins bins : kBins)
    for (const hg::Input input : hg::all_inputs())
      for (const std::size_t n : {1ul, 2ul, 7ul, 8ul, 9ul, 15ul, 16ul, 17ul, 31ul, 32ul, 33ul, 255ul, 4095ul, 4096ul,
                                  4097ul, 65537ul, (1ul << 20) + 3})
        check_all_stages(input, bins, n, 0);
}

TEST_CASE("histogram: every misalignment of the input, head and tail", "[gpu][histogram]") {
  for (const hg::Bins bins : kBins)
    for (unsigned offset = 0; offset < 16; offset += static_cast<unsigned>(hg::value_bytes(bins)))
      for (const std::size_t n : {1ul, 3ul, 15ul, 16ul, 17ul, 33ul, 4095ul, (1ul << 20) + 3})
        for (const hg::Input input : hg::all_inputs()) check_all_stages(input, bins, n, offset);
}

TEST_CASE("histogram: around each stage's grid, where the loop's steps and the tail meet", "[gpu][histogram]") {
  // A stage's threads (grid x block, its grid when the input is large) take 16 bytes
  // each per step, two steps at a time: sizes at one and two full steps of every thread,
  // a value either side, and one vector and a value short.
  for (const hg::Bins bins : kBins) {
    const std::size_t per_vector = 16 / hg::value_bytes(bins);
    for (const auto& s : hg::registry()) {
      if (s.kind != hg::Kind::stage) continue;
      const hg::Plan plan = s.plan(std::size_t{1} << 31, bins, gpu_test::device());
      const std::size_t threads = std::size_t{plan.grid} * static_cast<std::size_t>(plan.block);
      for (const std::size_t steps : {1ul, 2ul})
        for (const long delta : {-static_cast<long>(per_vector) - 1, -1l, 0l, 1l}) {
          const std::size_t n = threads * per_vector * steps + static_cast<std::size_t>(delta);
          check_all_stages(hg::Input::skewed, bins, n, 0);
          check_all_stages(hg::Input::uniform, bins, n, 5 % hg::value_bytes(bins) == 0 ? 5 : 6);
        }
    }
  }
}

TEST_CASE("histogram: the one-launch stage leaves its scratch ready, launch after launch", "[gpu][histogram]") {
  for (const hg::Bins bins : kBins)
    for (const std::size_t n : {1ul, 100003ul, (1ul << 22) + 1}) check_all_stages(hg::Input::one, bins, n, 2, 4);
}

TEST_CASE("histogram: 2^28 values, past the one-wave grid's many steps", "[gpu][histogram]") {
  check_all_stages(hg::Input::uniform, hg::Bins::b256, (std::size_t{1} << 28) + 7, 3);
  check_all_stages(hg::Input::skewed, hg::Bins::b4096, (std::size_t{1} << 27) + 5, 0);
}

TEST_CASE("histogram runner: a small sweep end to end, every row checked and in the CSV", "[gpu][histogram]") {
  const std::string csv = (std::filesystem::temp_directory_path() / "histogram_runner_test.csv").string();
  const char* argv[] = {"histogram", "--n", "1000,4099", "--input", "uniform,one", "--bins",   "4096",
                        "--offset",  "2",   "--reps",    "3",       "--csv",       csv.c_str()};
  REQUIRE(hg::histogram_main(static_cast<int>(sizeof(argv) / sizeof(argv[0])), argv) == 0);
  std::ifstream in(csv);
  REQUIRE(in.good());
  std::string line;
  int rows = 0;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) continue;
    if (!header) {
      header = true;
      CHECK(line.find("median_us") != std::string::npos);
      continue;
    }
    ++rows;
    CHECK(line.find(",ok,every count exact") != std::string::npos);
  }
  CHECK(rows == 2 * 2 * static_cast<int>(hg::registry().size()));
  std::remove(csv.c_str());
}
