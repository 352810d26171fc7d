// The registry's consistency: the one list every program and script reads.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "measure.hpp"
#include "reduction/passes.hpp"
#include "reduction/registry.hpp"
#include "reduction/runner.hpp"
#include "test_files.hpp"

using reduction::Kind;
using reduction::registry;

TEST_CASE("stages come first, numbered 1, 2, 3, ... without gaps; baselines after them", "[registry]") {
  int expected = 1;
  bool in_baselines = false;
  for (const auto& s : registry()) {
    if (s.kind == Kind::baseline) {
      in_baselines = true;
      CHECK(s.number == 0);
      continue;
    }
    INFO(s.id);
    CHECK_FALSE(in_baselines);
    CHECK(s.number == expected++);
  }
  CHECK(expected > 3);
}

TEST_CASE("ids and keys are unique and every entry is complete", "[registry]") {
  std::set<std::string> ids, keys;
  for (const auto& s : registry()) {
    INFO(s.id);
    CHECK(ids.insert(s.id).second);
    CHECK(keys.insert(reduction::stage_key(s)).second);
    CHECK(s.plan != nullptr);
    CHECK(s.launch != nullptr);
    CHECK(std::string(s.title).size() > 0);
    CHECK(std::string(s.title).size() <= 26);  // fits the table
    CHECK(s.max_n > 0);
    if (s.blocks.configurable) {
      CHECK(s.blocks.min >= 1);
      CHECK((s.blocks.max == 0 || s.blocks.max >= s.blocks.min));
      CHECK(reduction::block_size_error(s, s.blocks.preferred, 1024).empty());
    }
  }
}

TEST_CASE("every stage's source file and chapter exist, and the file name carries its number", "[registry]") {
  for (const auto& s : registry()) {
    INFO(s.id);
    CHECK(std::filesystem::exists(test_support::repo_path(s.source)));
    CHECK(std::filesystem::exists(test_support::repo_path(s.chapter)));
    if (s.kind == Kind::stage) {
      const std::string file = std::filesystem::path(s.source).filename().string();
      CHECK(file.rfind(reduction::stage_key(s) + "_", 0) == 0);
    }
  }
}

TEST_CASE("every reduction/NN_name.cu, which the build compiles as a stage, is registered", "[registry]") {
  // The build globs these files (reduction/CMakeLists.txt); a file without a registry row
  // would be compiled and never run.
  std::set<std::string> registered;
  for (const auto& s : registry())
    if (s.kind == Kind::stage) registered.insert(std::filesystem::path(s.source).filename().string());
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(test_support::repo_path("reduction"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".cu" && name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
        std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_')
      files.insert(name);
  }
  CHECK(files == registered);
}

TEST_CASE("find_stage by number, zero-padded number and id", "[registry]") {
  CHECK(reduction::find_stage("1") == &registry()[0]);
  CHECK(reduction::find_stage("01") == &registry()[0]);
  CHECK(reduction::find_stage(registry()[0].id) == &registry()[0]);
  CHECK(reduction::find_stage("cub") != nullptr);
  CHECK(reduction::find_stage("99") == nullptr);
  CHECK(reduction::find_stage("foo") == nullptr);
}

TEST_CASE("select_stages: lists, ranges, groups, registry order, clear refusals", "[registry]") {
  const auto sel = reduction::select_stages("cub,2,1");
  REQUIRE(sel.size() == 3);
  CHECK(sel[0]->number == 1);
  CHECK(sel[1]->number == 2);
  CHECK(std::string(sel[2]->id) == "cub");
  CHECK(reduction::select_stages("all").size() == registry().size());
  CHECK(reduction::select_stages("1-3").size() == 3);
  for (const auto* s : reduction::select_stages("baselines")) CHECK(s->kind == Kind::baseline);
  for (const auto* s : reduction::select_stages("stages")) CHECK(s->kind == Kind::stage);
  const auto message = [](const std::string& spec) {
    try {
      reduction::select_stages(spec);
    } catch (const common::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message("99").find("unknown stage '99'") != std::string::npos);
  CHECK(message("foo").find("unknown stage 'foo'") != std::string::npos);
  CHECK(message("foo").find("cub") != std::string::npos);  // lists what exists
  CHECK(message("3-1").find("not a range") != std::string::npos);
  CHECK(message(",").find("names no stage") != std::string::npos);
}

TEST_CASE("block sizes: powers of two up to the device limit, with a sentence otherwise", "[registry]") {
  const auto& s = *reduction::find_stage("02");
  CHECK(reduction::block_size_error(s, 32, 1024).empty());
  CHECK(reduction::block_size_error(s, 1024, 1024).empty());
  const std::string e100 = reduction::block_size_error(s, 100, 1024);
  CHECK(e100.find("block size 100 is not accepted by stage 02") != std::string::npos);
  CHECK(e100.find("powers of two from 32 to 1024") != std::string::npos);
  CHECK_FALSE(reduction::block_size_error(s, 2048, 1024).empty());
  CHECK_FALSE(reduction::block_size_error(s, 16, 1024).empty());
  CHECK(reduction::block_size_error(*reduction::find_stage("cub"), 100, 1024).empty());  // takes no block size
}

TEST_CASE("the listing for scripts has one tab-separated line per entry", "[registry]") {
  std::istringstream listing(reduction::registry_listing());
  std::string line;
  std::size_t lines = 0;
  while (std::getline(listing, line)) {
    const auto& s = registry()[lines++];
    CHECK(line.rfind(reduction::stage_key(s) + "\t" + s.id + "\t", 0) == 0);
  }
  CHECK(lines == registry().size());
}

TEST_CASE("a run that does not fit in GPU memory is refused with the bytes needed and free", "[registry]") {
  common::MemoryNeed need;
  need.add("input", std::size_t{1} << 38).add("scratch", 1000).add("L2 flush buffer", 2000);
  const std::string msg = need.shortfall("n = 2^36", std::size_t{1} << 30, "Test GPU");
  CHECK(need.total() == (std::size_t{1} << 38) + 3000 + (std::size_t{1} << 20));
  CHECK(msg == "n = 2^36 needs " + std::to_string(need.total()) +
                   " bytes of GPU memory (input 274877906944, scratch 1000, L2 flush buffer 2000, output and slack "
                   "1048576) but only 1073741824 bytes are free on Test GPU.");
  CHECK(common::MemoryNeed().add("input", 4096).shortfall("n = 1024", std::size_t{1} << 30, "x").empty());
}

TEST_CASE("Passes: one launch per pass, each reading the last one's output, alternating buffers, the last into out",
          "[registry]") {
  float scratch[64];
  float out = 0.0f;
  const float* in = reinterpret_cast<const float*>(0x1000);
  for (std::size_t per_block : {std::size_t{4}, std::size_t{256}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5}, std::size_t{16},
                          std::size_t{17}, std::size_t{64}, std::size_t{65}, std::size_t{1000}}) {
      INFO("n = " << n << ", per_block = " << per_block);
      reduction::StageArgs a;
      a.in = in;
      a.n = n;
      a.out = &out;
      a.scratch = scratch;
      std::vector<reduction::Pass> passes;
      for (const reduction::Pass& p : reduction::Passes(a, per_block)) passes.push_back(p);
      REQUIRE(!passes.empty());
      CHECK(passes.front().src == in);
      CHECK(passes.front().m == n);
      CHECK(passes.back().dst == &out);
      CHECK(passes.back().blocks == 1);
      float* const second = scratch + reduction::ceil_div(n, per_block);
      for (std::size_t i = 0; i < passes.size(); ++i) {
        const auto& p = passes[i];
        CHECK(p.blocks == reduction::ceil_div(p.m, per_block));
        if (i > 0) {
          CHECK(p.src == passes[i - 1].dst);
          CHECK(p.m == passes[i - 1].blocks);
        }
        if (i + 1 < passes.size()) CHECK(p.dst == (i % 2 == 0 ? scratch : second));
      }
    }
  }
}

TEST_CASE("stages 02-05 refuse a block size their tree cannot take, before touching the GPU", "[registry]") {
  // The registry accepts only powers of two for them; a launcher called directly with
  // another size throws instead of summing some element twice or never.
  for (const char* key : {"02", "03", "04", "05"}) {
    const reduction::Stage* s = reduction::find_stage(key);
    REQUIRE(s != nullptr);
    reduction::StageArgs a;
    a.n = 1000;
    a.block = 96;
    INFO("stage " << key);
    CHECK_THROWS_AS(s->launch(a), std::invalid_argument);
  }
}
