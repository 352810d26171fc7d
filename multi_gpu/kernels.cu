#include "kernels.hpp"

#include "cuda_check.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace multi_gpu {
namespace {

__global__ void add_in_rank_order(const float* __restrict__ partials, int count, float* __restrict__ out) {
  float sum = partials[0];
  for (int r = 1; r < count; ++r) sum += partials[r];
  *out = sum;
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Says it has arrived (a store to host memory), then waits: the host writes `open` over
// PCIe, and a volatile load reads it afresh on every pass.
__global__ void wait_at_gate(const volatile unsigned* open, volatile unsigned* arrived, unsigned ticket,
                             unsigned* gave_up, unsigned long long limit_ns) {
  *arrived = ticket;
  __threadfence_system();
  const unsigned long long start = global_ns();
  while (*open < ticket) {
    if (global_ns() - start > limit_ns) {
      *gave_up = 1;
      return;
    }
    __nanosleep(200);
  }
}

// Spins for about `ns` nanoseconds (one thread).
__global__ void spin(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) __nanosleep(1000);
}

}  // namespace

void launch_add_in_rank_order(const float* partials, int count, float* out, cudaStream_t stream) {
  add_in_rank_order<<<1, 1, 0, stream>>>(partials, count, out);
  CUDA_CHECK_LAUNCH();
}

StartGate::StartGate() {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, kGateWords * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  host_ = static_cast<unsigned*>(p);
  for (int i = 0; i < kGateWords; ++i) host_[i] = 0;
  void* d = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
  device_ = static_cast<unsigned*>(d);
}

StartGate::StartGate(unsigned* host_words, unsigned* device_words)
    : host_(host_words), device_(device_words), owned_(false) {}

StartGate::~StartGate() {
  if (owned_ && host_ != nullptr) cudaFreeHost(host_);  // no throw from a destructor
}

void StartGate::enqueue(cudaStream_t stream, unsigned ticket, int slot, unsigned limit_ms) {
  if (slot < 0) throw std::logic_error("a start gate slot below 0: " + std::to_string(slot));
  wait_at_gate<<<1, 1, 0, stream>>>(device_, device_ + 2 + slot % kGateSlots, ticket, device_ + 1,
                                    static_cast<unsigned long long>(limit_ms) * 1000000ull);
  CUDA_CHECK_LAUNCH();
}

void launch_spin(unsigned long long ns, cudaStream_t stream) {
  spin<<<1, 1, 0, stream>>>(ns);
  CUDA_CHECK_LAUNCH();
}

void StartGate::open(unsigned ticket, int slots, unsigned limit_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  for (int s = 0; s < slots && s < kGateSlots; ++s)
    while (__atomic_load_n(&host_[2 + s], __ATOMIC_SEQ_CST) < ticket && std::chrono::steady_clock::now() < deadline) {
    }
  __atomic_store_n(&host_[0], ticket, __ATOMIC_SEQ_CST);
}

bool StartGate::gave_up() const { return __atomic_load_n(&host_[1], __ATOMIC_SEQ_CST) != 0; }

void StartGate::reset() { __atomic_store_n(&host_[1], 0u, __ATOMIC_SEQ_CST); }

}  // namespace multi_gpu
