// Waits for a stream with a deadline, for GPU tests whose kernels could hang.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "catch.hpp"

namespace gpu_test {

// Waits for `stream` until `seconds` have passed; past that the GPU is hung, and the test
// binary stops at once with a message instead of stalling the suite (ctest's TIMEOUT is
// the second line of defence).
inline void wait_or_fail(cudaStream_t stream, double seconds, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) FAIL(what << ": the stream reported " << cudaGetErrorString(e));
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "FAIL: %s did not finish within %.0f s: the GPU is hung\n", what.c_str(), seconds);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace gpu_test
