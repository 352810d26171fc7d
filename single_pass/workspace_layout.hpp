// Where a single-pass sum keeps its state inside its scratch area (the workspace): one
// layout for the stages that count their blocks in global memory (13, 14 and 18, and
// the multi-GPU peer store), the generic library (single_pass.cuh, whose Workspace
// allocates it) and the lab (lab/lab.cuh).
//
//   byte 0    a 32-bit counter: the ticket (blocks that have finished; stage 18 and the
//             peer store count blocks that have started), back at zero when a launch ends
//   byte 64   the lab's launch tag (32 bits): its designs mark a launch's slots with a
//             launch number kept here; the stages and the library leave these bytes unused
//   byte 128  one slot per block (8 bytes; stage 13's partials are 4-byte floats): the
//             counter keeps its 128-byte line to itself, so no block's slot store shares
//             a line with the other blocks' atomic adds on the counter
#pragma once

#include <cstddef>

namespace reduction::workspace {

constexpr std::size_t kLaunchTagOffset = 64;
constexpr std::size_t kSlotsOffset = 128;

}  // namespace reduction::workspace
