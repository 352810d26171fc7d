// multi_gpu/: every method of the multi-GPU sum on one GPU (NCCL with a single rank) at
// sizes that leave blocks and vectors partly full, for several input patterns; on one
// GPU every method but the peer-store sum reduces to the stage's own sum of the one
// shard, so all of those give the same bits. The fixed-order combine gives the same bits
// run after run. Where the machine has several GPUs, every method runs on all of them too.
// The peer-store combine (multi_gpu/peer_store.cu): the right sum and the same bits on
// every GPU, launch after launch with no synchronisation between, one GPU held back at a
// time, as the grids change with n; the same with the ranks as streams of one GPU (so it
// runs on a one-GPU machine too); and its deadline, which turns a missing GPU into a
// failed launch rather than a hang. One process per GPU (rank_gpu.hpp): a one-rank team
// gives every NCCL row the bits of the one-process team (multi_gpu_mpi's runs with
// several ranks: tests/gpu/test_multi_gpu_mpi.py).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "gpu_team.hpp"
#include "inputs.hpp"
#include "kernels.hpp"
#include "peer_store.hpp"
#include "rank_gpu.hpp"
#include "verify.hpp"

using multi_gpu::GpuTeam;
using multi_gpu::Method;

namespace {

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

multi_gpu::TeamSetup setup_for(int gpus, std::vector<std::uint64_t> sizes, const std::string& pattern) {
  multi_gpu::TeamSetup s;
  s.gpus = gpus;
  s.sizes = std::move(sizes);
  s.pattern = pattern;
  s.seed = 7;
  return s;
}

const std::vector<std::uint64_t> kSizes = {1, 33, 1025, 4097, (std::uint64_t{1} << 20) + 7, std::uint64_t{3} << 22};

}  // namespace

TEST_CASE("NCCL_NVLS_ENABLE is set to 0 unless the environment sets it", "[multi_gpu]") {
  const char* before = std::getenv("NCCL_NVLS_ENABLE");
  const std::string saved = before != nullptr ? before : "";
  unsetenv("NCCL_NVLS_ENABLE");
  CHECK(multi_gpu::keep_nvls_off() == "0");
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  CHECK(multi_gpu::keep_nvls_off() == "1");
  if (before != nullptr)
    setenv("NCCL_NVLS_ENABLE", saved.c_str(), 1);
  else
    setenv("NCCL_NVLS_ENABLE", "0", 1);
}

TEST_CASE("every method on one GPU matches the reference and the stage's own bits", "[multi_gpu]") {
  multi_gpu::keep_nvls_off();
  for (const char* pattern : {"uniform", "mixed_signs", "ones", "large", "with_nan"}) {
    GpuTeam team(setup_for(1, kSizes, pattern));
    team.use(1);
    const std::vector<float> shard = common::make_input(common::parse_pattern(pattern), 7, kSizes.back());
    for (const std::uint64_t n : kSizes) {
      team.set_size(n);
      INFO("pattern " << pattern << ", n " << n);
      // The team's reference is that of the first n values of shard 0 (seed 7).
      const common::Reference direct =
          common::reference_sum(std::vector<float>(shard.begin(), shard.begin() + static_cast<long>(n)));
      const common::Reference ref = team.reference();
      if (std::isnan(direct.sum))
        CHECK(std::isnan(ref.sum));
      else
        CHECK(ref.sum == direct.sum);

      REQUIRE(team.peer_store_problem().empty());  // one GPU: no peer to reach
      std::vector<float> results;
      std::vector<Method> methods;
      float peer_sum = 0.0f;
      for (const Method m : multi_gpu::all_methods()) {
        const multi_gpu::Outcome o = team.run_checked(m);
        INFO("method " << multi_gpu::method_id(m) << ": " << o.check.detail);
        REQUIRE(o.results.size() == 1);
        CHECK_FALSE(common::is_poison(o.results[0]));
        CHECK(o.check.ok);
        CHECK(o.bound.depth > 0);
        if (m == Method::shard_then_peer_store) {
          peer_sum = o.results[0];
        } else {
          results.push_back(o.results[0]);
          methods.push_back(m);
        }
      }
      // One rank: each all-reduce and all-gather is a copy, the copy to GPU 0 moves
      // nothing and the peer exchange has no peer, so every method but the peer-store
      // sum (a kernel of its own) is the stage's sum of the same n values.
      for (std::size_t i = 1; i < results.size(); ++i) {
        INFO("method " << multi_gpu::method_id(methods[i]) << " gave " << results[i] << ", the first method "
                       << results[0]);
        CHECK(bits(results[i]) == bits(results[0]));
      }
      // The peer-store sum's own order is fixed by n: the same bits again, launch after launch.
      const multi_gpu::Outcome again = team.run_checked(Method::shard_then_peer_store, 7);
      CHECK(bits(again.results[0]) == bits(peer_sum));
    }
  }
}

TEST_CASE("the fixed-order combine gives the same bits run after run", "[multi_gpu]") {
  multi_gpu::keep_nvls_off();
  const std::vector<std::uint64_t> sizes = {4097, (std::uint64_t{1} << 22) + 3};
  GpuTeam team(setup_for(1, sizes, "mixed_signs"));
  team.use(1);
  for (const std::uint64_t n : sizes) {
    team.set_size(n);
    const multi_gpu::Outcome first = team.run_checked(Method::shard_then_fixed_order);
    REQUIRE(first.check.ok);
    for (int run = 0; run < 20; ++run) {
      const multi_gpu::Outcome again = team.run_checked(Method::shard_then_fixed_order);
      INFO("n " << n << ", run " << run << ": " << again.results[0] << " after " << first.results[0]);
      REQUIRE(bits(again.results[0]) == bits(first.results[0]));
    }
    // Timing runs the same work and leaves it correct.
    common::TimingOptions timing;
    timing.reps = 5;
    timing.min_reps = 5;
    const multi_gpu::TimedOutcome t = team.time(Method::shard_then_fixed_order, timing);
    CHECK(t.timing.reps_run == 5);
    CHECK(t.timing.us.median > 0.0);
    CHECK(t.gated);
    CHECK(bits(team.run_checked(Method::shard_then_fixed_order).results[0]) == bits(first.results[0]));
  }
}

TEST_CASE("every method on every GPU present", "[multi_gpu]") {
  const int present = common::cuda_device_count();
  if (present < 2) {
    WARN("one GPU: the methods across several GPUs are not exercised here");
    return;
  }
  multi_gpu::keep_nvls_off();
  const std::vector<std::uint64_t> sizes = {1, 1025, (std::uint64_t{1} << 20) + 7};
  GpuTeam team(setup_for(present, sizes, "mixed_signs"));
  for (const int count : {2, present}) {
    team.use(count);
    for (const std::uint64_t n : sizes) {
      team.set_size(n);
      for (const Method m : multi_gpu::all_methods()) {
        if (multi_gpu::method_peer_store(m) && !team.peer_store_problem().empty()) {
          WARN(count << " GPUs: " << team.peer_store_problem());
          continue;
        }
        const multi_gpu::Outcome o = team.run_checked(m);
        INFO(count << " GPUs, n " << n << ", method " << multi_gpu::method_id(m) << ": " << o.check.detail);
        CHECK(o.check.ok);
        if (multi_gpu::method_deterministic(m) && multi_gpu::method_on_every_gpu(m)) CHECK(o.same_bits);
      }
    }
  }
}

namespace {

// The GPU counts the peer-store tests use: 1, 2, 4 and every GPU present, as far as
// there are GPUs (at most multi_gpu::kMostPeerGpus).
std::vector<int> peer_counts() {
  const int present = std::min(common::cuda_device_count(), multi_gpu::kMostPeerGpus);
  std::vector<int> counts;
  for (const int c : {1, 2, 4, present})
    if (c <= present && std::find(counts.begin(), counts.end(), c) == counts.end()) counts.push_back(c);
  std::sort(counts.begin(), counts.end());
  return counts;
}

}  // namespace

TEST_CASE("the peer-store rows give the right sum and the same bits on every GPU, launch after launch",
          "[multi_gpu][peer_store]") {
  multi_gpu::keep_nvls_off();
  const std::vector<std::uint64_t> sizes = {
      1, 33, 4097, (std::uint64_t{1} << 16) + 3, (std::uint64_t{1} << 20) + 7, std::uint64_t{3} << 21};
  const std::vector<int> counts = peer_counts();
  GpuTeam team(setup_for(counts.back(), sizes, "mixed_signs"));
  for (const int count : counts) {
    team.use(count);
    if (!team.peer_store_problem().empty()) {
      WARN(count << " GPUs: the peer-store rows cannot run: " << team.peer_store_problem());
      continue;
    }
    std::map<std::uint64_t, std::uint32_t> first_bits;
    std::uint64_t launches = 0;
    for (int round = 0; round < 3; ++round) {
      for (const std::uint64_t n : sizes) {  // every n a new grid
        team.set_size(n);
        INFO(count << " GPUs, n " << n << ", round " << round);
        const multi_gpu::Outcome once = team.run_checked(Method::shard_then_peer_store);
        INFO(once.check.detail);
        REQUIRE(once.check.ok);  // a broken exchange stops here, not after 80 launches that give up
        // Back to back with no synchronisation, a different GPU held back before each launch.
        const multi_gpu::Outcome many = team.run_checked(Method::shard_then_peer_store, 40, true);
        const multi_gpu::Outcome exchange = team.run_checked(Method::peer_store_one_float, 40, true);
        const multi_gpu::Outcome fixed = team.run_checked(Method::shard_then_fixed_order);
        launches += 1 + 40 + 40;
        for (const multi_gpu::Outcome* o : {&once, &many, &exchange, &fixed}) {
          INFO(o->check.detail);
          CHECK(o->check.ok);
          CHECK(o->same_bits);
          REQUIRE(o->results.size() == static_cast<std::size_t>(count));
        }
        CHECK(bits(many.results[0]) == bits(once.results[0]));
        // The exchange alone adds the stage's partials in rank order, as the fixed-order row does.
        CHECK(bits(exchange.results[0]) == bits(fixed.results[0]));
        const auto seen = first_bits.emplace(n, bits(once.results[0]));
        CHECK(seen.first->second == bits(once.results[0]));
      }
    }
    CHECK(team.peer_launches() == launches);

    // Timing runs the same launches and leaves them correct.
    team.set_size(sizes.back());
    common::TimingOptions timing;
    timing.reps = 5;
    timing.min_reps = 5;
    for (const Method m : {Method::shard_then_peer_store, Method::peer_store_one_float}) {
      INFO(count << " GPUs, timing " << multi_gpu::method_id(m));
      const multi_gpu::TimedOutcome t = team.time(m, timing);
      CHECK_FALSE(t.gave_up);
      CHECK(t.gated);
      CHECK(t.timing.reps_run == 5);
      CHECK(t.timing.us.median > 0.0);
    }
    CHECK(bits(team.run_checked(Method::shard_then_peer_store).results[0]) == first_bits[sizes.back()]);
  }
}

namespace {

// One rank of the exchange driven by hand: its shard, a stream of its own on its GPU,
// the fused sum's plans for every size, and an output per launch.
struct Rank {
  int device;
  common::CudaStream stream;
  common::DeviceBuffer<float> shard;
  common::DeviceBuffer<float> partial;  // the exchange-alone launches' input
  common::DeviceBuffer<float> outs;
  common::DeviceBuffer<unsigned char> scratch;
  std::vector<multi_gpu::PeerSumPlan> plans;
  std::vector<common::Reference> refs;
  float partial_value = 0.0f;
  explicit Rank(int d) : device(d) {}
  ~Rank() { cudaSetDevice(device); }  // the members are freed with their own GPU current
};

const std::vector<std::size_t> kStressSizes = {
    1, 33, 4097, (std::size_t{1} << 16) + 3, (std::size_t{1} << 20) + 5, std::size_t{3} << 19};

// The size of launch i: the sizes in an order that keeps changing.
std::size_t stress_size(int i) { return (static_cast<std::size_t>(i) * 7 + static_cast<std::size_t>(i) / 5) % 6; }

// Rank r on GPU devices[r], each on a stream of its own (two ranks may share a GPU): two
// of every three launches the fused sum, at a size that changes every launch, the third
// the exchange alone; the ranks' launches enqueued in a shuffled order, one rank held back
// by a spin kernel before each, and nothing synchronised but after launch 1 and every
// 100th (to fail early where the exchange gives up, limit_ms each). Then every
// launch must have given every rank the same bits: the right sum, the same bits as
// every other launch at that size, and for the exchange alone exactly the host's
// rank-order sum of the partials.
void stress_exchange(const std::vector<int>& devices, int launches, unsigned seed, unsigned limit_ms = 2000) {
  const std::string problem = multi_gpu::enable_peer_access(devices);
  REQUIRE(problem.empty());
  const int ranks = static_cast<int>(devices.size());
  const std::size_t n_max = *std::max_element(kStressSizes.begin(), kStressSizes.end());
  std::vector<std::unique_ptr<Rank>> rs;
  for (int r = 0; r < ranks; ++r) {
    CUDA_CHECK(cudaSetDevice(devices[static_cast<std::size_t>(r)]));
    auto rank = std::make_unique<Rank>(devices[static_cast<std::size_t>(r)]);
    const std::vector<float> host =
        common::make_input(common::parse_pattern("mixed_signs"), 20 + static_cast<std::uint64_t>(r), n_max);
    rank->shard = common::DeviceBuffer<float>(n_max);
    common::copy_to_device(rank->shard.get(), host.data(), n_max * sizeof(float));
    std::size_t scratch = 0;
    for (const std::size_t n : kStressSizes) {
      rank->refs.push_back(
          common::reference_sum(std::vector<float>(host.begin(), host.begin() + static_cast<long>(n))));
      rank->plans.push_back(
          multi_gpu::plan_peer_sum(rank->shard.get(), n, common::query_device(rank->device).sm_count));
      scratch = std::max(scratch, rank->plans.back().scratch_bytes);
    }
    rank->scratch = common::DeviceBuffer<unsigned char>(scratch);  // one scratch for every grid
    CUDA_CHECK(cudaMemset(rank->scratch.get(), 0, scratch));
    rank->partial_value = host[static_cast<std::size_t>(r) + 1];
    rank->partial = common::DeviceBuffer<float>(1);
    common::copy_to_device(rank->partial.get(), &rank->partial_value, sizeof(float));
    rank->outs = common::DeviceBuffer<float>(static_cast<std::size_t>(launches));
    CUDA_CHECK(cudaMemset(rank->outs.get(), 0xFF, rank->outs.bytes()));  // NaN: an unwritten output fails
    CUDA_CHECK(cudaDeviceSynchronize());
    rs.push_back(std::move(rank));
  }

  multi_gpu::PeerExchange exchange(devices, limit_ms);
  std::mt19937 rng(seed);
  std::vector<int> order(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) order[static_cast<std::size_t>(r)] = r;
  for (int i = 0; i < launches; ++i) {
    const bool fused = i % 3 != 2;
    const std::size_t k = stress_size(i);
    const multi_gpu::PeerLaunch launch = exchange.next();
    std::shuffle(order.begin(), order.end(), rng);
    const int held = static_cast<int>(rng() % static_cast<unsigned>(ranks));
    for (const int r : order) {
      Rank& rank = *rs[static_cast<std::size_t>(r)];
      CUDA_CHECK(cudaSetDevice(rank.device));
      if (r == held) multi_gpu::launch_spin(20000, rank.stream.get());
      float* out = rank.outs.get() + i;
      if (fused)
        multi_gpu::launch_peer_sum(rank.shard.get(), kStressSizes[k], rank.plans[k], rank.scratch.get(), out,
                                   exchange.view(r), launch, rank.stream.get());
      else
        multi_gpu::launch_peer_exchange(rank.partial.get(), out, exchange.view(r), launch, rank.stream.get());
    }
    // A broken exchange fails after the first launches, not after hundreds that give up.
    if (i == 1 || (i + 1) % 100 == 0) {
      for (auto& rank : rs) {
        CUDA_CHECK(cudaSetDevice(rank->device));
        CUDA_CHECK(cudaStreamSynchronize(rank->stream.get()));
      }
      REQUIRE_FALSE(exchange.gave_up());
    }
  }
  std::vector<std::vector<float>> outs;
  for (auto& rank : rs) {
    CUDA_CHECK(cudaSetDevice(rank->device));
    CUDA_CHECK(cudaStreamSynchronize(rank->stream.get()));
    outs.emplace_back(static_cast<std::size_t>(launches));
    CUDA_CHECK(cudaMemcpy(outs.back().data(), rank->outs.get(), rank->outs.bytes(), cudaMemcpyDeviceToHost));
  }
  REQUIRE_FALSE(exchange.gave_up());
  CHECK(exchange.launches() == static_cast<std::uint64_t>(launches));

  float expected_exchange = rs[0]->partial_value;
  for (int r = 1; r < ranks; ++r) expected_exchange += rs[static_cast<std::size_t>(r)]->partial_value;
  std::map<std::size_t, std::uint32_t> fused_bits;
  int mismatches = 0;
  for (int i = 0; i < launches; ++i) {
    const std::size_t k = stress_size(i);
    const float v = outs[0][static_cast<std::size_t>(i)];
    for (int r = 1; r < ranks; ++r)
      if (bits(outs[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]) != bits(v)) ++mismatches;
    INFO(ranks << " ranks on GPUs " << devices.front() << ".., launch " << i << " (n " << kStressSizes[k]
               << (i % 3 != 2 ? ", fused" : ", exchange alone") << "): " << v);
    if (i % 3 == 2) {
      CHECK(bits(v) == bits(expected_exchange));
      continue;
    }
    common::Reference ref;
    std::size_t depth = 0;
    for (const auto& rank : rs) {
      ref.sum += rank->refs[k].sum;
      ref.sum_abs += rank->refs[k].sum_abs;
      depth = std::max(depth, rank->plans[k].error_depth);
    }
    const common::Check c =
        common::check_sum(v, ref, depth + static_cast<std::size_t>(ranks) - 1, kStressSizes[k] * rs.size());
    INFO(c.detail);
    CHECK(c.ok);
    const auto seen = fused_bits.emplace(k, bits(v));
    CHECK(seen.first->second == bits(v));
  }
  CHECK(mismatches == 0);
}

}  // namespace

// Two and four ranks on one GPU: their kernels run side by side as the blocks that do not
// wait leave room. (Not more: a GPU feeds streams through a few hardware queues,
// CUDA_DEVICE_MAX_CONNECTIONS, 8 by default, and two ranks whose streams shared a queue
// would run one kernel after the other, so the first would wait for a word the second
// never sends before it ends.)
TEST_CASE("the peer exchange between ranks that are streams of one GPU", "[multi_gpu][peer_store]") {
  stress_exchange({0, 0}, 600, 1);
  stress_exchange({0, 0, 0, 0}, 600, 2);
}

TEST_CASE("the peer exchange between GPUs", "[multi_gpu][peer_store]") {
  const std::vector<int> counts = peer_counts();
  if (counts.back() < 2) {
    WARN("one GPU: the exchange between GPUs is not exercised here");
    return;
  }
  for (const int count : counts) {
    if (count < 2) continue;
    std::vector<int> devices;
    for (int g = 0; g < count; ++g) devices.push_back(g);
    const std::string problem = multi_gpu::enable_peer_access(devices);
    if (!problem.empty()) {
      WARN(count << " GPUs: " << problem);
      continue;
    }
    stress_exchange(devices, 600, 10 + static_cast<unsigned>(count));
  }
  // Two ranks on each of two GPUs: stores to a peer and to a stream beside it at once.
  if (multi_gpu::enable_peer_access({0, 1}).empty()) stress_exchange({0, 1, 1, 0}, 300, 9);
}

// Small enough for compute-sanitizer (scripts/device.sh multi_gpu runs memcheck, racecheck,
// synccheck and initcheck over the tag [peer_sanitize]): one rank; every GPU present; two
// ranks as streams of GPU 0, each its own test case. A tool that ran the ranks' kernels
// one after another would make the exchange give up (3 s per launch here) and that case
// fail, not hang.
TEST_CASE("the peer-store kernels for the sanitizers: one rank", "[multi_gpu][peer_sanitize]") {
  stress_exchange({0}, 9, 21, 3000);
}

TEST_CASE("the peer-store kernels for the sanitizers: every GPU", "[multi_gpu][peer_sanitize]") {
  const std::vector<int> counts = peer_counts();
  std::vector<int> devices;
  for (int g = 0; g < counts.back(); ++g) devices.push_back(g);
  if (devices.size() < 2 || !multi_gpu::enable_peer_access(devices).empty()) {
    WARN("fewer than two GPUs with peer access: nothing to check across GPUs");
    return;
  }
  stress_exchange(devices, 9, 23, 3000);
}

TEST_CASE("the peer-store kernels for the sanitizers: two ranks on one GPU", "[multi_gpu][peer_sanitize]") {
  stress_exchange({0, 0}, 9, 22, 3000);
}

TEST_CASE("a rank that never runs its launch makes the exchange give up, and a reset recovers it",
          "[multi_gpu][peer_store]") {
  CUDA_CHECK(cudaSetDevice(0));
  multi_gpu::PeerExchange exchange({0, 0}, 200);  // two ranks on GPU 0, a 200 ms deadline
  common::CudaStream stream_0;
  common::CudaStream stream_1;
  common::DeviceBuffer<float> partials(2);
  common::DeviceBuffer<float> outs(2);
  const float values[2] = {1.5f, 2.25f};
  common::copy_to_device(partials.get(), values, sizeof values);

  // Only rank 0 runs launch 1: it waits for rank 1's word, gives up, and writes NaN.
  multi_gpu::launch_peer_exchange(partials.get(), outs.get(), exchange.view(0), exchange.next(), stream_0.get());
  CUDA_CHECK(cudaStreamSynchronize(stream_0.get()));
  CHECK(exchange.gave_up());
  float out = 0.0f;
  CUDA_CHECK(cudaMemcpy(&out, outs.get(), sizeof out, cudaMemcpyDeviceToHost));
  CHECK(std::isnan(out));

  // Cleared and numbered from 1 again, both ranks run launch 1 and agree.
  exchange.reset();
  CHECK_FALSE(exchange.gave_up());
  const multi_gpu::PeerLaunch launch = exchange.next();
  CHECK(launch.number == 1);
  multi_gpu::launch_peer_exchange(partials.get(), outs.get(), exchange.view(0), launch, stream_0.get());
  multi_gpu::launch_peer_exchange(partials.get() + 1, outs.get() + 1, exchange.view(1), launch, stream_1.get());
  CUDA_CHECK(cudaDeviceSynchronize());
  CHECK_FALSE(exchange.gave_up());
  float both[2] = {0.0f, 0.0f};
  CUDA_CHECK(cudaMemcpy(both, outs.get(), sizeof both, cudaMemcpyDeviceToHost));
  CHECK(both[0] == 3.75f);
  CHECK(both[1] == 3.75f);
}

TEST_CASE("one process per GPU: each NCCL row of a one-rank team gives the one-process team's bits",
          "[multi_gpu][rank_gpu]") {
  multi_gpu::keep_nvls_off();
  for (const char* pattern : {"mixed_signs", "with_nan"}) {
    GpuTeam team(setup_for(1, kSizes, pattern));
    team.use(1);
    multi_gpu::RankSetup setup;
    setup.device = 0;
    setup.rank = 0;
    setup.most_ranks = 1;
    setup.sizes = kSizes;
    setup.pattern = pattern;
    setup.seed = 7;
    multi_gpu::RankGpu rank(setup);
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    rank.join(1, 0, id);
    REQUIRE(rank.joined());
    for (const std::uint64_t n : kSizes) {
      team.set_size(n);
      rank.set_size(n);
      INFO("pattern " << pattern << ", n " << n);
      if (std::isnan(team.reference().sum))
        CHECK(std::isnan(rank.reference().sum));
      else
        CHECK(rank.reference().sum == team.reference().sum);  // shard 0 of both, seed 7
      for (const Method m : multi_gpu::all_methods()) {
        if (!multi_gpu::method_across_processes(m)) continue;
        INFO("method " << multi_gpu::method_id(m));
        const float mine = rank.run_once(m);
        const multi_gpu::Outcome o = team.run_checked(m);
        CHECK_FALSE(common::is_poison(mine));
        CHECK(bits(mine) == bits(o.results[0]));
        CHECK(rank.stage_depth(m) > 0);
        CHECK(rank.holds_result(m));
      }
    }
    // The pieces of a timed repetition.
    rank.flush_l2();
    rank.record_start();
    rank.enqueue(Method::shard_then_one_float);
    rank.record_stop();
    CHECK(rank.elapsed_us() > 0.0);
    rank.leave();
    CHECK_FALSE(rank.joined());
  }
  CHECK_FALSE(multi_gpu::method_across_processes(Method::shard_then_peer_store));
}
