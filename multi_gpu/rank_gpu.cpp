// One GPU of one process (rank_gpu.hpp). Chapter: chapters/26_multi_gpu.md
#include "rank_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <stdexcept>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "nccl_check.hpp"
#include "reduction/prepared_stage.hpp"

namespace multi_gpu {
namespace {

// Sets `count` floats at `p` (device memory) to the poison value, on `stream`, and waits.
void poison(float* p, std::size_t count, cudaStream_t stream) {
  const std::vector<float> fill(count, common::poison_value());
  CUDA_CHECK(cudaMemcpyAsync(p, fill.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));  // `fill` must outlive the copy
}

}  // namespace

bool method_across_processes(Method m) { return !method_peer_store(m); }

struct RankGpu::State {
  common::DeviceInfo info;
  int block = 0;
  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  // Rank 0 (with copy_to_one): room for most_ranks shards, its own first; else its shard.
  common::DeviceBuffer<float> data;
  // Rank 0 with copy_to_one: its shard again, to put back what the other shards overwrote.
  common::DeviceBuffer<float> shard_copy;
  common::DeviceBuffer<float> reduced;   // allreduce_whole's output
  common::DeviceBuffer<float> partials;  // shard_then_fixed_order's all-gather output
  common::DeviceBuffer<float> result;    // the combined sum on this rank
  common::CudaEvent start;
  common::CudaEvent stop;
  std::vector<common::Reference> references;  // of the shard's first n, per setup size
  std::unique_ptr<reduction::PreparedStage> shard_sum;
  std::unique_ptr<reduction::PreparedStage> reduced_sum;  // rank 0
  std::unique_ptr<reduction::PreparedStage> whole_sum;    // rank 0: every shard gathered
  explicit State(int device) : info(common::query_device(device)) {}
};

RankGpu::RankGpu(const RankSetup& setup) : setup_(setup) {
  if (setup_.sizes.empty() || setup_.most_ranks < 1) throw std::logic_error("RankGpu needs a size and a team");
  std::sort(setup_.sizes.begin(), setup_.sizes.end());
  const std::uint64_t n_max = setup_.sizes.back();
  const common::Pattern pattern = common::parse_pattern(setup_.pattern);
  CUDA_CHECK(cudaSetDevice(setup_.device));
  const common::DeviceInfo info = common::query_device(setup_.device);
  const reduction::Stage& stage = shard_stage();
  const int block = reduction::effective_block(stage, 0, info);
  const bool holds_all = setup_.rank == 0 && setup_.copy_to_one && setup_.most_ranks > 1;
  const std::size_t shards = holds_all ? static_cast<std::size_t>(setup_.most_ranks) : 1;

  // Every refusal before any allocation.
  std::size_t scratch = stage.plan(n_max, block, info).scratch_bytes * 2;
  if (holds_all) scratch += stage.plan(shards * n_max, block, info).scratch_bytes;
  common::MemoryNeed need;
  need.add(holds_all ? "every shard" : "shard", shards * n_max * sizeof(float))
      .add("copy of shard 0", holds_all ? n_max * sizeof(float) : 0)
      .add("all-reduce output", n_max * sizeof(float))
      .add("scratch", scratch)
      .add("L2 flush buffer", setup_.flush_l2 ? common::l2_flush_bytes(info.l2_bytes) : 0)
      .add("NCCL allowance", kNcclAllowance);
  common::require_memory(
      need, "n = " + common::format_count(n_max) + " per GPU with " + std::to_string(setup_.most_ranks) + " rank(s)",
      "rank " + std::to_string(setup_.rank) + "'s GPU " + std::to_string(setup_.device) + " (" + info.name + ")");

  s_ = std::make_unique<State>(setup_.device);
  State& s = *s_;
  if (setup_.flush_l2) s.flusher = std::make_unique<common::L2Flusher>(s.info.l2_bytes, setup_.flush);
  s.block = block;
  s.data = common::DeviceBuffer<float>(shards * n_max);
  s.reduced = common::DeviceBuffer<float>(n_max);
  s.partials = common::DeviceBuffer<float>(static_cast<std::size_t>(setup_.most_ranks));
  s.result = common::DeviceBuffer<float>(1);
  const std::uint64_t seed = setup_.seed + static_cast<std::uint64_t>(setup_.rank);
  if (n_max >= (std::uint64_t{1} << 26))
    std::cerr << "rank " << setup_.rank << ": generating its shard: " << common::format_count(n_max) << " "
              << setup_.pattern << " floats (seed " << seed << ") and their double-precision references..."
              << std::endl;
  const std::vector<float> host = common::make_input(pattern, seed, n_max);
  for (const std::uint64_t n : setup_.sizes)
    s.references.push_back(
        n == n_max ? common::reference_sum(host)
                   : common::reference_sum(std::vector<float>(host.begin(), host.begin() + static_cast<long>(n))));
  common::copy_to_device(s.data.get(), host.data(), n_max * sizeof(float));
  if (holds_all) {
    s.shard_copy = common::DeviceBuffer<float>(n_max);
    common::copy_to_device(s.shard_copy.get(), host.data(), n_max * sizeof(float));
  }
}

RankGpu::~RankGpu() {
  leave();
  cudaSetDevice(setup_.device);  // the buffers are freed with their GPU current
}

void RankGpu::leave() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);  // no throw from a destructor
  comm_ = nullptr;
  team_size_ = 0;
  team_rank_ = 0;
  n_ = 0;
}

void RankGpu::join(int count, int rank, const ncclUniqueId& id) {
  if (count < 1 || count > setup_.most_ranks || rank < 0 || rank >= count)
    throw std::logic_error("RankGpu::join(" + std::to_string(count) + ", " + std::to_string(rank) + ")");
  leave();
  CUDA_CHECK(cudaSetDevice(setup_.device));
  s_->shard_sum.reset();
  s_->reduced_sum.reset();
  s_->whole_sum.reset();
  NCCL_CHECK(ncclCommInitRank(&comm_, count, id, rank));
  team_size_ = count;
  team_rank_ = rank;
}

void RankGpu::set_size(std::uint64_t n) {
  const auto it = std::find(setup_.sizes.begin(), setup_.sizes.end(), n);
  if (it == setup_.sizes.end() || comm_ == nullptr)
    throw std::logic_error("RankGpu::set_size(" + std::to_string(n) + ") without join() or outside the setup's sizes");
  size_index_ = static_cast<std::size_t>(it - setup_.sizes.begin());
  n_ = n;
  State& s = *s_;
  CUDA_CHECK(cudaSetDevice(setup_.device));
  const reduction::Stage& stage = shard_stage();
  s.shard_sum = std::make_unique<reduction::PreparedStage>(stage, stage.plan(n, s.block, s.info), s.data.get(), n,
                                                           s.block, s.stream.get());
  s.reduced_sum.reset();
  s.whole_sum.reset();
  if (team_rank_ != 0) return;
  s.reduced_sum = std::make_unique<reduction::PreparedStage>(stage, stage.plan(n, s.block, s.info), s.reduced.get(), n,
                                                             s.block, s.stream.get());
  const std::size_t all = static_cast<std::size_t>(team_size_) * n;
  if (all <= s.data.size())
    s.whole_sum = std::make_unique<reduction::PreparedStage>(stage, stage.plan(all, s.block, s.info), s.data.get(), all,
                                                             s.block, s.stream.get());
}

const common::Reference& RankGpu::reference() const { return s_->references[size_index_]; }

std::size_t RankGpu::stage_depth(Method m) const {
  if (team_rank_ == 0 && m == Method::allreduce_whole) return s_->reduced_sum->plan().error_depth;
  if (team_rank_ == 0 && m == Method::copy_to_one && s_->whole_sum) return s_->whole_sum->plan().error_depth;
  return s_->shard_sum->plan().error_depth;
}

void RankGpu::enqueue(Method m) {
  State& s = *s_;
  cudaStream_t stream = s.stream.get();
  const std::size_t n = n_;
  switch (m) {
    case Method::shard_then_one_float:
      s.shard_sum->launch();
      NCCL_CHECK(ncclAllReduce(s.shard_sum->args().out, s.result.get(), 1, ncclFloat, ncclSum, comm_, stream));
      return;
    case Method::shard_then_fixed_order:
      s.shard_sum->launch();
      NCCL_CHECK(ncclAllGather(s.shard_sum->args().out, s.partials.get(), 1, ncclFloat, comm_, stream));
      launch_add_in_rank_order(s.partials.get(), team_size_, s.result.get(), stream);
      return;
    case Method::allreduce_whole:
      NCCL_CHECK(ncclAllReduce(s.data.get(), s.reduced.get(), n, ncclFloat, ncclSum, comm_, stream));
      if (team_rank_ == 0) s.reduced_sum->launch();
      return;
    case Method::copy_to_one:
      // Rank r's shard lands right after rank r - 1's on rank 0, which then sums them all.
      if (team_rank_ == 0) {
        if (!s.whole_sum) throw std::logic_error("copy_to_one without room for every shard on rank 0");
        NCCL_CHECK(ncclGroupStart());
        for (int r = 1; r < team_size_; ++r)
          NCCL_CHECK(ncclRecv(s.data.get() + static_cast<std::size_t>(r) * n, n, ncclFloat, r, comm_, stream));
        NCCL_CHECK(ncclGroupEnd());
        s.whole_sum->launch();
      } else {
        NCCL_CHECK(ncclSend(s.data.get(), n, ncclFloat, 0, comm_, stream));
      }
      return;
    case Method::allreduce_one_float:
      NCCL_CHECK(ncclAllReduce(s.shard_sum->args().out, s.result.get(), 1, ncclFloat, ncclSum, comm_, stream));
      return;
    case Method::shard_then_peer_store:
    case Method::peer_store_one_float: break;
  }
  throw std::logic_error(std::string("RankGpu: ") + method_id(m) + " is not a row of one process per GPU");
}

float RankGpu::run_once(Method m) {
  if (n_ == 0) throw std::logic_error("RankGpu::run_once before set_size");
  State& s = *s_;
  cudaStream_t stream = s.stream.get();
  CUDA_CHECK(cudaSetDevice(setup_.device));
  // Poison every buffer this rank writes on its way to the sum (0xFF bytes are NaNs).
  poison(s.result.get(), 1, stream);
  if (m == Method::allreduce_one_float) {
    s.shard_sum->launch();  // its input, made outside what is timed
  } else if (m == Method::shard_then_one_float || m == Method::shard_then_fixed_order) {
    poison(s.shard_sum->args().out, 1, stream);
    if (m == Method::shard_then_fixed_order) poison(s.partials.get(), static_cast<std::size_t>(team_size_), stream);
  } else if (m == Method::allreduce_whole) {
    CUDA_CHECK(cudaMemsetAsync(s.reduced.get(), 0xFF, n_ * sizeof(float), stream));
    if (team_rank_ == 0) poison(s.reduced_sum->args().out, 1, stream);
  } else if (m == Method::copy_to_one && team_rank_ == 0) {
    if (team_size_ > 1)
      CUDA_CHECK(cudaMemsetAsync(s.data.get() + n_, 0xFF,
                                 (static_cast<std::size_t>(team_size_) - 1) * n_ * sizeof(float), stream));
    if (s.whole_sum) poison(s.whole_sum->args().out, 1, stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  enqueue(m);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (m == Method::copy_to_one) restore_shard();
  if (!holds_result(m)) return NAN;
  const float* source = s.result.get();
  if (!method_on_every_gpu(m))
    source = m == Method::allreduce_whole ? s.reduced_sum->args().out : s.whole_sum->args().out;
  float v = 0.0f;
  CUDA_CHECK(cudaMemcpy(&v, source, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

void RankGpu::restore_shard() {
  State& s = *s_;
  const std::size_t end = std::min(static_cast<std::size_t>(team_size_) * n_, s.shard_copy.size());
  if (team_rank_ != 0 || end <= n_) return;
  CUDA_CHECK(cudaSetDevice(setup_.device));
  common::copy_to_device(s.data.get() + n_, s.shard_copy.get() + n_, (end - n_) * sizeof(float),
                         cudaMemcpyDeviceToDevice);
}

void RankGpu::flush_l2() {
  if (s_->flusher) s_->flusher->flush(s_->stream.get());
}

void RankGpu::record_start() { CUDA_CHECK(cudaEventRecord(s_->start.get(), s_->stream.get())); }

void RankGpu::record_stop() { CUDA_CHECK(cudaEventRecord(s_->stop.get(), s_->stream.get())); }

double RankGpu::elapsed_us() {
  CUDA_CHECK(cudaEventSynchronize(s_->stop.get()));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, s_->start.get(), s_->stop.get()));
  return static_cast<double>(ms) * 1e3;
}

void RankGpu::synchronize() { CUDA_CHECK(cudaStreamSynchronize(s_->stream.get())); }

cudaStream_t RankGpu::stream() const { return s_->stream.get(); }

const common::DeviceInfo& RankGpu::info() const { return s_->info; }

}  // namespace multi_gpu
