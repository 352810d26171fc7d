// The one ordered list of mixed-precision variants.
#pragma once

#include <string>
#include <vector>

#include "variant.hpp"

namespace mixed_precision {

// Every variant, in the order of the chapter (01 is the FP32 baseline).
const std::vector<Variant>& registry();

// Finds a variant by number ("3", "03") or id ("fp16_float_accumulate"); nullptr
// when there is none.
const Variant* find_variant(const std::string& key);

// The FP32 baseline every row's speed is compared with.
const Variant& baseline();

// Resolves a --variants value: a comma-separated list of keys, ranges of numbers
// ("2-4") or "all". Throws common::UsageError naming the unknown item and listing
// what exists.
std::vector<const Variant*> select_variants(const std::string& spec);

// The registry as text, one line per variant, tab-separated: key, id, element type,
// accumulator, title, source, chapter (what `mixed_precision --list` prints).
// With a selection (from select_variants), only those variants, in registry order.
std::string registry_listing();
std::string registry_listing(const std::vector<const Variant*>& selection);

}  // namespace mixed_precision
