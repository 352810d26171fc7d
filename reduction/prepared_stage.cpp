#include "prepared_stage.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "row_measure.hpp"
#include "verify.hpp"

namespace reduction {

int effective_block(const Stage& stage, int requested, const common::DeviceInfo& device) {
  if (!stage.blocks.configurable) return 0;
  if (requested != 0) return requested;
  return std::min(stage.blocks.preferred, max_block_for(stage, device.max_threads_per_block));
}

PreparedStage::PreparedStage(const Stage& stage, const float* input, std::size_t n, int block,
                             const common::DeviceInfo& device, cudaStream_t stream, float* out)
    : PreparedStage(stage, stage.plan(n, effective_block(stage, block, device), device), input, n,
                    effective_block(stage, block, device), stream, out) {}

PreparedStage::PreparedStage(const Stage& stage, const LaunchPlan& plan, const float* input, std::size_t n, int block,
                             cudaStream_t stream, float* out)
    : stage_(&stage), plan_(plan), scratch_(plan.scratch_bytes), out_(out != nullptr ? 0 : 1) {
  if (plan_.zero_scratch_once && scratch_.bytes() > 0) {
    CUDA_CHECK(cudaMemsetAsync(scratch_.get(), 0, scratch_.bytes(), stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  args_.in = input;
  args_.n = n;
  args_.out = out != nullptr ? out : out_.get();
  args_.scratch = scratch_.get();
  args_.scratch_bytes = plan_.scratch_bytes;
  args_.block = block;
  args_.grid = plan_.grid;
  args_.stream = stream;
}

float PreparedStage::run_checked() {
  return common::poisoned_run(
      args_.out, common::poison_value(), [this] { launch(); }, args_.stream);
}

}  // namespace reduction
