// The combine through NVLink peer stores, inside one node: each GPU's finishing block
// stores its partial, tagged with the launch, into a slot on every peer and waits for
// the peers' words, then adds the G partials in rank order, so every GPU holds the same
// bits. The sum of the shard and the exchange are one kernel (shard_then_peer_store);
// the exchange alone is its own one-block kernel (peer_store_one_float), to set beside
// NCCL's one-float all-reduce. peer_store.cu says why the slots are safe for any number
// of launches. NVLink multicast is not used. Chapter: chapters/26_multi_gpu.md
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace multi_gpu {

// The most GPUs the exchange takes (one warp's threads would take 32; NVLink machines
// have up to 8 GPUs per node).
constexpr int kMostPeerGpus = 8;
// An exchange area: two banks (a launch's parity picks one) of kMostPeerGpus 8-byte
// slots; slot p of a bank receives GPU p's word.
constexpr std::size_t kPeerAreaWords = 2 * static_cast<std::size_t>(kMostPeerGpus);
// Threads per block of the fused sum (the project's preferred block for stages 14-18).
constexpr int kPeerSumBlock = 512;

// Every GPU's exchange area as a device address. With unified addressing a pointer from
// cudaMalloc on GPU p means the same memory on every GPU with peer access to p, so one
// view serves the whole team; only `rank` differs.
struct PeerView {
  unsigned long long* areas[kMostPeerGpus] = {};
  int count = 1;  // GPUs in the team, 1..kMostPeerGpus
  int rank = 0;   // this GPU's place in it
};

// One launch of the exchange on every GPU of the team.
struct PeerLaunch {
  std::uint64_t number = 0;         // from 1, the same on every GPU; its parity picks the bank
  unsigned long long limit_ns = 0;  // a waiting thread gives up after this long
  unsigned* gave_up = nullptr;      // set to 1 (host-mapped memory) by a thread that gave up
};

// The fused sum's plan on the current device for n floats at `in`.
struct PeerSumPlan {
  unsigned grid = 0;
  std::size_t chunk = 0;          // float4s per block (stage 13's chunks)
  std::size_t scratch_bytes = 0;  // the start counter and one slot per block, zeroed once
  std::size_t error_depth = 0;    // of this GPU's own sum, without the combine
};
PeerSumPlan plan_peer_sum(const float* in, std::size_t n, int sm_count);

// Enqueues, on `stream` of the current device, the sum of in[0, n) and the exchange:
// *out on every GPU of the launch gets the sum of every GPU's partial in rank order.
// `scratch` holds plan.scratch_bytes, zeroed before the first launch; each launch leaves
// it zeroed. One launch in flight per scratch and per team.
void launch_peer_sum(const float* in, std::size_t n, const PeerSumPlan& plan, void* scratch, float* out,
                     const PeerView& view, const PeerLaunch& launch, cudaStream_t stream);
// Enqueues the exchange alone: *partial (one float on this GPU) to every GPU, and *out
// the sum of every GPU's partial in rank order.
void launch_peer_exchange(const float* partial, float* out, const PeerView& view, const PeerLaunch& launch,
                          cudaStream_t stream);

// Enables GPU `self`'s access to GPU `peer`'s memory (CUDA ordinals), once per process.
void enable_peer(int self, int peer);

// Enables peer access both ways between every pair of `devices` (CUDA ordinals); returns
// "" when every pair has it, else one sentence naming a pair that cannot (or saying the
// team is larger than kMostPeerGpus). Access already enabled is fine.
std::string enable_peer_access(const std::vector<int>& devices);

// The exchange areas of a team and its launch numbers. Made for GPUs `devices` (rank r
// is devices[r]) once enable_peer_access() has said yes; the areas start zeroed. A
// waiting thread gives up after `limit_ms` (5 s, as the start gate: a launch that works
// waits microseconds, at most for the slowest GPU's sum).
class PeerExchange {
 public:
  explicit PeerExchange(std::vector<int> devices, unsigned limit_ms = 5000);
  ~PeerExchange();
  PeerExchange(const PeerExchange&) = delete;
  PeerExchange& operator=(const PeerExchange&) = delete;

  int count() const { return static_cast<int>(devices_.size()); }
  PeerView view(int rank) const;
  // The next launch's number; every GPU of the team must run that launch.
  PeerLaunch next();
  std::uint64_t launches() const { return launches_; }
  // Whether a waiting thread gave up since the last reset (read once every GPU is idle).
  bool gave_up() const;
  unsigned limit_ms() const { return limit_ms_; }
  // Clears every slot and the give-up word and numbers launches from 1 again. Only while
  // no launch is in flight on any GPU of the team (after synchronising them).
  void reset();

 private:
  std::vector<int> devices_;
  std::vector<unsigned long long*> areas_;  // areas_[r] on GPU devices_[r]
  std::uint64_t launches_ = 0;
  unsigned limit_ms_;
  unsigned* flag_host_ = nullptr;
  unsigned* flag_device_ = nullptr;
};

}  // namespace multi_gpu
