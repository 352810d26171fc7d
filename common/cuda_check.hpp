// Error checking for every CUDA runtime call and every kernel launch.
//
// A failed call throws CudaError carrying the expression, file:line and CUDA's own
// error string, so a runner can print one clear sentence instead of carrying on
// with a wrong number.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace common {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line);

inline void check_cuda(cudaError_t code, const char* expr, const char* file, int line) {
  if (code != cudaSuccess) throw_cuda_error(code, expr, file, line);
}

}  // namespace common

#define CUDA_CHECK(expr) ::common::check_cuda((expr), #expr, __FILE__, __LINE__)

// After a <<<...>>> launch: catches bad launch configurations at once. Errors that
// happen while the kernel runs surface at the next synchronising CUDA_CHECK.
#define CUDA_CHECK_LAUNCH() ::common::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
