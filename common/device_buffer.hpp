// RAII ownership of device memory: stages and runners never pair cudaMalloc/cudaFree by hand.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda_check.hpp"

namespace common {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw from a destructor
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// An event pair and a stream, also owned.
class CudaEvent {
 public:
  CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaStream {
 public:
  CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() { cudaStreamDestroy(stream_); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Copies to device memory and returns only when the bytes have landed. A plain
// cudaMemcpy from pageable host memory may return while its last piece is still on
// the way (the runtime only promises the host buffer was staged), and a device-to-
// device cudaMemcpy does not wait at all; a kernel launched next on a non-blocking
// stream (CudaStream) does not wait for the legacy default stream either, so it could
// read a half-written input. The device-wide synchronisation closes that window.
inline void copy_to_device(void* dst, const void* src, std::size_t bytes,
                           cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace common
