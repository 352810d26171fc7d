// Picking a kernel compiled for one block size from a block size known at run time.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduction {

// Calls body(std::integral_constant<unsigned, B>{}) for B == block and returns what it
// returns; the stages that use it compile their kernels for exactly these sizes, which
// their BlockSizes (powers of two from 32 to 1024) already enforce.
template <typename Body>
decltype(auto) with_block_size(const char* stage, int block, Body&& body) {
  switch (block) {
    case 32: return body(std::integral_constant<unsigned, 32>{});
    case 64: return body(std::integral_constant<unsigned, 64>{});
    case 128: return body(std::integral_constant<unsigned, 128>{});
    case 256: return body(std::integral_constant<unsigned, 256>{});
    case 512: return body(std::integral_constant<unsigned, 512>{});
    case 1024: return body(std::integral_constant<unsigned, 1024>{});
    default:
      throw std::invalid_argument(std::string("stage ") + stage +
                                  " has kernels for blocks of 32, 64, 128, 256, 512 and 1024 threads, not " +
                                  std::to_string(block) + ".");
  }
}

}  // namespace reduction
