// What both multi-GPU programs share about NCCL and the stage each GPU sums with: the
// check around every NCCL call (a failure throws std::runtime_error naming NCCL's error
// string, its last error message, the expression and file:line, exit code 1 in the
// programs), the stage, and the memory NCCL is expected to take.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "reduction/registry.hpp"

namespace multi_gpu {

inline void check_nccl(ncclResult_t result, const char* expr, const char* file, int line) {
  if (result == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw std::runtime_error(std::string("NCCL error ") + ncclGetErrorString(result) +
                           (last != nullptr && *last != '\0' ? std::string(" (") + last + ")" : std::string()) +
                           " in " + expr + " at " + file + ":" + std::to_string(line));
}

// The stage every GPU sums its shard with: the project's best single-pass stage.
constexpr const char* kShardStage = "one_cluster";

inline const reduction::Stage& shard_stage() {
  static const reduction::Stage* s = reduction::find_stage(kShardStage);
  if (s == nullptr) throw std::logic_error(std::string("the registry has no stage '") + kShardStage + "'");
  return *s;
}

// What NCCL itself allocates on each GPU (its buffers per peer and channel) is not known
// before its communicators exist; this margin keeps the memory check from promising what
// cannot fit.
constexpr std::size_t kNcclAllowance = std::size_t{512} << 20;

}  // namespace multi_gpu

#define NCCL_CHECK(expr) ::multi_gpu::check_nccl((expr), #expr, __FILE__, __LINE__)
