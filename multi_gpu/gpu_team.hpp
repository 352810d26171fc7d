// The GPUs of one process and their NCCL communicators, with the shards they hold and
// the four ways of summing them (and the one-float all-reduce alone), each checked and
// timed like every row of the project. Chapter: chapters/26_multi_gpu.md
//
// One process drives every GPU: ncclCommInitAll makes one communicator per GPU, and each
// collective is issued for all of them between ncclGroupStart and ncclGroupEnd. The
// shards are the same for every GPU count: shard g holds n_max values of the input
// pattern from seed + g, and a run at n per GPU sums the first n of every shard; the
// double reference of the whole array is the sum of the shards' references.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nccl.h>

#include "kernels.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace multi_gpu {

enum class Method {
  shard_then_one_float,    // each GPU sums its shard; ncclAllReduce of one float
  shard_then_fixed_order,  // each GPU sums its shard; ncclAllGather of the partials, added in rank order
  allreduce_whole,         // ncclAllReduce of the whole shards, then GPU 0 sums the reduced array
  copy_to_one,             // every shard copied to GPU 0, then one sum there
  allreduce_one_float,     // the all-reduce of one float alone (its latency)
};

const std::vector<Method>& all_methods();
const char* method_id(Method m);
const char* method_title(Method m);
// Whether the method promises the same bits on every run (and on every GPU that holds
// the result); the NCCL sums do not, since NCCL does not promise its order.
bool method_deterministic(Method m);

// Sets NCCL_NVLS_ENABLE=0 in this process's environment unless it is already set (a
// user's own value stands), and returns the value in effect. Call before any NCCL call.
std::string keep_nvls_off();
// "2.28.9": the NCCL library this program runs with.
std::string nccl_version();

struct TeamSetup {
  int gpus = 1;                      // GPUs 0 .. gpus-1, the most any run uses
  std::vector<std::uint64_t> sizes;  // n per GPU, every size the run will use
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  bool flush_l2 = true;
  common::FlushMode flush = common::FlushMode::read;
};

struct Outcome {
  std::vector<float> results;  // per GPU that holds the result (every GPU, or GPU 0 alone)
  common::Check check;         // the worst of them against the reference
  common::ErrorBound bound;
  bool same_bits = true;  // every GPU's result has the same bits
};

struct TimedOutcome {
  common::Timing timing;  // per repetition: the slowest GPU's time
  bool gated = true;      // false: the start gate gave up, so the start events fired one host launch apart
};

class GpuTeam {
 public:
  // Refuses (common::UsageError) a setup whose buffers do not fit in a GPU's free
  // memory; then makes the shards, uploads them and computes their references.
  explicit GpuTeam(const TeamSetup& setup);
  ~GpuTeam();
  GpuTeam(const GpuTeam&) = delete;
  GpuTeam& operator=(const GpuTeam&) = delete;

  // The GPUs the next rows use: 0 .. count-1, one NCCL communicator each.
  void use(int count);
  // n per GPU for the next rows (one of the setup's sizes): plans the stage on every GPU.
  void set_size(std::uint64_t n);

  int count() const;
  std::uint64_t n_per_gpu() const;
  // The double reference of the whole array (count x n values).
  common::Reference reference() const;

  // Poisons every output, runs the method once, and checks each result.
  Outcome run_checked(Method m);
  // Warm-up, then repetitions: L2 flushed on every GPU, the start gate, events on every GPU.
  TimedOutcome time(Method m, const common::TimingOptions& timing);

  // How copy_to_one moves shard g to GPU 0: "local" (g = 0), "peer" or "host".
  std::string copy_path(int g) const;
  // copy_path over the GPUs in use: "local", "peer", "host" or "peer+host".
  std::string copy_paths() const;
  // A line per GPU for the banner: "GPU 1: NVIDIA H200, peer access with GPU 0: yes (performance rank 0)".
  std::vector<std::string> describe() const;
  const std::string& device_name(int g) const;
  double peak_gbs(int g) const;

  struct Gpu;

 private:
  Gpu& gpu(int g) const;
  void destroy_comms();
  void enqueue(Method m);
  void sync_all();
  void restore_shard_0();
  double one_repetition(Method m, bool gated);

  TeamSetup setup_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<ncclComm_t> comms_;  // one per GPU in use
  std::uint64_t n_ = 0;
  std::size_t size_index_ = 0;
  unsigned ticket_ = 0;
  StartGate gate_;
};

}  // namespace multi_gpu
