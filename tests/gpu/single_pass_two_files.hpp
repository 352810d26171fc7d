// What test_single_pass_file_a.cu and test_single_pass_file_b.cu both run: every path of
// single_pass/single_pass.cuh (one block, one cluster, the tagged ticket for 4-byte values
// and the released ticket for 8-byte values) for float, double, int32, int64 and uint32,
// from the file that includes this, checked against host references. Everything here has
// internal linkage, so each file runs its own copy; the library's own functions are
// whatever copy the linker keeps, which is the situation of a client with two .cu files.
// STEPS=sanitize scripts/device.sh library runs this binary under compute-sanitizer's four tools.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "single_pass.cuh"
#include "typed_values.hpp"

namespace {

namespace two_files {

namespace g = reduction::generic;

using test_inputs::typed_values;

// The sum of `host` in double and the bound on a float or double sum of it: unit
// roundoff x (per-thread chain, at most n / 1024 for these grids, + 64 for the trees) x
// the sum of magnitudes.
template <typename T>
bool sum_is_close(T gpu, const std::vector<T>& host) {
  double ref = 0.0, magnitude = 0.0;
  for (T x : host) {
    ref += static_cast<double>(x);
    magnitude += std::fabs(static_cast<double>(x));
  }
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const double depth = static_cast<double>(host.size()) / 1024.0 + 64.0;
  return std::fabs(static_cast<double>(gpu) - ref) <= depth * u * magnitude * 1.01;
}

template <typename T, typename Op>
T reduce_on_gpu(const std::vector<T>& host, const g::Workspace& ws, cudaStream_t stream) {
  common::DeviceBuffer<T> in(host.size());
  common::DeviceBuffer<T> out(1);
  common::copy_to_device(in.get(), host.data(), host.size() * sizeof(T));
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xff, sizeof(T), stream));  // poison: NaN or -1
  g::reduce<T, Op>(in.get(), host.size(), out.get(), ws, stream);
  T result{};
  CUDA_CHECK(cudaMemcpyAsync(&result, out.get(), sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

// n on each side of the limits of the paths for T at the default block size.
template <typename T>
std::vector<std::size_t> path_sizes() {
  const std::size_t one_block = std::size_t{g::kDefaultBlock} * g::kSmallLoads * g::Pack<T>::kCount;
  const std::size_t cluster8 = std::size_t{8} * g::kDefaultBlock * g::kClusterLoads * g::Pack<T>::kCount;
  return {1, one_block, one_block + 1, cluster8, cluster8 + 1, 2 * cluster8 + 1, (std::size_t{1} << 20) + 7};
}

// Sums and maxima of T at every path from this file.
template <typename T>
void every_path(const char* file) {
  common::CudaStream stream;
  const g::Workspace ws(0, stream.get());
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  bool took_cluster = false, took_ticket = false;
  for (std::size_t n : path_sizes<T>()) {
    const auto host = typed_values<T>(n, 17 + n);
    const unsigned grid = g::grid_for<T, g::Sum>(n, ws.sm_count());
    took_cluster = took_cluster || grid == 8 || grid == 16;
    took_ticket = took_ticket || grid > 16;
    INFO(file << ": n=" << n << " sizeof(T)=" << sizeof(T) << " grid=" << grid);
    const T sum = reduce_on_gpu<T, g::Sum>(host, ws, stream.get());
    if constexpr (std::is_integral_v<T>) {
      // Exact, modulo 2^(bits of T).
      using U = std::make_unsigned_t<T>;
      std::uint64_t ref = 0;
      for (T x : host) ref += static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
      CHECK(static_cast<U>(sum) == static_cast<U>(ref));
    } else {
      CHECK(sum_is_close(sum, host));
    }
    T most = host[0];
    for (T x : host) most = x > most ? x : most;
    CHECK(reduce_on_gpu<T, g::Max>(host, ws, stream.get()) == most);
  }
  CHECK(took_ticket);
  CHECK(took_cluster == (major >= 9));
}

// This file's own copy of the cluster kernel, launched directly as the largest cluster
// the library allows for it: the set-up (the non-portable cluster size) must have been
// made for this very address, whatever another file did first.
template <typename T>
void own_cluster_kernel(const char* file) {
  constexpr int kBlock = g::kDefaultBlock;
  const auto kernel = g::cluster_kernel<T, g::Sum, kBlock, g::kDefaultUnroll>;
  const int blocks = g::cluster_blocks_for(kernel, kBlock);
  if (blocks == 0) return;  // no clusters below compute capability 9.0
  const std::size_t n = static_cast<std::size_t>(blocks) * kBlock * g::kClusterLoads * g::Pack<T>::kCount - 3;
  const auto host = typed_values<T>(n, 99);
  common::DeviceBuffer<T> in(n);
  common::DeviceBuffer<T> out(1);
  common::copy_to_device(in.get(), host.data(), n * sizeof(T));
  CUDA_CHECK(cudaMemset(out.get(), 0xff, sizeof(T)));
  const g::ClusterLaunch cluster(static_cast<unsigned>(blocks), kBlock, nullptr);
  INFO(file << ": its own cluster_kernel at " << reinterpret_cast<const void*>(kernel) << ", " << blocks << " blocks");
  CHECK(cudaLaunchKernelEx(&cluster.config, kernel, static_cast<const T*>(in.get()), n,
                           g::chunk_for<T, kBlock>(in.get(), n, static_cast<unsigned>(blocks)), out.get(),
                           g::Sum{}) == cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  T sum{};
  CUDA_CHECK(cudaMemcpy(&sum, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(sum_is_close(sum, host));
}

inline const void* cluster_kernel_address() {
  return reinterpret_cast<const void*>(g::cluster_kernel<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>);
}

inline void run_from(const char* file) {
  every_path<float>(file);
  every_path<double>(file);
  every_path<int>(file);
  every_path<long long>(file);
  every_path<std::uint32_t>(file);
  own_cluster_kernel<float>(file);
  own_cluster_kernel<double>(file);
}

}  // namespace two_files

}  // namespace
