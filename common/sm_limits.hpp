// What one SM holds, for the architecture the current compilation pass targets, so that
// __launch_bounds__ can ask for a full SM on every GPU from sm_75 on without asking for
// more than the target has (ptxas refuses a minimum of blocks per SM it cannot hold).
// From the CUDA C++ Programming Guide's table of compute capabilities (threads and
// blocks per SM). The host pass (no __CUDA_ARCH__) sees the largest values; launch
// bounds only matter to the device passes.
#pragma once

namespace common {

constexpr int sm_max_threads() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  return 1024;  // 7.5 (Turing)
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
  return 1536;  // 8.6, 8.9 (Ampere and Ada consumer parts), 12.x (Blackwell consumer parts)
#else
  return 2048;  // 8.0, 8.7, 9.0, 10.x and the host pass
#endif
}

constexpr int sm_max_blocks() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
  return 16;  // 7.5, 8.6, 8.7
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
  return 24;    // 8.9, 12.x
#else
  return 32;    // 8.0, 9.0, 10.x and the host pass
#endif
}

// The minimum blocks per SM for __launch_bounds__(block, ...): `wanted`, but no more
// than the target's SM holds (in threads and in blocks), and at least 1.
constexpr int blocks_per_sm_bound(int block, int wanted) {
  const int by_threads = sm_max_threads() / block;
  int b = wanted < by_threads ? wanted : by_threads;
  b = b < sm_max_blocks() ? b : sm_max_blocks();
  return b > 0 ? b : 1;
}

// Every block of `block` threads that one SM holds: a full SM.
constexpr int full_sm_blocks(int block) { return blocks_per_sm_bound(block, sm_max_threads() / block); }

}  // namespace common
