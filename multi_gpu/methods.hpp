// The rows of the multi-GPU sum: how the GPUs' shards become one sum, named as the
// table and the CSV name them. Both programs use them: multi_gpu_sum (one process
// drives every GPU) and multi_gpu_mpi (one process per GPU). Chapter: chapters/26_multi_gpu.md
#pragma once

#include <string>
#include <vector>

#include "timing.hpp"
#include "verify.hpp"

namespace multi_gpu {

enum class Method {
  shard_then_one_float,    // each GPU sums its shard; ncclAllReduce of one float
  shard_then_fixed_order,  // each GPU sums its shard; ncclAllGather of the partials, added in rank order
  allreduce_whole,         // ncclAllReduce of the whole shards, then GPU 0 sums the reduced array
  copy_to_one,             // every shard copied to GPU 0, then one sum there
  allreduce_one_float,     // the all-reduce of one float alone (its latency)
  // One kernel per GPU and no NCCL: the GPU's finishing block stores its partial into a
  // slot on every peer over NVLink, waits for the peers' words and adds them in rank
  // order (multi_gpu/peer_store.cu), so every GPU holds the same bits.
  shard_then_peer_store,
  peer_store_one_float,  // that exchange of one float alone (its latency), beside allreduce_one_float
};

const std::vector<Method>& all_methods();
const char* method_id(Method m);
const char* method_title(Method m);
// Whether the method promises the same bits on every run (and on every GPU that holds
// the result); the NCCL sums do not, since NCCL does not promise its order.
bool method_deterministic(Method m);
// Whether every GPU ends with the result (else GPU 0 alone holds it).
bool method_on_every_gpu(Method m);
// Whether the method is the combine alone, timed without a sum (it has no bandwidth).
bool method_latency_only(Method m);
// Whether the method stores into the other GPUs' memory (peer access between every pair).
bool method_peer_store(Method m);

// What a row's checked run gives.
struct Outcome {
  std::vector<float> results;  // per GPU that holds the result (every GPU, or GPU 0 alone)
  common::Check check;         // the worst of them against the reference
  common::ErrorBound bound;
  bool same_bits = true;  // every GPU's result has the same bits
};

// What a row's timing gives.
struct TimedOutcome {
  common::Timing timing;  // per repetition: the slowest GPU's time
  bool gated = true;      // false: the start gate gave up, so the start events fired one host launch apart
  bool gave_up = false;   // a peer-store row's exchange gave up waiting (the row failed; nothing timed)
};

// --methods LIST: comma-separated ids, in the table's order whatever the list's; refuses
// (common::UsageError) an unknown id naming it and the ids there are, and an empty list.
std::vector<Method> parse_methods(const std::string& text);
// "shard_then_one_float, shard_then_fixed_order, ...": every id, for help and refusals.
std::string method_ids();

}  // namespace multi_gpu
