// The three builds of the SGEMM kernel in sgemm_tile.cuh, as 02_resource_usage and the
// tests see them.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace occupancy {

enum class SgemmBuild {
  plain,          // the compiler chooses the register count
  launch_bounds,  // __launch_bounds__(kSgemmBlockThreads, launch_bounds_min_blocks(arch))
  maxrregcount,   // compiled in its own file with --maxrregcount (occupancy/CMakeLists.txt)
};

constexpr int kSgemmBlockThreads = 256;
// The minimum blocks per SM of the launch-bounds build, for the architecture its code was
// compiled for: 4, one more resident block per SM than the plain build gets on sm_90
// (limited by its registers; chapters/21_occupancy.md has the table), which the compiler
// reaches without spilling up to sm_90; 3 for Blackwell (sm_100, sm_120), where 64
// registers a thread are too few for the tile and ptxas would spill.
constexpr int launch_bounds_min_blocks(int arch) { return arch >= 100 ? 3 : 4; }
// That minimum for the build that runs on the current GPU (chosen by its kernel image,
// common/kernel_image.hpp).
int sgemm_launch_bounds_min_blocks();

const std::vector<SgemmBuild>& all_sgemm_builds();
const char* sgemm_build_id(SgemmBuild build);     // "plain", "launch_bounds", "maxrregcount"
std::string sgemm_build_title(SgemmBuild build);  // "__launch_bounds__(256, 4)", ...

// The kernel, for cudaFuncGetAttributes and the occupancy API.
const void* sgemm_kernel(SgemmBuild build);

// Enqueues C = A x B (row-major, m x k times k x n) on `stream`; checks the launch.
void launch_sgemm(SgemmBuild build, const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);

// Defined in sgemm_maxrregcount.cu, the translation unit compiled with --maxrregcount.
const void* sgemm_maxrregcount_kernel();
void launch_sgemm_maxrregcount(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);
int sgemm_maxrregcount_limit();

// Grid of 64 x 64 tiles covering an m x n result.
dim3 sgemm_grid(int m, int n);

}  // namespace occupancy
