// The GPUs of one process and their NCCL communicators, with the shards they hold and
// the ways of summing them (methods.hpp: four with NCCL, the one-float all-reduce alone,
// and the combine through NVLink peer stores with its exchange alone), each checked and
// timed like every row of the project. Chapter: chapters/26_multi_gpu.md
//
// One process drives every GPU: ncclCommInitAll makes one communicator per GPU, and each
// collective is issued for all of them between ncclGroupStart and ncclGroupEnd. The
// peer-store rows need no NCCL: each GPU runs one kernel that sums its shard and
// exchanges the partial with every peer (peer_store.hpp), all GPUs' kernels launched
// from this thread one after another and released together by the start gate. The
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
#include "methods.hpp"
#include "peer_store.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace multi_gpu {

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

class GpuTeam {
 public:
  // Refuses (common::UsageError) a setup whose buffers do not fit in a GPU's free
  // memory; then makes the shards, uploads them and computes their references.
  explicit GpuTeam(const TeamSetup& setup);
  ~GpuTeam();
  GpuTeam(const GpuTeam&) = delete;
  GpuTeam& operator=(const GpuTeam&) = delete;

  // The GPUs the next rows use: 0 .. count-1, one NCCL communicator each; and, where
  // every pair of them has peer access, the exchange areas of the peer-store rows.
  void use(int count);
  // n per GPU for the next rows (one of the setup's sizes): plans the stage on every GPU.
  void set_size(std::uint64_t n);

  int count() const;
  std::uint64_t n_per_gpu() const;
  // The double reference of the whole array (count x n values).
  common::Reference reference() const;

  // Poisons every output, runs the method once, and checks each result. With `launches`
  // > 1 it enqueues the method that many times back to back, with no synchronisation
  // between, and checks the last; `stagger` then holds one GPU back for about 20 us
  // before each launch (a different GPU each time), so the others run ahead.
  Outcome run_checked(Method m, int launches = 1, bool stagger = false);
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
  // Empty when the peer-store rows can run on the GPUs in use (peer access between every
  // pair, at most kMostPeerGpus of them); else the sentence saying why not.
  const std::string& peer_store_problem() const { return peer_problem_; }
  // The peer exchange's launches since the GPUs in use were chosen (for the tests).
  std::uint64_t peer_launches() const;

  struct Gpu;

 private:
  Gpu& gpu(int g) const;
  void destroy_comms();
  void enqueue(Method m);
  void sync_all();
  void restore_shard_0();
  void recover_peer_exchange();
  double one_repetition(Method m, bool gated);

  TeamSetup setup_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<ncclComm_t> comms_;  // one per GPU in use
  std::uint64_t n_ = 0;
  std::size_t size_index_ = 0;
  unsigned ticket_ = 0;
  StartGate gate_;
  std::string peer_problem_;            // see peer_store_problem()
  std::unique_ptr<PeerExchange> peer_;  // the GPUs in use, when peer_problem_ is empty
};

}  // namespace multi_gpu
