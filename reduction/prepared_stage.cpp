#include "prepared_stage.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "verify.hpp"

namespace reduction {

int effective_block(const Stage& stage, int requested, const common::DeviceInfo& device) {
  if (!stage.blocks.configurable) return 0;
  if (requested != 0) return requested;
  return std::min(stage.blocks.preferred, max_block_for(stage, device.max_threads_per_block));
}

PreparedStage::PreparedStage(const Stage& stage, const float* input, std::size_t n, int block,
                             const common::DeviceInfo& device, cudaStream_t stream)
    : stage_(&stage), out_(1) {
  const int b = effective_block(stage, block, device);
  plan_ = stage.plan(n, b, device);
  scratch_ = common::DeviceBuffer<unsigned char>(plan_.scratch_bytes);
  if (plan_.zero_scratch_once && scratch_.bytes() > 0) {
    CUDA_CHECK(cudaMemsetAsync(scratch_.get(), 0, scratch_.bytes(), stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  args_.in = input;
  args_.n = n;
  args_.out = out_.get();
  args_.scratch = scratch_.get();
  args_.scratch_bytes = plan_.scratch_bytes;
  args_.block = b;
  args_.grid = plan_.grid;
  args_.stream = stream;
}

float PreparedStage::run_checked() {
  const float poison = common::poison_value();
  CUDA_CHECK(cudaMemcpyAsync(out_.get(), &poison, sizeof poison, cudaMemcpyHostToDevice, args_.stream));
  launch();
  float result = 0.0f;
  CUDA_CHECK(cudaMemcpyAsync(&result, out_.get(), sizeof result, cudaMemcpyDeviceToHost, args_.stream));
  CUDA_CHECK(cudaStreamSynchronize(args_.stream));
  return result;
}

}  // namespace reduction
