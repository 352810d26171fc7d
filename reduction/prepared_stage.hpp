// A stage made ready to run on one input: its plan, its scratch memory and its
// arguments. The runner and the GPU tests both run stages through this.
#pragma once

#include <cstddef>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "stage.hpp"

namespace reduction {

class PreparedStage {
 public:
  // `block` 0 means the stage's preferred size on this device. The result goes to `out`
  // (one float on the device) when given, else to a float of the stage's own.
  PreparedStage(const Stage& stage, const float* input, std::size_t n, int block, const common::DeviceInfo& device,
                cudaStream_t stream, float* out = nullptr);
  // With the plan already made (stage.plan(n, block, device)) for this n and block.
  PreparedStage(const Stage& stage, const LaunchPlan& plan, const float* input, std::size_t n, int block,
                cudaStream_t stream, float* out = nullptr);

  // Poisons the output, launches once, waits, and returns what the stage wrote.
  float run_checked();
  // Enqueues the stage once (for timing); nothing else.
  void launch() const { stage_->launch(args_); }

  const Stage& stage() const { return *stage_; }
  const LaunchPlan& plan() const { return plan_; }
  const StageArgs& args() const { return args_; }
  int block() const { return args_.block; }

 private:
  const Stage* stage_;
  LaunchPlan plan_;
  common::DeviceBuffer<unsigned char> scratch_;
  common::DeviceBuffer<float> out_;  // empty when the caller gave `out`
  StageArgs args_;
};

// The block size a stage runs with: `requested` if non-zero, else its preferred
// size capped at the device limit; 0 for stages that take no block size.
int effective_block(const Stage& stage, int requested, const common::DeviceInfo& device);

}  // namespace reduction
