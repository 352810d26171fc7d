// The one ordered list of stages and baselines.
#pragma once

#include <string>
#include <vector>

#include "stage.hpp"

namespace reduction {

// Stages in chapter order, then the baselines.
const std::vector<Stage>& registry();

// Finds a stage by number ("5", "05"), id ("sequential_addressing") or baseline id
// ("cub"); nullptr when there is none.
const Stage* find_stage(const std::string& key);

// Resolves a --stages value: a comma-separated list of keys, ranges of stage
// numbers ("1-11"), "all", "stages" (every numbered stage) or "baselines".
// Throws common::UsageError naming the unknown item and listing what exists.
std::vector<const Stage*> select_stages(const std::string& spec);

// The registry as text, one line per entry, tab-separated:
// key, id, kind, title, source, chapter (what `reduce --list` prints for scripts).
// With a selection (from select_stages), only those entries, in registry order.
std::string registry_listing();
std::string registry_listing(const std::vector<const Stage*>& selection);

}  // namespace reduction
