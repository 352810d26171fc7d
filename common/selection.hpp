// Picking entries of a registry from a --stages / --variants list, once for every
// program: "all", named groups, ranges of numbers ("1-11"), single keys; duplicates
// dropped, the registry's order kept, and one sentence for anything it does not know.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace common {

template <class Entry>
struct SelectionRules {
  std::string option;                                    // "--stages"
  std::string noun;                                      // "stage"
  std::string known;                                     // "01, 02, ..., cub": every key, for the messages
  std::string empty_suffix;                              // after the known keys when the list names nothing
  std::string unknown_suffix;                            // after the known keys for an unknown key
  std::function<const Entry*(const std::string&)> find;  // a key's entry, or nullptr
  std::function<bool(const Entry&)> numbered;            // can stand in a range
  std::function<int(const Entry&)> number;
  // A group name ("stages") adds its entries and returns true; anything else false.
  std::function<bool(const std::string&, const std::function<void(const Entry*)>&)> group;
};

template <class Entry>
std::vector<const Entry*> select_entries(const std::vector<Entry>& all, const std::string& spec,
                                         const SelectionRules<Entry>& r) {
  std::vector<const Entry*> chosen;
  const std::function<void(const Entry*)> add = [&](const Entry* e) {
    if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
  };
  const auto items = split_list(spec);
  if (items.empty())
    throw UsageError(r.option + " '" + spec + "' names no " + r.noun + " (known: " + r.known + r.empty_suffix + ").");
  for (const auto& item : items) {
    if (item == "all") {
      for (const auto& e : all) add(&e);
      continue;
    }
    if (r.group && r.group(item, add)) continue;
    const auto dash = item.find('-');
    if (dash != std::string::npos && dash > 0) {
      const Entry* lo = r.find(item.substr(0, dash));
      const Entry* hi = r.find(item.substr(dash + 1));
      if (lo == nullptr || hi == nullptr || !r.numbered(*lo) || !r.numbered(*hi) || r.number(*lo) > r.number(*hi))
        throw UsageError(r.option + " range '" + item + "' is not a range of " + r.noun +
                         " numbers (known: " + r.known + ").");
      for (const auto& e : all)
        if (r.numbered(e) && r.number(e) >= r.number(*lo) && r.number(e) <= r.number(*hi)) add(&e);
      continue;
    }
    const Entry* e = r.find(item);
    if (e == nullptr)
      throw UsageError("unknown " + r.noun + " '" + item + "' in " + r.option + " (known: " + r.known +
                       r.unknown_suffix + ").");
    add(e);
  }
  // The registry's order, whatever order they were named in.
  std::sort(chosen.begin(), chosen.end(), [](const Entry* a, const Entry* b) { return a < b; });
  return chosen;
}

}  // namespace common
