// The registry: every histogram stage and the baseline, in the order of the chapter.
// Adding a stage: a new NN_name.cu whose describe_name() fills in its Stage, and one
// line X(name) below; histogram/CMakeLists.txt lists the sources.
#include <algorithm>
#include <sstream>

#include "cli.hpp"
#include "registry.hpp"
#include "selection.hpp"

#define HISTOGRAM_REGISTRY(X) \
  X(global_atomics)           \
  X(block_shared)             \
  X(vector_loads)             \
  X(warp_copies)              \
  X(lane_banks)               \
  X(one_wave)                 \
  X(cub)

namespace histogram {

#define HISTOGRAM_DECLARE(name) Stage describe_##name();
HISTOGRAM_REGISTRY(HISTOGRAM_DECLARE)
#undef HISTOGRAM_DECLARE

const std::vector<Stage>& registry() {
#define HISTOGRAM_DESCRIBE(name) describe_##name(),
  static const std::vector<Stage> stages = {HISTOGRAM_REGISTRY(HISTOGRAM_DESCRIBE)};
#undef HISTOGRAM_DESCRIBE
  return stages;
}

std::string stage_key(const Stage& s) {
  if (s.kind == Kind::baseline) return s.id;
  const std::string key = std::to_string(s.number);
  return key.size() < 2 ? "0" + key : key;
}

const Stage* find_stage(const std::string& key) {
  const bool numeric = !key.empty() && key.size() <= 3 &&
                       std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  for (const auto& s : registry()) {
    if (numeric && s.kind == Kind::stage && s.number == std::stoi(key)) return &s;
    if (!numeric && key == s.id) return &s;
  }
  return nullptr;
}

std::vector<const Stage*> select_stages(const std::string& spec) {
  std::string known;
  for (const auto& s : registry()) known += (known.empty() ? "" : ", ") + stage_key(s);
  common::SelectionRules<Stage> rules;
  rules.option = "--stages";
  rules.noun = "stage";
  rules.known = known;
  rules.unknown_suffix = ", or all, stages, baselines, or a range such as 3-6";
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

}  // namespace histogram
