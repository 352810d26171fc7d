// The GPUs of one process (gpu_team.hpp): their set-up, each method's work on every
// GPU, the checked run and the timed repetitions. Chapter: chapters/26_multi_gpu.md
#include "gpu_team.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "nccl_check.hpp"
#include "reduction/prepared_stage.hpp"
#include "reduction/registry.hpp"

namespace multi_gpu {
namespace {

// This thread drives every GPU of the team: each call that touches one makes it current first.
void set_device(int g) { CUDA_CHECK(cudaSetDevice(g)); }

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Sets `count` floats at `p` (device memory) to the poison value, on `stream`.
void poison(float* p, std::size_t count, cudaStream_t stream) {
  const std::vector<float> fill(count, common::poison_value());
  CUDA_CHECK(cudaMemcpyAsync(p, fill.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));  // `fill` must outlive the copy
}

}  // namespace

std::string keep_nvls_off() {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const char* value = std::getenv("NCCL_NVLS_ENABLE");
  return value != nullptr ? value : "";
}

std::string nccl_version() {
  int v = 0;
  NCCL_CHECK(ncclGetVersion(&v));
  // From NCCL 2.9 on the code is major * 10000 + minor * 100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

struct GpuTeam::Gpu {
  int ordinal = 0;
  common::DeviceInfo info;
  int block = 0;
  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  // GPU 0: room for every shard, its own first; another GPU: its shard.
  common::DeviceBuffer<float> data;
  // GPU 0, when there are other GPUs: its shard again. copy_to_one writes the other shards
  // right after shard 0's first n values, over the rest of it, which is put back from here.
  common::DeviceBuffer<float> shard_copy;
  common::DeviceBuffer<float> reduced;   // allreduce_whole's output
  common::DeviceBuffer<float> partials;  // shard_then_fixed_order's all-gather output
  common::DeviceBuffer<float> result;    // the combined sum on this GPU
  common::CudaEvent start;
  common::CudaEvent stop;
  common::CudaEvent copied;                   // copy_to_one: this GPU's shard has reached GPU 0
  std::vector<common::Reference> references;  // of this shard's first n, per setup size
  bool peer_with_0 = false;
  // The stage over this shard's first n; on GPU 0 also over the reduced array and over
  // every shard gathered (count x n).
  std::unique_ptr<reduction::PreparedStage> shard_sum;
  std::unique_ptr<reduction::PreparedStage> reduced_sum;
  std::unique_ptr<reduction::PreparedStage> whole_sum;
  // shard_then_peer_store's sum of this shard's first n: its plan, its counter and slots.
  PeerSumPlan peer_plan;
  common::DeviceBuffer<unsigned char> peer_scratch;

  explicit Gpu(int g) : ordinal(g), info(common::query_device(g)) {}
  // The members are freed after this body, with their own device current.
  ~Gpu() { cudaSetDevice(ordinal); }
};

GpuTeam::Gpu& GpuTeam::gpu(int g) const { return *gpus_[static_cast<std::size_t>(g)]; }

GpuTeam::GpuTeam(const TeamSetup& setup) : setup_(setup) {
  if (setup_.gpus < 1 || setup_.sizes.empty()) throw std::logic_error("GpuTeam needs a GPU and a size");
  std::sort(setup_.sizes.begin(), setup_.sizes.end());
  const std::uint64_t n_max = setup_.sizes.back();
  const std::size_t gpus = static_cast<std::size_t>(setup_.gpus);
  const common::Pattern pattern = common::parse_pattern(setup_.pattern);

  // Every refusal before any allocation.
  for (int g = 0; g < setup_.gpus; ++g) {
    const common::DeviceInfo info = common::query_device(g);
    const int block = reduction::effective_block(shard_stage(), 0, info);
    const std::size_t shard_values = g == 0 ? gpus * n_max : n_max;
    std::size_t scratch = shard_stage().plan(n_max, block, info).scratch_bytes * 2;
    if (g == 0) scratch += shard_stage().plan(gpus * n_max, block, info).scratch_bytes;
    common::MemoryNeed need;
    need.add(g == 0 ? "every shard" : "shard", shard_values * sizeof(float))
        .add("copy of shard 0", g == 0 && gpus > 1 ? n_max * sizeof(float) : 0)
        .add("all-reduce output", n_max * sizeof(float))
        .add("scratch", scratch)
        .add("L2 flush buffer", setup_.flush_l2 ? common::l2_flush_bytes(info.l2_bytes) : 0)
        .add("NCCL allowance", kNcclAllowance);
    common::require_memory(
        need, "n = " + common::format_count(n_max) + " per GPU on " + std::to_string(setup_.gpus) + " GPU(s)",
        "GPU " + std::to_string(g) + " (" + info.name + ")");
  }

  for (int g = 0; g < setup_.gpus; ++g) {
    set_device(g);
    auto p = std::make_unique<Gpu>(g);
    if (setup_.flush_l2) p->flusher = std::make_unique<common::L2Flusher>(p->info.l2_bytes, setup_.flush);
    p->block = reduction::effective_block(shard_stage(), 0, p->info);
    p->data = common::DeviceBuffer<float>(g == 0 ? gpus * n_max : n_max);
    p->reduced = common::DeviceBuffer<float>(n_max);
    p->partials = common::DeviceBuffer<float>(gpus);
    p->result = common::DeviceBuffer<float>(1);

    if (n_max >= (std::uint64_t{1} << 26))
      std::cerr << "generating shard " << g << ": " << common::format_count(n_max) << " " << setup_.pattern
                << " floats (seed " << setup_.seed + static_cast<std::uint64_t>(g)
                << ") and their double-precision references..." << std::endl;
    const std::vector<float> host = common::make_input(pattern, setup_.seed + static_cast<std::uint64_t>(g), n_max);
    for (const std::uint64_t n : setup_.sizes)
      p->references.push_back(
          n == n_max ? common::reference_sum(host)
                     : common::reference_sum(std::vector<float>(host.begin(), host.begin() + static_cast<long>(n))));
    common::copy_to_device(p->data.get(), host.data(), n_max * sizeof(float));
    if (g == 0 && gpus > 1) {
      p->shard_copy = common::DeviceBuffer<float>(n_max);
      common::copy_to_device(p->shard_copy.get(), host.data(), n_max * sizeof(float));
    }
    gpus_.push_back(std::move(p));
  }

  // Peer access both ways between GPU 0 and every other GPU, where the hardware allows it
  // (copy_to_one's path; the peer-store rows need it between every pair of the GPUs in
  // use, which use() enables).
  for (int g = 1; g < setup_.gpus; ++g) {
    int to = 0;
    int from = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&to, 0, g));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&from, g, 0));
    if (to == 0 || from == 0) continue;
    enable_peer(0, g);
    enable_peer(g, 0);
    gpu(g).peer_with_0 = true;
  }
}

GpuTeam::~GpuTeam() { destroy_comms(); }

void GpuTeam::destroy_comms() {
  for (ncclComm_t c : comms_) ncclCommDestroy(c);  // no throw from a destructor
  comms_.clear();
}

void GpuTeam::use(int count) {
  if (count < 1 || count > setup_.gpus)
    throw std::logic_error("GpuTeam::use(" + std::to_string(count) + ") outside 1.." + std::to_string(setup_.gpus));
  for (auto& p : gpus_) {
    set_device(p->ordinal);
    p->shard_sum.reset();
    p->reduced_sum.reset();
    p->whole_sum.reset();
  }
  n_ = 0;
  // One communicator per GPU in use, made anew for each count: a communicator's ranks
  // are fixed when it is made.
  destroy_comms();
  std::vector<int> devices(static_cast<std::size_t>(count));
  for (int g = 0; g < count; ++g) devices[static_cast<std::size_t>(g)] = g;
  comms_.resize(static_cast<std::size_t>(count));
  NCCL_CHECK(ncclCommInitAll(comms_.data(), count, devices.data()));
  // The peer-store rows: peer access between every pair, then the team's exchange areas
  // (new for every count: zeroed, launches numbered from 1; every GPU of the team takes
  // part in every launch, which the safety of the slots rests on, peer_store.cu).
  peer_.reset();
  peer_problem_ = enable_peer_access(devices);
  if (peer_problem_.empty()) peer_ = std::make_unique<PeerExchange>(devices);
}

void GpuTeam::set_size(std::uint64_t n) {
  const auto it = std::find(setup_.sizes.begin(), setup_.sizes.end(), n);
  if (it == setup_.sizes.end() || comms_.empty())
    throw std::logic_error("GpuTeam::set_size(" + std::to_string(n) + ") without use() or outside the setup's sizes");
  size_index_ = static_cast<std::size_t>(it - setup_.sizes.begin());
  n_ = n;
  // On every GPU: the stage over its shard's first n, and the peer-store sum's plan and
  // scratch; on GPU 0 also the stage over the reduced array and over every shard.
  const reduction::Stage& s = shard_stage();
  for (int g = 0; g < count(); ++g) {
    Gpu& p = gpu(g);
    set_device(g);
    p.shard_sum = std::make_unique<reduction::PreparedStage>(s, s.plan(n, p.block, p.info), p.data.get(), n, p.block,
                                                             p.stream.get());
    p.peer_plan = plan_peer_sum(p.data.get(), n, p.info.sm_count);
    p.peer_scratch = common::DeviceBuffer<unsigned char>(p.peer_plan.scratch_bytes);
    CUDA_CHECK(cudaMemset(p.peer_scratch.get(), 0, p.peer_scratch.bytes()));  // each launch leaves it zeroed
    CUDA_CHECK(cudaDeviceSynchronize());
    if (g != 0) continue;
    p.reduced_sum = std::make_unique<reduction::PreparedStage>(s, s.plan(n, p.block, p.info), p.reduced.get(), n,
                                                               p.block, p.stream.get());
    const std::size_t all = static_cast<std::size_t>(count()) * n;
    p.whole_sum = std::make_unique<reduction::PreparedStage>(s, s.plan(all, p.block, p.info), p.data.get(), all,
                                                             p.block, p.stream.get());
  }
}

int GpuTeam::count() const { return static_cast<int>(comms_.size()); }

std::uint64_t GpuTeam::n_per_gpu() const { return n_; }

std::uint64_t GpuTeam::peer_launches() const { return peer_ ? peer_->launches() : 0; }

common::Reference GpuTeam::reference() const {
  common::Reference r;
  for (int g = 0; g < count(); ++g) {
    r.sum += gpu(g).references[size_index_].sum;
    r.sum_abs += gpu(g).references[size_index_].sum_abs;
  }
  return r;
}

std::string GpuTeam::copy_path(int g) const {
  if (g == 0) return "local";
  return gpu(g).peer_with_0 ? "peer" : "host";
}

std::string GpuTeam::copy_paths() const {
  bool peer = false;
  bool host = false;
  for (int g = 1; g < count(); ++g) (gpu(g).peer_with_0 ? peer : host) = true;
  if (peer && host) return "peer+host";
  return peer ? "peer" : (host ? "host" : "local");
}

const std::string& GpuTeam::device_name(int g) const { return gpu(g).info.name; }

double GpuTeam::peak_gbs(int g) const { return gpu(g).info.peak_bandwidth_gbs(); }

void GpuTeam::restore_shard_0() {
  const std::size_t end = std::min(static_cast<std::size_t>(count()) * n_, gpu(0).shard_copy.size());
  if (end <= n_) return;
  set_device(0);
  common::copy_to_device(gpu(0).data.get() + n_, gpu(0).shard_copy.get() + n_, (end - n_) * sizeof(float),
                         cudaMemcpyDeviceToDevice);
}

void GpuTeam::sync_all() {
  for (int g = 0; g < count(); ++g) {
    set_device(g);
    CUDA_CHECK(cudaStreamSynchronize(gpu(g).stream.get()));
  }
}

// After a peer-store launch gave up waiting: once every GPU is idle (each waiting thread
// gives up by its deadline, so none waits for ever), the slots are cleared and the
// launches numbered from 1 again, so the next launch starts from a known state.
void GpuTeam::recover_peer_exchange() {
  sync_all();
  peer_->reset();
}

// Everything the method needs to produce its sum, on every GPU in use, and nothing
// else: no allocation, no synchronisation, no copy to the host. A peer-store row takes
// the team's next launch number, the same on every GPU, and launches one kernel per
// GPU from this thread: GPU 0's kernel may start before GPU 1's is enqueued and then
// waits for GPU 1's word, so a timed repetition holds every GPU at the start gate
// until all kernels are enqueued (the host's enqueue is not in the time).
void GpuTeam::enqueue(Method m) {
  const int count = this->count();
  const std::size_t n = n_;
  switch (m) {
    case Method::shard_then_one_float:
    case Method::shard_then_fixed_order:
      for (int g = 0; g < count; ++g) {
        set_device(g);
        gpu(g).shard_sum->launch();
      }
      NCCL_CHECK(ncclGroupStart());
      for (int g = 0; g < count; ++g) {
        Gpu& p = gpu(g);
        if (m == Method::shard_then_one_float)
          NCCL_CHECK(ncclAllReduce(p.shard_sum->args().out, p.result.get(), 1, ncclFloat, ncclSum,
                                   comms_[static_cast<std::size_t>(g)], p.stream.get()));
        else
          NCCL_CHECK(ncclAllGather(p.shard_sum->args().out, p.partials.get(), 1, ncclFloat,
                                   comms_[static_cast<std::size_t>(g)], p.stream.get()));
      }
      NCCL_CHECK(ncclGroupEnd());
      if (m == Method::shard_then_fixed_order)
        for (int g = 0; g < count; ++g) {
          set_device(g);
          launch_add_in_rank_order(gpu(g).partials.get(), count, gpu(g).result.get(), gpu(g).stream.get());
        }
      return;
    case Method::allreduce_whole:
      NCCL_CHECK(ncclGroupStart());
      for (int g = 0; g < count; ++g)
        NCCL_CHECK(ncclAllReduce(gpu(g).data.get(), gpu(g).reduced.get(), n, ncclFloat, ncclSum,
                                 comms_[static_cast<std::size_t>(g)], gpu(g).stream.get()));
      NCCL_CHECK(ncclGroupEnd());
      set_device(0);
      gpu(0).reduced_sum->launch();
      return;
    case Method::copy_to_one: {
      // Each GPU pushes its shard on its own stream, so the copies run at the same time;
      // without peer access the driver stages them through host memory.
      Gpu& zero = gpu(0);
      for (int g = 1; g < count; ++g) {
        Gpu& p = gpu(g);
        set_device(g);
        CUDA_CHECK(cudaMemcpyPeerAsync(zero.data.get() + static_cast<std::size_t>(g) * n, 0, p.data.get(), g,
                                       n * sizeof(float), p.stream.get()));
        CUDA_CHECK(cudaEventRecord(p.copied.get(), p.stream.get()));
      }
      set_device(0);
      for (int g = 1; g < count; ++g) CUDA_CHECK(cudaStreamWaitEvent(zero.stream.get(), gpu(g).copied.get(), 0));
      zero.whole_sum->launch();
      return;
    }
    case Method::allreduce_one_float:
      NCCL_CHECK(ncclGroupStart());
      for (int g = 0; g < count; ++g)
        NCCL_CHECK(ncclAllReduce(gpu(g).shard_sum->args().out, gpu(g).result.get(), 1, ncclFloat, ncclSum,
                                 comms_[static_cast<std::size_t>(g)], gpu(g).stream.get()));
      NCCL_CHECK(ncclGroupEnd());
      return;
    case Method::shard_then_peer_store:
    case Method::peer_store_one_float: {
      if (!peer_) throw std::logic_error("a peer-store row without peer access: " + peer_problem_);
      const PeerLaunch launch = peer_->next();
      for (int g = 0; g < count; ++g) {
        Gpu& p = gpu(g);
        set_device(g);
        if (m == Method::shard_then_peer_store)
          launch_peer_sum(p.data.get(), n, p.peer_plan, p.peer_scratch.get(), p.result.get(), peer_->view(g), launch,
                          p.stream.get());
        else
          launch_peer_exchange(p.shard_sum->args().out, p.result.get(), peer_->view(g), launch, p.stream.get());
      }
      return;
    }
  }
}

Outcome GpuTeam::run_checked(Method m, int launches, bool stagger) {
  if (n_ == 0) throw std::logic_error("GpuTeam::run_checked before set_size");
  const int count = this->count();
  const std::size_t n = n_;
  const bool on_every_gpu = method_on_every_gpu(m);
  nvtxRangePushA(method_id(m));
  // Poison every buffer the method writes on its way to the sum: a step that writes
  // nothing leaves a value no check accepts (0xFF bytes are NaNs in an input).
  for (int g = 0; g < count; ++g) {
    Gpu& p = gpu(g);
    set_device(g);
    cudaStream_t s = p.stream.get();
    poison(p.result.get(), 1, s);
    if (m == Method::allreduce_one_float || m == Method::peer_store_one_float) {
      // Its input is each GPU's partial, made here by the stage outside what is timed.
      p.shard_sum->launch();
    } else if (m == Method::shard_then_peer_store) {
      // One kernel from the shard to the sum: its partials never reach memory.
    } else if (on_every_gpu) {
      poison(p.shard_sum->args().out, 1, s);
      if (m == Method::shard_then_fixed_order) poison(p.partials.get(), static_cast<std::size_t>(count), s);
    } else if (m == Method::allreduce_whole) {
      CUDA_CHECK(cudaMemsetAsync(p.reduced.get(), 0xFF, n * sizeof(float), s));
      if (g == 0) poison(p.reduced_sum->args().out, 1, s);
    } else if (m == Method::copy_to_one && g == 0) {
      if (count > 1)
        CUDA_CHECK(
            cudaMemsetAsync(p.data.get() + n, 0xFF, (static_cast<std::size_t>(count) - 1) * n * sizeof(float), s));
      poison(p.whole_sum->args().out, 1, s);
    }
  }
  sync_all();
  for (int i = 0; i < launches; ++i) {
    if (stagger && count > 1) {
      set_device(i % count);
      launch_spin(20000, gpu(i % count).stream.get());
    }
    enqueue(m);
  }
  sync_all();
  if (m == Method::copy_to_one) restore_shard_0();
  const bool gave_up = method_peer_store(m) && peer_->gave_up();
  if (gave_up) recover_peer_exchange();

  Outcome o;
  std::vector<const float*> sources;
  if (on_every_gpu)
    for (int g = 0; g < count; ++g) sources.push_back(gpu(g).result.get());
  else
    sources.push_back(m == Method::allreduce_whole ? gpu(0).reduced_sum->args().out : gpu(0).whole_sum->args().out);
  for (std::size_t g = 0; g < sources.size(); ++g) {
    set_device(static_cast<int>(g));
    float v = 0.0f;
    CUDA_CHECK(cudaMemcpy(&v, sources[g], sizeof v, cudaMemcpyDeviceToHost));
    o.results.push_back(v);
  }
  nvtxRangePop();

  // The bound: the stage's depth over what it sums, plus the combine's. NCCL does not
  // promise an order for its sum of `count` values; any order adds each value at most
  // count - 1 times, the depth of the rank-order sum too (the peer-store rows' order).
  const std::size_t combine = static_cast<std::size_t>(count) - 1;
  std::size_t stage_depth = 0;
  if (m == Method::copy_to_one)
    stage_depth = gpu(0).whole_sum->plan().error_depth;
  else if (m == Method::allreduce_whole)
    stage_depth = gpu(0).reduced_sum->plan().error_depth;
  else if (m == Method::shard_then_peer_store)
    for (int g = 0; g < count; ++g) stage_depth = std::max(stage_depth, gpu(g).peer_plan.error_depth);
  else
    for (int g = 0; g < count; ++g) stage_depth = std::max(stage_depth, gpu(g).shard_sum->plan().error_depth);
  o.bound.depth = stage_depth + (m == Method::copy_to_one ? 0 : combine);

  const common::Reference ref = reference();
  const std::size_t total = static_cast<std::size_t>(count) * n;
  o.check = common::check_sum(o.results[0], ref, o.bound, total);
  for (std::size_t g = 1; g < o.results.size(); ++g) {
    o.same_bits = o.same_bits && bits_of(o.results[g]) == bits_of(o.results[0]);
    const common::Check c = common::check_sum(o.results[g], ref, o.bound, total);
    if (!c.ok && o.check.ok) {
      o.check = c;
      o.check.detail = "GPU " + std::to_string(g) + ": " + c.detail;
    }
  }
  // Every GPU adds the same partials in the same order in the fixed-order and peer-store rows.
  if (method_deterministic(m) && method_on_every_gpu(m) && !o.same_bits && o.check.ok) {
    o.check.ok = false;
    o.check.detail = "the GPUs hold different bits, though each adds the same partials in the same order";
  }
  if (gave_up) {
    o.check.ok = false;
    o.check.unbounded = false;
    o.check.detail = "the peer exchange gave up waiting for a GPU's word after " + std::to_string(peer_->limit_ms()) +
                     " ms (every GPU must run every launch)";
  }
  return o;
}

double GpuTeam::one_repetition(Method m, bool gated) {
  const unsigned ticket = ++ticket_;
  for (int g = 0; g < count(); ++g) {
    Gpu& p = gpu(g);
    set_device(g);
    if (p.flusher) p.flusher->flush(p.stream.get());
    if (gated) gate_.enqueue(p.stream.get(), ticket, g);
    CUDA_CHECK(cudaEventRecord(p.start.get(), p.stream.get()));
  }
  enqueue(m);
  for (int g = 0; g < count(); ++g) {
    set_device(g);
    CUDA_CHECK(cudaEventRecord(gpu(g).stop.get(), gpu(g).stream.get()));
  }
  if (gated) gate_.open(ticket, count());
  double slowest = 0.0;
  for (int g = 0; g < count(); ++g) {
    set_device(g);
    CUDA_CHECK(cudaEventSynchronize(gpu(g).stop.get()));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, gpu(g).start.get(), gpu(g).stop.get()));
    slowest = std::max(slowest, static_cast<double>(ms) * 1e3);
  }
  return slowest;
}

TimedOutcome GpuTeam::time(Method m, const common::TimingOptions& timing) {
  if (n_ == 0) throw std::logic_error("GpuTeam::time before set_size");
  const std::string range = std::string(method_id(m)) + " (timed)";
  nvtxRangePushA(range.c_str());
  for (int i = 0; i < timing.warmup; ++i) {
    for (int g = 0; g < count(); ++g) {
      set_device(g);
      if (gpu(g).flusher) gpu(g).flusher->flush(gpu(g).stream.get());
    }
    enqueue(m);
    sync_all();
  }

  TimedOutcome out;
  std::vector<double> samples;
  int reps = 0;
  // A broken exchange (peer_store.cu's deadline) fails the row at once: nothing is timed.
  const auto exchange_broke = [&] {
    if (!method_peer_store(m) || !peer_->gave_up()) return false;
    recover_peer_exchange();
    out.gave_up = true;
    return true;
  };
  while (!exchange_broke() && (reps == 0 || static_cast<int>(samples.size()) < reps)) {
    const auto t0 = std::chrono::steady_clock::now();
    const double us = one_repetition(m, out.gated);
    if (out.gated && gate_.gave_up()) {
      // The gate opened by its own deadline, not the host's: a call in the enqueue
      // waited for the GPU. Start again without it, saying so in the row.
      gate_.reset();
      out.gated = false;
      samples.clear();
      reps = 0;
      continue;
    }
    if (exchange_broke()) break;
    samples.push_back(us);
    if (reps == 0)
      reps = common::planned_repetitions(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), timing);
  }
  nvtxRangePop();
  if (m == Method::copy_to_one) restore_shard_0();
  if (out.gave_up) return out;
  out.timing.us = common::summarize(samples);
  out.timing.reps_run = reps;
  out.timing.capped = reps < std::max(timing.reps, 1);
  return out;
}

std::vector<std::string> GpuTeam::describe() const {
  std::vector<std::string> lines;
  for (const auto& p : gpus_) {
    std::string line = "GPU " + std::to_string(p->ordinal) + ": " + p->info.name;
    if (p->ordinal > 0) {
      int rank = 0;
      const bool peer = p->peer_with_0;
      if (peer) CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, p->ordinal, 0));
      line += std::string(", peer access with GPU 0: ") +
              (peer ? "yes (performance rank " + std::to_string(rank) + ")" : "no (copies go through the host)");
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace multi_gpu
