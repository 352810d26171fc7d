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
// apart. The two words it polls and flags live in pinned, mapped host memory.
class StartGate {
 public:
  StartGate();
  // A gate on two words the caller owns and keeps (for example a page shared between the
  // processes of one node and registered with cudaHostRegister as mapped memory), so that
  // one store by any of them opens every process's gates.
  StartGate(unsigned* host_words, unsigned* device_words);
  ~StartGate();
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  // Enqueues, on `stream` of the current device, a one-thread kernel that waits until the
  // gate is opened with `ticket` or later, or gives up after `limit_ms` (and says so).
  void enqueue(cudaStream_t stream, unsigned ticket, unsigned limit_ms = 5000);
  // Lets every gate waiting for `ticket` (or an earlier one) go.
  void open(unsigned ticket);
  // Whether a gate gave up waiting since the last reset (read once its stream is done).
  bool gave_up() const;
  void reset();

 private:
  unsigned* host_ = nullptr;    // [0] the ticket the host opened, [1] set by a gate that gave up
  unsigned* device_ = nullptr;  // the same words, as the GPUs address them
  bool owned_ = true;           // host_ came from cudaHostAlloc here
};

}  // namespace multi_gpu
