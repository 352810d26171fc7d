// The registry: every variant, in the order of the chapter. This is the only list
// of variants in the project; the runner, the per-variant executables, the tests
// and the scripts (through `mixed_precision --list`) all read it.
// Adding a variant: a new NN_name.cu with a traits struct and a describe_*()
// function, its declaration and its row below, and one add_variant() line in
// mixed_precision/CMakeLists.txt.
#include <algorithm>
#include <sstream>

#include "cli.hpp"
#include "selection.hpp"
#include "variants.hpp"

namespace mixed_precision {

Variant describe_fp32();
Variant describe_fp16_half_accumulate();
Variant describe_fp16_float_accumulate();
Variant describe_bf16();
Variant describe_int8_dp4a();

const std::vector<Variant>& registry() {
  static const std::vector<Variant> variants = {
      describe_fp32(),      describe_fp16_half_accumulate(), describe_fp16_float_accumulate(), describe_bf16(),
      describe_int8_dp4a(),
  };
  return variants;
}

std::size_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::f32: return 4;
    case ElementType::f16: return 2;
    case ElementType::bf16: return 2;
    case ElementType::i8: return 1;
  }
  return 0;
}

std::string element_name(ElementType t) {
  switch (t) {
    case ElementType::f32: return "fp32";
    case ElementType::f16: return "fp16";
    case ElementType::bf16: return "bf16";
    case ElementType::i8: return "int8";
  }
  return "unknown";
}

std::string accumulator_name(Accumulator a) {
  switch (a) {
    case Accumulator::f32: return "fp32";
    case Accumulator::f16: return "fp16";
    case Accumulator::i32: return "int32";
  }
  return "unknown";
}

std::string variant_key(const Variant& v) {
  const std::string key = std::to_string(v.number);
  return key.size() < 2 ? "0" + key : key;
}

const Variant* find_variant(const std::string& key) {
  const auto& all = registry();
  const bool numeric = !key.empty() && key.size() <= 3 &&
                       std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  for (const auto& v : all)
    if (numeric ? v.number == std::stoi(key) : key == v.id) return &v;
  return nullptr;
}

const Variant& baseline() { return registry().front(); }

namespace {

std::string known_keys() {
  std::string out;
  for (const auto& v : registry()) out += (out.empty() ? "" : ", ") + variant_key(v) + " (" + v.id + ")";
  return out;
}

}  // namespace

std::vector<const Variant*> select_variants(const std::string& spec) {
  common::SelectionRules<Variant> rules;
  rules.option = "--variants";
  rules.noun = "variant";
  rules.known = known_keys();
  rules.empty_suffix = ", or all";
  rules.unknown_suffix = ", or all, or a range such as 2-4";
  rules.find = find_variant;
  rules.numbered = [](const Variant&) { return true; };
  rules.number = [](const Variant& v) { return v.number; };
  return common::select_entries(registry(), spec, rules);
}

std::string registry_listing(const std::vector<const Variant*>& selection) {
  std::ostringstream out;
  for (const Variant* v : selection)
    out << variant_key(*v) << '\t' << v->id << '\t' << element_name(v->element) << '\t'
        << accumulator_name(v->accumulator) << '\t' << v->title << '\t' << v->source << '\t' << v->chapter << '\n';
  return out.str();
}

std::string registry_listing() {
  std::vector<const Variant*> all;
  for (const auto& v : registry()) all.push_back(&v);
  return registry_listing(all);
}

}  // namespace mixed_precision
