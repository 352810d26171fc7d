// The `reduce` runner: verifies and times the registered stages and prints the table.
// Every per-stage executable is this runner with one stage preselected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace reduction {

// Device memory a run needs, by purpose.
struct MemoryNeed {
  std::size_t input = 0;
  std::size_t scratch = 0;
  std::size_t flush = 0;
  std::size_t total() const { return input + scratch + flush + (std::size_t{1} << 20); }
};

// Empty when the need fits in free_bytes; otherwise the sentence the runner prints
// (how many bytes were needed, for what, and how many are free).
std::string memory_shortfall(std::uint64_t n, const MemoryNeed& need, std::size_t free_bytes,
                             const std::string& device);

// `preselected` is a --stages value used when the user gives none (nullptr: all).
int reduce_main(int argc, const char* const* argv, const char* program, const char* preselected);

}  // namespace reduction
