// One GPU driven by a process of its own, as a job across nodes runs: its shard, its
// NCCL communicator and the NCCL rows' work for this rank alone. multi_gpu_mpi (one MPI
// rank per GPU) wraps it with the exchanges between processes: the NCCL unique id from
// rank 0, the checks on rank 0, the start gate and the slowest rank's time. Nothing here
// calls MPI, so the class is built and tested without it. Chapter: chapters/26_multi_gpu.md
//
// Rank r's shard is the input pattern from seed + r, as GPU r's in multi_gpu_sum, so
// both programs sum the same array and their fixed-order rows give the same bits. Each
// rank issues its own collectives on its own stream, with no group calls: there is one
// communicator per process. The rows are those of multi_gpu_sum that NCCL does
// (methods.hpp); copy_to_one moves the shards to rank 0 with ncclSend and ncclRecv.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device_info.hpp"
#include "kernels.hpp"
#include "methods.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace multi_gpu {

// Whether multi_gpu_mpi runs the method: the NCCL rows (the peer-store rows need one
// process that holds every GPU's memory: multi_gpu_sum).
bool method_across_processes(Method m);

struct RankSetup {
  int device = 0;                    // the CUDA ordinal this process uses
  int rank = 0;                      // its rank in the job: the shard's seed is seed + rank
  int most_ranks = 1;                // the largest team it will join (rank 0 holds that many shards for copy_to_one)
  std::vector<std::uint64_t> sizes;  // n per GPU, every size the run will use
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  bool flush_l2 = true;
  common::FlushMode flush = common::FlushMode::read;
  bool copy_to_one = true;  // whether copy_to_one will run (rank 0's room for every shard)
};

class RankGpu {
 public:
  // Refuses (common::UsageError) a setup whose buffers do not fit in the GPU's free
  // memory; then makes the shard, uploads it and computes its references.
  explicit RankGpu(const RankSetup& setup);
  ~RankGpu();
  RankGpu(const RankGpu&) = delete;
  RankGpu& operator=(const RankGpu&) = delete;

  // Makes this process rank `rank` of a team of `count` (ncclCommInitRank with the id
  // rank 0 made; every rank of the team calls it). Leaves the previous team first.
  void join(int count, int rank, const ncclUniqueId& id);
  void leave();
  bool joined() const { return comm_ != nullptr; }
  int team_rank() const { return team_rank_; }
  int team_size() const { return team_size_; }

  // n per GPU for the next rows (one of the setup's sizes): plans the stage.
  void set_size(std::uint64_t n);
  std::uint64_t n_per_gpu() const { return n_; }
  // The double reference of this rank's shard's first n values.
  const common::Reference& reference() const;
  // The error depth of this rank's part of the method's sum: its stage over its shard;
  // on rank 0 for allreduce_whole and copy_to_one the stage over what rank 0 sums.
  std::size_t stage_depth(Method m) const;
  // Whether this rank ends with the method's result.
  bool holds_result(Method m) const { return method_on_every_gpu(m) || team_rank_ == 0; }

  // Poisons every output this rank writes, runs the method once (every rank of the team
  // must call it), waits, and returns this rank's result (NaN when it holds none).
  float run_once(Method m);
  // Everything the method needs on this rank, on its stream, and nothing else.
  void enqueue(Method m);
  // After copy_to_one: rank 0's shard put back where the other shards landed.
  void restore_shard();

  // The pieces of a timed repetition (multi_gpu_mpi puts the gate and the ranks' agreement between them).
  void flush_l2();
  void record_start();
  void record_stop();
  double elapsed_us();  // waits for the stop event
  void synchronize();
  cudaStream_t stream() const;
  const common::DeviceInfo& info() const;

  struct State;

 private:
  RankSetup setup_;
  std::unique_ptr<State> s_;
  ncclComm_t comm_ = nullptr;
  int team_rank_ = 0;
  int team_size_ = 0;
  std::uint64_t n_ = 0;
  std::size_t size_index_ = 0;
};

}  // namespace multi_gpu
