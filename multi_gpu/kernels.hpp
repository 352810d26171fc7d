// The two kernels of the multi-GPU sum that are not a stage: the fixed-order combine of
// the per-GPU partials, and the start gate that lets every GPU begin a timed repetition
// at the same moment. Chapter: chapters/26_multi_gpu.md
#pragma once

#include <cuda_runtime.h>

namespace multi_gpu {

// out = ((partials[0] + partials[1]) + partials[2]) + ... : one thread, rank order, so
// every GPU that holds the same partials writes the same bits. On the current device.
void launch_add_in_rank_order(const float* partials, int count, float* out, cudaStream_t stream);

// Holds `stream` of the current device for about `ns` nanoseconds (one thread spinning):
// the tests let one GPU fall behind the others with it.
void launch_spin(unsigned long long ns, cudaStream_t stream);

// Holds back the work enqueued behind it on each GPU until the host opens it, so the
// start events of a repetition fire together on every GPU instead of one host launch
// apart. Its words live in pinned, mapped host memory: [0] the ticket the host opened,
// [1] set by a gate that gave up, [2 + s] the last ticket whose gate reached slot s.
// The host opens only once every slot's gate is running: work enqueued before a gate
// (the L2 flush) has finished on every GPU, so none starts late behind its own flush
// while the others wait for it in the combine.
constexpr int kGateSlots = 32;
constexpr int kGateWords = 2 + kGateSlots;

class StartGate {
 public:
  StartGate();
  // A gate on kGateWords words the caller owns and keeps (for example a page shared
  // between the processes of one node and registered with cudaHostRegister as mapped
  // memory), so that one store by any of them opens every process's gates.
  StartGate(unsigned* host_words, unsigned* device_words);
  ~StartGate();
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  // Enqueues, on `stream` of the current device, a one-thread kernel that says it has
  // reached slot `slot` (slots from kGateSlots on share
  // slot `slot` mod kGateSlots) for `ticket`, then waits until the gate is
  // opened with `ticket` or later, or gives up after `limit_ms` (and says so).
  void enqueue(cudaStream_t stream, unsigned ticket, int slot, unsigned limit_ms = 5000);
  // Waits until the gates of slots 0..slots-1 have reached `ticket` (at most `limit_ms`;
  // a gate that never comes then gives up on its own), then lets every gate waiting for
  // `ticket` (or an earlier one) go.
  void open(unsigned ticket, int slots, unsigned limit_ms = 5000);
  // Whether a gate gave up waiting since the last reset (read once its stream is done).
  bool gave_up() const;
  void reset();

 private:
  unsigned* host_ = nullptr;    // the kGateWords words
  unsigned* device_ = nullptr;  // the same words, as the GPUs address them
  bool owned_ = true;           // host_ came from cudaHostAlloc here
};

}  // namespace multi_gpu
