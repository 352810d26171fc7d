// The scan ladder's baselines, measured in the same process and the same way as the
// stages: NVIDIA CUB's cub::DeviceScan::InclusiveSum and ExclusiveSum (the library call
// a reader would make; its temporary storage is sized by the planner and allocated by
// the runner, outside the timed region), and a device-to-device copy of the input, the
// bound a scan cannot beat: it reads and writes the same bytes and adds nothing.
// The int32 scans go through CUB as unsigned, the same bits with wrapping defined.
#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "cuda_check.hpp"
#include "dispatch.hpp"

namespace scan {
namespace {

template <bool kInclusive, typename T>
void cub_scan(void* temp, std::size_t& bytes, const T* in, T* out, std::size_t n, cudaStream_t stream) {
  // 32-bit counts (the runner's n is at most 2^31): CUB's 64-bit offsets spill registers.
  const auto count = static_cast<std::uint32_t>(n);
  if constexpr (kInclusive)
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, count, stream));
  else
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, count, stream));
}

template <bool kInclusive>
ScanPlan cub_plan(std::size_t n, ValueType type, const common::DeviceInfo&) {
  ScanPlan p;
  if (type == ValueType::i32)
    cub_scan<kInclusive>(nullptr, p.scratch_bytes, static_cast<const unsigned*>(nullptr),
                         static_cast<unsigned*>(nullptr), n, nullptr);
  else
    cub_scan<kInclusive>(nullptr, p.scratch_bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), n,
                         nullptr);
  // CUB does not document its order; it is a single pass with look-back over tiles of
  // some thousand values. Bounded as our stage 04 with tiles of 512, which over-counts.
  p.depth = {128, 8, 512};
  return p;
}

template <bool kInclusive>
void cub_launch(const ScanArgs& a) {
  std::size_t bytes = a.scratch_bytes;
  if (a.type == ValueType::i32)
    cub_scan<kInclusive>(a.scratch, bytes, static_cast<const unsigned*>(a.in), static_cast<unsigned*>(a.out), a.n,
                         a.stream);
  else
    cub_scan<kInclusive>(a.scratch, bytes, static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n, a.stream);
}

ScanPlan copy_plan(std::size_t, ValueType, const common::DeviceInfo&) { return {}; }

void copy_launch(const ScanArgs& a) {
  CUDA_CHECK(cudaMemcpyAsync(a.out, a.in, 4 * a.n, cudaMemcpyDeviceToDevice, a.stream));
}

}  // namespace

ScanStage describe_cub_inclusive() {
  ScanStage s;
  s.entry = Entry::cub;
  s.id = "cub_inclusive";
  s.title = "CUB InclusiveSum";
  s.source = "scan/baselines.cu";
  s.in_place = false;  // not measured here
  s.only_kind = static_cast<int>(ScanKind::inclusive);
  s.plan = cub_plan<true>;
  s.launch = cub_launch<true>;
  return s;
}

ScanStage describe_cub_exclusive() {
  ScanStage s = describe_cub_inclusive();
  s.id = "cub_exclusive";
  s.title = "CUB ExclusiveSum";
  s.only_kind = static_cast<int>(ScanKind::exclusive);
  s.plan = cub_plan<false>;
  s.launch = cub_launch<false>;
  return s;
}

ScanStage describe_copy() {
  ScanStage s;
  s.entry = Entry::copy;
  s.id = "copy";
  s.title = "copy bound (memcpy)";
  s.source = "scan/baselines.cu";
  s.in_place = false;
  s.plan = copy_plan;
  s.launch = copy_launch;
  return s;
}

}  // namespace scan
