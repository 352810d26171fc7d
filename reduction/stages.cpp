// The registry: every stage and baseline, in the order of the chapters. This is the
// only list of stages in the project; the runner, the per-stage executables, the
// tests and the scripts (through `reduce --list`) all read it.
// Adding a stage: a new NN_name.cu with a describe_*() function, its declaration and
// its row below; the build finds the file by its name.
#include <algorithm>
#include <functional>
#include <sstream>

#include "cli.hpp"
#include "registry.hpp"
#include "selection.hpp"

namespace reduction {

Stage describe_naive_global();
Stage describe_shared_memory();
Stage describe_bitwise_and();
Stage describe_interleaved_addressing();
Stage describe_sequential_addressing();
Stage describe_grid_stride();
Stage describe_loads_in_flight();
Stage describe_warp_shuffle();
Stage describe_cooperative_groups();
Stage describe_loop_unrolling();
Stage describe_block_atomics();
Stage describe_vectorized();
Stage describe_last_block();
Stage describe_tagged_slots();
Stage describe_one_cluster();
Stage describe_reproducible();
Stage describe_compensated();

Stage describe_cub();
Stage describe_thrust();
Stage describe_one_thread();
Stage describe_atomic_per_element();
Stage describe_one_block();
Stage describe_single_pass_library();

const std::vector<Stage>& registry() {
  static const std::vector<Stage> stages = {
      describe_naive_global(),
      describe_shared_memory(),
      describe_bitwise_and(),
      describe_interleaved_addressing(),
      describe_sequential_addressing(),
      describe_grid_stride(),
      describe_loads_in_flight(),
      describe_warp_shuffle(),
      describe_cooperative_groups(),
      describe_loop_unrolling(),
      describe_block_atomics(),
      describe_vectorized(),
      describe_last_block(),
      describe_tagged_slots(),
      describe_one_cluster(),
      describe_reproducible(),
      describe_compensated(),

      describe_cub(),
      describe_thrust(),
      describe_one_thread(),
      describe_atomic_per_element(),
      describe_one_block(),
      describe_single_pass_library(),
  };
  return stages;
}

std::string stage_key(const Stage& s) {
  if (s.kind == Kind::baseline) return s.id;
  std::string key = std::to_string(s.number);
  return key.size() < 2 ? "0" + key : key;
}

int max_block_for(const Stage& s, int device_max_threads) {
  return s.blocks.max == 0 ? device_max_threads : std::min(s.blocks.max, device_max_threads);
}

std::string block_size_error(const Stage& s, int block, int device_max_threads) {
  if (!s.blocks.configurable) return "";
  const int hi = max_block_for(s, device_max_threads);
  const bool pow2 = block > 0 && (block & (block - 1)) == 0;
  if (block >= s.blocks.min && block <= hi && (pow2 || !s.blocks.powers_of_two)) return "";
  std::ostringstream msg;
  msg << "block size " << block << " is not accepted by stage " << stage_key(s) << " (" << s.id << "): it takes "
      << (s.blocks.powers_of_two ? "powers of two" : "block sizes") << " from " << s.blocks.min << " to " << hi
      << (s.blocks.max == 0 ? " (the device limit)" : "") << ".";
  return msg.str();
}

const Stage* find_stage(const std::string& key) {
  const auto& all = registry();
  bool numeric = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (numeric && key.size() <= 3) {
    const int number = std::stoi(key);
    for (const auto& s : all)
      if (s.kind == Kind::stage && s.number == number) return &s;
    return nullptr;
  }
  for (const auto& s : all)
    if (key == s.id) return &s;
  return nullptr;
}

namespace {

std::string known_keys() {
  std::string out;
  for (const auto& s : registry()) out += (out.empty() ? "" : ", ") + stage_key(s);
  return out;
}

}  // namespace

std::vector<const Stage*> select_stages(const std::string& spec) {
  common::SelectionRules<Stage> rules;
  rules.option = "--stages";
  rules.noun = "stage";
  rules.known = known_keys();
  rules.unknown_suffix = ", or all, stages, baselines, or a range such as 1-11";
  rules.find = find_stage;
  rules.numbered = [](const Stage& s) { return s.kind == Kind::stage; };
  rules.number = [](const Stage& s) { return s.number; };
  rules.group = [](const std::string& name, const std::function<void(const Stage*)>& add) {
    if (name != "stages" && name != "baselines") return false;
    const Kind k = name == "stages" ? Kind::stage : Kind::baseline;
    for (const auto& s : registry())
      if (s.kind == k) add(&s);
    return true;
  };
  return common::select_entries(registry(), spec, rules);
}

std::string registry_listing(const std::vector<const Stage*>& selection) {
  std::ostringstream out;
  for (const Stage* s : selection)
    out << stage_key(*s) << '\t' << s->id << '\t' << (s->kind == Kind::stage ? "stage" : "baseline") << '\t' << s->title
        << '\t' << s->source << '\t' << s->chapter << '\n';
  return out.str();
}

std::string registry_listing() {
  std::vector<const Stage*> all;
  for (const auto& s : registry()) all.push_back(&s);
  return registry_listing(all);
}

}  // namespace reduction
