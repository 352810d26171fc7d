// The one list of scan stages and baselines, in ladder order.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "cli.hpp"
#include "scan.hpp"

#include "selection.hpp"

namespace scan {

ScanStage describe_block_scan();
ScanStage describe_padded_block_scan();
ScanStage describe_reduce_then_scan();
ScanStage describe_decoupled_lookback();
ScanStage describe_vector_lookback();
ScanStage describe_prefetch_lookback();
ScanStage describe_cub_inclusive();
ScanStage describe_cub_exclusive();
ScanStage describe_copy();

const char* type_name(ValueType t) { return t == ValueType::i32 ? "int" : "float"; }
const char* kind_name(ScanKind k) { return k == ScanKind::inclusive ? "inclusive" : "exclusive"; }

const std::vector<ScanStage>& registry() {
  static const std::vector<ScanStage> stages = {
      describe_block_scan(),         describe_padded_block_scan(), describe_reduce_then_scan(),
      describe_decoupled_lookback(), describe_vector_lookback(),   describe_prefetch_lookback(),
      describe_cub_inclusive(),      describe_cub_exclusive(),     describe_copy(),
  };
  return stages;
}

std::string stage_key(const ScanStage& s) {
  if (s.entry != Entry::stage) return s.id;
  return (s.number < 10 ? "0" : "") + std::to_string(s.number);
}

bool computes(const ScanStage& s, ScanKind k) { return s.only_kind < 0 || s.only_kind == static_cast<int>(k); }

const ScanStage* find_stage(const std::string& key) {
  for (const ScanStage& s : registry()) {
    if (key == s.id || key == stage_key(s)) return &s;
    if (s.entry == Entry::stage && !key.empty() && key.size() <= 3 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }) && std::stoi(key) == s.number)
      return &s;
  }
  return nullptr;
}

namespace {

std::string known() {
  std::string out;
  for (const ScanStage& s : registry()) out += (out.empty() ? "" : ", ") + stage_key(s);
  return out + ", ranges such as 1-5, all, stages or baselines";
}

}  // namespace

std::vector<const ScanStage*> select_stages(const std::string& spec) {
  common::SelectionRules<ScanStage> rules;
  rules.option = "--stages";
  rules.noun = "stage";
  rules.known = known();
  rules.find = find_stage;
  rules.numbered = [](const ScanStage& s) { return s.entry == Entry::stage; };
  rules.number = [](const ScanStage& s) { return s.number; };
  rules.group = [](const std::string& name, const std::function<void(const ScanStage*)>& add) {
    if (name != "stages" && name != "baselines") return false;
    for (const ScanStage& s : registry())
      if ((name == "stages") == (s.entry == Entry::stage)) add(&s);
    return true;
  };
  return common::select_entries(registry(), spec, rules);
}

void require_scratch(const ScanArgs& a, std::size_t bytes, const char* stage) {
  if (bytes > 0 && (a.scratch == nullptr || a.scratch_bytes < bytes))
    throw std::invalid_argument(std::string("scan stage ") + stage + " needs " + std::to_string(bytes) +
                                " bytes of scratch for n = " + std::to_string(a.n) + " but was given " +
                                std::to_string(a.scratch == nullptr ? 0 : a.scratch_bytes) + ".");
}

void launch(const ScanStage& s, const ScanArgs& a) {
  if (!computes(s, a.kind))
    throw std::invalid_argument(std::string(s.id) + " computes " + kind_name(static_cast<ScanKind>(s.only_kind)) +
                                " sums only, not " + kind_name(a.kind) + " ones.");
  if (a.in == a.out && !s.in_place)
    throw std::invalid_argument(std::string(s.id) + " does not scan in place: give it an output apart from its input.");
  const auto* in = static_cast<const char*>(a.in);
  const auto* out = static_cast<const char*>(a.out);
  if (in != out && out < in + 4 * a.n && in < out + 4 * a.n)
    throw std::invalid_argument(std::string(s.id) +
                                ": the output overlaps the input without being it; a scan is in place or apart.");
  if (a.n == 0) return;
  s.launch(a);
}

}  // namespace scan
