// Plumbing shared by the multi-pass stages (02-05): reduce the array block by block,
// then reduce the block sums the same way, until one value is left. The stage's
// launcher loops over Passes and launches its kernel once per pass.
//
// Pass k reads the previous pass's output and writes a smaller array, alternating
// between two scratch buffers (never reading and writing one buffer in a launch);
// the last pass writes args.out.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "grid.hpp"
#include "stage.hpp"
#include "verify.hpp"

namespace reduction {

// Scratch for passes that shrink the array by `per_block` each time.
inline std::size_t multi_pass_scratch_bytes(std::size_t n, std::size_t per_block) {
  const std::size_t first = ceil_div(n, per_block);
  if (first <= 1) return 0;
  return (first + ceil_div(first, per_block)) * sizeof(float);
}

// Error depth: every pass is a tree over at most per_block values.
inline std::size_t multi_pass_depth(std::size_t n, std::size_t per_block) {
  std::size_t depth = 0;
  std::size_t m = n;
  do {
    depth += common::tree_depth(per_block < m ? per_block : m);
    m = ceil_div(m, per_block);
  } while (m > 1);
  return depth;
}

// One pass: `blocks` blocks reduce the m floats at src to m / per_block (rounded up)
// floats at dst; the last pass (blocks == 1) writes args.out.
struct Pass {
  const float* src;
  std::size_t m;
  float* dst;
  unsigned blocks;
};

// The passes of one sum, for a range-for in the stage's launcher:
//   for (const Pass& p : Passes(a, a.block)) kernel<<<p.blocks, ...>>>(p.src, p.m, p.dst);
// At least one pass; the array shrinks by per_block each time until one value is left.
class Passes {
 public:
  // The kernels of stages 02-05 run a shared-memory tree that halves (or doubles) a stride
  // until it passes the block: with a block that is not a power of two some element would
  // be added twice or never. The registry accepts only powers of two for them; a launcher
  // called directly with another size is refused here, before anything is enqueued.
  Passes(const StageArgs& a, std::size_t per_block) : out_(a.out), in_(a.in), n_(a.n), per_block_(per_block) {
    if (per_block == 0 || (per_block & (per_block - 1)) != 0)
      throw std::invalid_argument("the passes' block tree needs a power-of-two block size, not " +
                                  std::to_string(per_block));
    buffers_[0] = static_cast<float*>(a.scratch);
    buffers_[1] = a.scratch != nullptr ? buffers_[0] + ceil_div(a.n, per_block) : nullptr;
  }

  class Iterator {
   public:
    Iterator(const Passes* owner, const float* src, std::size_t m) : owner_(owner), src_(src), m_(m) {}
    Pass operator*() const {
      const std::size_t blocks = ceil_div(m_, owner_->per_block_);
      return {src_, m_, blocks == 1 ? owner_->out_ : owner_->buffers_[which_], static_cast<unsigned>(blocks)};
    }
    Iterator& operator++() {
      const Pass p = **this;
      src_ = p.dst;
      m_ = p.blocks == 1 ? 0 : p.blocks;  // 0: past the last pass
      which_ ^= 1;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return m_ != other.m_; }

   private:
    const Passes* owner_;
    const float* src_;
    std::size_t m_;
    int which_ = 0;
  };

  Iterator begin() const { return Iterator(this, in_, n_); }
  Iterator end() const { return Iterator(this, nullptr, 0); }

 private:
  float* out_;
  const float* in_;
  std::size_t n_;
  std::size_t per_block_;
  float* buffers_[2] = {nullptr, nullptr};
};

}  // namespace reduction
