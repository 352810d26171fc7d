// What one SM holds, for the architecture the current compilation pass targets, so that
// __launch_bounds__ can ask for a full SM on every GPU from sm_75 on without asking for
// more than the target has (ptxas refuses a minimum of blocks per SM it cannot hold).
// From the CUDA C++ Programming Guide's table of compute capabilities (threads and
// blocks per SM). The host pass (no __CUDA_ARCH__) sees the largest values; launch
// bounds only matter to the device passes.
#pragma once

namespace common {

// Threads and blocks one SM holds for compute capability `arch` (75, 80, 86, 89, 90, ...).
constexpr int max_threads_for_arch(int arch) {
  return arch < 80 ? 1024 : (arch == 86 || arch == 89 || arch >= 120) ? 1536 : 2048;
}
constexpr int max_blocks_for_arch(int arch) {
  return (arch < 80 || arch == 86 || arch == 87) ? 16 : (arch == 89 || arch >= 120) ? 24 : 32;
}

#ifdef __CUDA_ARCH__
constexpr int kCompiledArch = __CUDA_ARCH__ / 10;  // the device pass being compiled
#else
constexpr int kCompiledArch = 90;  // the host pass: launch bounds do not matter there
#endif

constexpr int sm_max_threads() { return max_threads_for_arch(kCompiledArch); }
constexpr int sm_max_blocks() { return max_blocks_for_arch(kCompiledArch); }

// The minimum blocks per SM for __launch_bounds__(block, ...): `wanted`, but no more
// than the target's SM holds (in threads and in blocks), and at least 1.
constexpr int blocks_per_sm_bound(int block, int wanted) {
  const int by_threads = sm_max_threads() / block;
  int b = wanted < by_threads ? wanted : by_threads;
  b = b < sm_max_blocks() ? b : sm_max_blocks();
  return b > 0 ? b : 1;
}

// Where ptxas squeezes a 1024-thread block of the single-pass stages into 32 registers a
// thread and spills: two such blocks fit a 2048-thread SM, and the kernels of stages 13
// and 18 need a few more registers than 32 (sm_90's ptxas gives stage 13 36 and fits
// stage 18 into 32). It happens for sm_80, whose ptxas aims at two blocks of stage 13's
// kernel when no minimum is stated, and for sm_100 when stage 18 asks for a full SM. On
// these targets both stages ask for one block of 1024 per SM instead; the code for every
// other target is unchanged.
constexpr bool one_block_of_1024_for_arch(int arch) { return arch == 80 || arch == 100; }
constexpr bool kOneBlockOf1024 = one_block_of_1024_for_arch(kCompiledArch);

// Every block of `block` threads that one SM holds: a full SM (one block of 1024 where
// kOneBlockOf1024 says so).
constexpr int full_sm_blocks(int block) {
  return block == 1024 && kOneBlockOf1024 ? 1 : blocks_per_sm_bound(block, sm_max_threads() / block);
}

// No minimum for __launch_bounds__(block, ...): 0, which states none and leaves the
// choice to the compiler (the same code as no second argument), except one block of
// 1024 where kOneBlockOf1024 says so.
constexpr int compiler_chosen_blocks(int block) { return block == 1024 && kOneBlockOf1024 ? 1 : 0; }

}  // namespace common
