#include "methods.hpp"

#include <algorithm>

#include "cli.hpp"

namespace multi_gpu {

const std::vector<Method>& all_methods() {
  static const std::vector<Method> methods = {
      Method::shard_then_one_float, Method::shard_then_fixed_order, Method::allreduce_whole,      Method::copy_to_one,
      Method::allreduce_one_float,  Method::shard_then_peer_store,  Method::peer_store_one_float,
  };
  return methods;
}

const char* method_id(Method m) {
  switch (m) {
    case Method::shard_then_one_float: return "shard_then_one_float";
    case Method::shard_then_fixed_order: return "shard_then_fixed_order";
    case Method::allreduce_whole: return "allreduce_whole";
    case Method::copy_to_one: return "copy_to_one";
    case Method::allreduce_one_float: return "allreduce_one_float";
    case Method::shard_then_peer_store: return "shard_then_peer_store";
    case Method::peer_store_one_float: return "peer_store_one_float";
  }
  return "unknown";
}

const char* method_title(Method m) {
  switch (m) {
    case Method::shard_then_one_float: return "shard sums, all-reduce 1 float";
    case Method::shard_then_fixed_order: return "shard sums, all-gather, rank order";
    case Method::allreduce_whole: return "all-reduce whole shards, 1 sum";
    case Method::copy_to_one: return "copy shards to GPU 0, 1 sum";
    case Method::allreduce_one_float: return "all-reduce of 1 float alone";
    case Method::shard_then_peer_store: return "shard sums, peer stores, rank order";
    case Method::peer_store_one_float: return "peer-store exchange of 1 float alone";
  }
  return "unknown";
}

bool method_deterministic(Method m) {
  return m == Method::shard_then_fixed_order || m == Method::copy_to_one || m == Method::shard_then_peer_store ||
         m == Method::peer_store_one_float;
}

bool method_on_every_gpu(Method m) { return m != Method::allreduce_whole && m != Method::copy_to_one; }

bool method_latency_only(Method m) { return m == Method::allreduce_one_float || m == Method::peer_store_one_float; }

bool method_peer_store(Method m) { return m == Method::shard_then_peer_store || m == Method::peer_store_one_float; }

std::string method_ids() {
  std::string s;
  for (const Method m : all_methods()) s += (s.empty() ? "" : ", ") + std::string(method_id(m));
  return s;
}

std::vector<Method> parse_methods(const std::string& text) {
  const std::vector<std::string> items = common::split_list(text);
  if (items.empty())
    throw common::UsageError("--methods '" + text + "' names no method: choose from " + method_ids() + ".");
  std::vector<Method> chosen;
  for (const std::string& item : items) {
    const auto& all = all_methods();
    const auto it = std::find_if(all.begin(), all.end(), [&](Method m) { return item == method_id(m); });
    if (it == all.end())
      throw common::UsageError("--methods item '" + item + "' is not a method: choose from " + method_ids() + ".");
    if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
  }
  // The table's order, whatever the list's.
  std::vector<Method> ordered;
  for (const Method m : all_methods())
    if (std::find(chosen.begin(), chosen.end(), m) != chosen.end()) ordered.push_back(m);
  return ordered;
}

}  // namespace multi_gpu
