// The registry: every stage and baseline, in the order of the chapters. This is the
// only list of stages in the project; the runner, the per-stage executables, the
// tests and the scripts (through `reduce --list`) all read it.
// Adding a stage: a new NN_name.cu whose describe_name() fills in its Stage, and one
// line X(name) below, in chapter order; the build finds the file by its name.
#include <algorithm>
#include <functional>
#include <sstream>

#include "cli.hpp"
#include "registry.hpp"
#include "selection.hpp"

// The stages in chapter order, then the baselines.
#define REDUCTION_REGISTRY(X) \
  X(naive_global)             \
  X(shared_memory)            \
  X(bitwise_and)              \
  X(interleaved_addressing)   \
  X(sequential_addressing)    \
  X(grid_stride)              \
  X(loads_in_flight)          \
  X(warp_shuffle)             \
  X(cooperative_groups)       \
  X(loop_unrolling)           \
  X(block_atomics)            \
  X(vectorized)               \
  X(last_block)               \
  X(tagged_slots)             \
  X(one_cluster)              \
  X(reproducible)             \
  X(compensated)              \
  X(stream_order)             \
  X(cub)                      \
  X(thrust)                   \
  X(one_thread)               \
  X(atomic_per_element)       \
  X(one_block)                \
  X(single_pass_library)

namespace reduction {

#define REDUCTION_DECLARE(name) Stage describe_##name();
REDUCTION_REGISTRY(REDUCTION_DECLARE)
#undef REDUCTION_DECLARE

const std::vector<Stage>& registry() {
#define REDUCTION_DESCRIBE(name) describe_##name(),
  static const std::vector<Stage> stages = {REDUCTION_REGISTRY(REDUCTION_DESCRIBE)};
#undef REDUCTION_DESCRIBE
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
