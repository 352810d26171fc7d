// histogram/ without a GPU: the registry against the files, stage selection, the
// options' refusals, the inputs and the host reference on cases worked out by hand, and
// the count check's verdicts.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "registry.hpp"
#include "test_files.hpp"

namespace hg = histogram;

TEST_CASE("histogram registry: numbered stages in order, one per file, then cub", "[host][histogram]") {
  const auto& all = hg::registry();
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(test_support::repo_path("histogram"))) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, std::regex("[0-9][0-9]_.*\\.cu"))) files.insert("histogram/" + name);
  }
  std::set<std::string> registered;
  int expected_number = 1;
  for (const auto& s : all) {
    INFO(s.id);
    CHECK(std::filesystem::is_regular_file(test_support::repo_path(s.source)));
    CHECK(std::string(s.chapter) == "chapters/27_histogram.md");
    if (s.kind == hg::Kind::stage) {
      CHECK(s.number == expected_number++);
      const std::string prefix = "histogram/" + hg::stage_key(s) + "_" + s.id + ".cu";
      CHECK(std::string(s.source) == prefix);
      registered.insert(s.source);
    }
    CHECK(s.plan != nullptr);
    CHECK(s.launch != nullptr);
  }
  CHECK(registered == files);
  REQUIRE(all.back().kind == hg::Kind::baseline);
  CHECK(hg::stage_key(all.back()) == "cub");
  // The one-launch stage says so; the stages with a memset do not.
  CHECK(hg::find_stage("one_wave")->single_launch);
  CHECK_FALSE(hg::find_stage("05")->single_launch);
}

TEST_CASE("histogram stage selection: numbers, ids, ranges, groups; unknown names refused", "[host][histogram]") {
  CHECK(hg::find_stage("5") == hg::find_stage("05"));
  CHECK(hg::find_stage("05") == hg::find_stage("lane_banks"));
  CHECK(hg::find_stage("07") == nullptr);
  CHECK(hg::find_stage("") == nullptr);
  const auto range = hg::select_stages("6,3-4,cub");
  REQUIRE(range.size() == 4);
  CHECK(hg::stage_key(*range[0]) == "03");  // the registry's order, whatever was written
  CHECK(hg::stage_key(*range[3]) == "cub");
  CHECK(hg::select_stages("stages").size() + hg::select_stages("baselines").size() == hg::registry().size());
  CHECK_THROWS_AS(hg::select_stages("9"), common::UsageError);
  CHECK_THROWS_AS(hg::select_stages("4-2"), common::UsageError);
  CHECK_THROWS_AS(hg::select_stages(","), common::UsageError);
  const std::string listing = hg::registry_listing(hg::select_stages("01"));
  CHECK(listing ==
        "01\tglobal_atomics\tstage\tone global atomic per value\thistogram/01_global_atomics.cu\t"
        "chapters/27_histogram.md\n");
}

TEST_CASE("histogram options: inputs and bins", "[host][histogram]") {
  CHECK(hg::parse_inputs("one,uniform,one") == std::vector<hg::Input>{hg::Input::one, hg::Input::uniform});
  CHECK_THROWS_AS(hg::parse_inputs("zipf"), common::UsageError);
  CHECK_THROWS_AS(hg::parse_inputs(""), common::UsageError);
  CHECK(hg::parse_bins("256") == hg::Bins::b256);
  CHECK(hg::parse_bins("4096") == hg::Bins::b4096);
  for (const char* bad : {"0", "255", "512", "4096 ", "x"}) CHECK_THROWS_AS(hg::parse_bins(bad), common::UsageError);
}

TEST_CASE("histogram inputs: repeatable, prefixes of each other, the promised shapes", "[host][histogram]") {
  for (const hg::Bins bins : {hg::Bins::b256, hg::Bins::b4096})
    for (const hg::Input input : hg::all_inputs()) {
      INFO(hg::input_name(input) << " " << hg::bin_count(bins));
      const auto a = hg::make_values(input, bins, 7, 100003);
      const auto b = hg::make_values(input, bins, 7, 1000);
      REQUIRE(a.size() == 100003 * hg::value_bytes(bins));
      CHECK(std::equal(b.begin(), b.end(), a.begin()));
      CHECK(hg::make_values(input, bins, 7, 100003) == a);
      std::vector<unsigned> hist(hg::bin_count(bins), 0);
      hg::count_values(a, bins, 0, 100003, hist);
      const auto most = *std::max_element(hist.begin(), hist.end());
      const auto used = std::count_if(hist.begin(), hist.end(), [](unsigned c) { return c > 0; });
      if (input == hg::Input::one) {
        CHECK(hist[42] == 100003);
      } else if (input == hg::Input::skewed) {
        // Bin 0 holds u^8 < 1/256 (u < 2^-1: half the bytes) or u^8 < 1/4096 (u < 2^-1.5: 35 %).
        const double share = bins == hg::Bins::b256 ? 0.5 : 0.3536;
        CHECK(hist[0] > 100003 * (share - 0.03));
        CHECK(hist[0] < 100003 * (share + 0.03));
        CHECK(used > 20);
      } else {
        CHECK(used == static_cast<long>(hg::bin_count(bins)));
        CHECK(most < 100003 / hg::bin_count(bins) * 2 + 20);
      }
    }
  // Seeds differ.
  CHECK(hg::make_values(hg::Input::uniform, hg::Bins::b256, 1, 64) !=
        hg::make_values(hg::Input::uniform, hg::Bins::b256, 2, 64));
}

TEST_CASE("histogram reference: bytes, 16-bit values binned by v >> 4, ranges", "[host][histogram]") {
  const std::vector<unsigned char> bytes = {0, 255, 3, 3, 42, 0};
  std::vector<unsigned> h(256, 0);
  hg::count_values(bytes, hg::Bins::b256, 1, 5, h);  // 255, 3, 3, 42
  CHECK(h[255] == 1);
  CHECK(h[3] == 2);
  CHECK(h[42] == 1);
  CHECK(h[0] == 0);
  // Little-endian 16-bit values 0x0010 (bin 1), 0x000f (bin 0), 0xffff (bin 4095), 0x2a35 (bin 0x2a3).
  const std::vector<unsigned char> shorts = {0x10, 0x00, 0x0f, 0x00, 0xff, 0xff, 0x35, 0x2a};
  std::vector<unsigned> w(4096, 0);
  hg::count_values(shorts, hg::Bins::b4096, 0, 4, w);
  CHECK(w[1] == 1);
  CHECK(w[0] == 1);
  CHECK(w[4095] == 1);
  CHECK(w[0x2a3] == 1);
  // Counting in pieces gives what counting at once gives (the runner's sweep does this).
  const auto values = hg::make_values(hg::Input::skewed, hg::Bins::b4096, 3, 50001);
  std::vector<unsigned> once(4096, 0);
  std::vector<unsigned> pieces(4096, 0);
  hg::count_values(values, hg::Bins::b4096, 0, 50001, once);
  hg::count_values(values, hg::Bins::b4096, 0, 17, pieces);
  hg::count_values(values, hg::Bins::b4096, 17, 50001, pieces);
  CHECK(once == pieces);
}

TEST_CASE("histogram check: exact or a sentence naming the first wrong bin", "[host][histogram]") {
  const std::vector<unsigned> want = {1, 2, 3, 4};
  CHECK(hg::compare_counts(want, want).empty());
  CHECK(hg::compare_counts({1, 2, 4, 4}, want) == "bin 2 holds 4 instead of 3; 1 of 4 bins wrong");
  const std::string poisoned = hg::compare_counts({1, hg::kPoison, hg::kPoison, 4}, want);
  CHECK(poisoned.find("bin 1 holds") == 0);
  CHECK(poisoned.find("never written") != std::string::npos);
  CHECK(poisoned.find("2 of 4 bins wrong") != std::string::npos);
  CHECK_FALSE(hg::compare_counts({1, 2, 3}, want).empty());
}
