// What one SM holds, for the architecture the current compilation pass targets, so that
// __launch_bounds__ can ask for a full SM on every GPU from sm_75 on without asking for
// more than the target has (ptxas refuses a minimum of blocks per SM it cannot hold).
// From the CUDA C++ Programming Guide's table of compute capabilities (threads and
// blocks per SM). The host pass (no __CUDA_ARCH__) sees the largest values; launch
// bounds only matter to the device passes.
#pragma once

namespace common {

// Threads and blocks one SM holds for compute capability `arch` (75, 80, 86, 89, 90, ...):
// 2,048 threads and 32 blocks on the data-centre parts (8.0, 9.0, 10.0, 10.3), 1,024 and 16
// on 7.5, 1,536 and 16 on 8.6 to 8.8, 1,536 and 24 on 8.9, 11.0 and 12.x (and, until the
// table says otherwise, on newer ones: the smaller limits are the safe guess, since ptxas
// refuses a bound an SM cannot hold). tests/host/test_sm_limits.py checks these against
// ptxas for every architecture the installed nvcc knows.
constexpr bool full_size_sm(int arch) { return arch == 80 || arch == 90 || arch == 100 || arch == 103; }
constexpr int max_threads_for_arch(int arch) { return arch < 80 ? 1024 : full_size_sm(arch) ? 2048 : 1536; }
constexpr int max_blocks_for_arch(int arch) {
  return full_size_sm(arch) ? 32 : (arch < 80 || (arch >= 86 && arch <= 88)) ? 16 : 24;
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

// ptxas, left to choose a kernel's registers (no minimum of blocks per SM stated), may aim
// at more resident blocks than the kernel's registers allow and spill a few bytes; so may
// a bound that leaves too few. The kernels where a target's ptxas does that ask for one
// block per SM on that target, which lets ptxas use every register one block leaves.
// one_block_on(archs...): 1 when the architecture being compiled is one of `archs`, else
// 0, which __launch_bounds__ reads as no minimum (the same code as no second argument):
// every other target, sm_90 included, keeps the code the results were measured with.
template <typename... Arch>
constexpr int one_block_on(Arch... arch) {
  return ((kCompiledArch == arch) || ...) ? 1 : 0;
}

// Whether a full SM of 1024-thread blocks is one block for `arch`: ptxas for sm_100 spills
// stage 18's kernel (full_sm_blocks' user) at two blocks of 1024 (32 registers a thread),
// where sm_80's and sm_90's fit it.
constexpr bool full_sm_of_1024_is_one_block(int arch) { return arch == 100; }

// Every block of `block` threads that one SM holds: a full SM (one block of 1024 where
// full_sm_of_1024_is_one_block says so).
constexpr int full_sm_blocks(int block) {
  return block == 1024 && full_sm_of_1024_is_one_block(kCompiledArch)
             ? 1
             : blocks_per_sm_bound(block, sm_max_threads() / block);
}

}  // namespace common
