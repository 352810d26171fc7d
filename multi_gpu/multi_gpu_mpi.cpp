// multi_gpu_mpi: the sum of an array spread over several GPUs with one process per GPU,
// the way a job across nodes runs, started by mpirun (or a launcher like it).
//
//   mpirun -np 4 -x NCCL_NVLS_ENABLE=0 build/multi_gpu/multi_gpu_mpi --gpus 1,2,4 --sweep 2^20:2^28:4
//
// Rank r drives the r-th GPU of its node (its rank among the ranks on that node) and
// holds shard r (the input pattern from seed + r, the shard GPU r holds in
// multi_gpu_sum). For each count G of --gpus, ranks 0..G-1 form a team: rank 0 makes an
// ncclUniqueId (ncclGetUniqueId), MPI_Bcast gives it to every rank, and each member
// calls ncclCommInitRank(G, id, rank); there are no group calls, each process issuing
// its own collectives on its own stream. Each rank sums its shard with the registry's
// stage and combines (the NCCL rows of methods.hpp; copy_to_one sends the shards to rank
// 0 with ncclSend/ncclRecv). Rank 0 gathers every rank's result and the double reference
// of every shard (MPI_Gather) and checks the whole sum against their sum, as multi_gpu_sum
// checks it. Timing is that program's too: the L2 flushed on every GPU, a start gate
// (a word in memory the node's processes share, which every GPU polls and one store
// opens once every rank has enqueued its work), CUDA events on every GPU, per repetition
// the slowest rank's time (MPI_Allreduce), the median. Rank 0 prints the table and writes
// the files, with the columns of multi_gpu_sum (report.hpp).
//
// Refusals: every rank parses the same arguments, and every step that can refuse (the
// arguments, the GPUs, the memory) ends with the ranks agreeing on the worst outcome:
// rank 0 prints one sentence (the lowest failing rank's) and every rank exits with the
// same code: 2 bad usage (before any GPU is looked for), 3 no CUDA device or fewer GPUs
// on a node than ranks there. An error later (a CUDA or NCCL failure on one rank) is
// printed by that rank and ends the job with MPI_Abort and exit code 1.
// Chapter: chapters/26_multi_gpu.md
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "gpu_team.hpp"
#include "kernels.hpp"
#include "measure.hpp"
#include "nccl_check.hpp"
#include "output.hpp"
#include "rank_gpu.hpp"
#include "report.hpp"
#include "sum_options.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace {

constexpr const char* kProgram = "multi_gpu_mpi";

// ---- the job ----------------------------------------------------------------------------

struct World {
  int rank = 0;
  int size = 1;
  MPI_Comm node = MPI_COMM_NULL;  // the ranks on this rank's node
  int local_rank = 0;             // this rank's place among them: the GPU it drives
  int local_size = 1;
  int nodes = 1;
};

World make_world() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &w.node);
  MPI_Comm_rank(w.node, &w.local_rank);
  MPI_Comm_size(w.node, &w.local_size);
  const int leader = w.local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &w.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return w;
}

// What a step that every rank takes gave this rank: 0, or an exit code with its sentence.
struct Verdict {
  int code = 0;
  std::string message;
};

// Inside a catch block: the exception as the exit code every program gives it.
Verdict verdict_of_current_exception() {
  try {
    throw;
  } catch (const common::UsageError& e) {
    return {common::kExitUsage, e.what()};
  } catch (const common::NoDeviceError& e) {
    return {common::kExitNoDevice, e.what()};
  } catch (const std::exception& e) {
    return {1, std::string("error: ") + e.what()};
  }
}

// Every rank calls it after the same step with its own verdict; all return the worst
// code, and rank 0 prints the sentence of the lowest rank that has it, once.
int agree(const Verdict& v, const World& w) {
  int worst = 0;
  MPI_Allreduce(&v.code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  const int mine = v.code == worst ? w.rank : w.size;
  int teller = 0;
  MPI_Allreduce(&mine, &teller, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::string message = v.message;
  if (teller != 0) {
    if (w.rank == teller) {
      const int length = static_cast<int>(message.size());
      MPI_Send(&length, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Send(message.data(), length, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    } else if (w.rank == 0) {
      int length = 0;
      MPI_Recv(&length, 1, MPI_INT, teller, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      message.assign(static_cast<std::size_t>(length), ' ');
      MPI_Recv(message.data(), length, MPI_CHAR, teller, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (w.size > 1) message = "rank " + std::to_string(teller) + ": " + message;
    }
  }
  if (w.rank == 0) std::cerr << kProgram << ": " << message << std::endl;
  return worst;
}

// Ranks other than 0 print nothing on stdout.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c == EOF ? 0 : c; }
};

constexpr multi_gpu::Unit kRank{"rank", "ranks"};

using multi_gpu::env_or_dash;
using multi_gpu::join;
using Options = multi_gpu::SumOptions;

std::vector<multi_gpu::Method> default_methods() {
  std::vector<multi_gpu::Method> methods;
  for (const multi_gpu::Method m : multi_gpu::all_methods())
    if (multi_gpu::method_across_processes(m)) methods.push_back(m);
  return methods;
}

// The rank counts this job runs: --gpus, each at most the ranks mpirun started
// (a usage error: known before any GPU is looked for), else 1 and every rank.
std::vector<int> rank_counts(const Options& opt, const World& w) {
  std::vector<int> counts = opt.gpus;
  if (counts.empty()) {
    counts = {1, w.size};
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  }
  if (counts.back() > w.size)
    throw common::UsageError("--gpus asks for " + std::to_string(counts.back()) + " ranks but mpirun started " +
                             std::to_string(w.size) + " (-np " + std::to_string(w.size) +
                             "): one rank per GPU, as many as the largest count.");
  if (opt.n_total > 0) multi_gpu::require_divisible(opt.n_total, counts, kRank);
  return counts;
}

// ---- the start gate across processes ----------------------------------------------------------

// The start gate of multi_gpu_sum (kernels.hpp), across the processes of a node: its two
// words live in a page the node's processes share (MPI_Win_allocate_shared), registered
// in every process as mapped memory its GPU polls. Once every rank of the team has
// enqueued a repetition (MPI_Barrier), the team's lowest rank on each node waits until
// each of the node's GPUs is at its gate (an arrival word per rank), stores the ticket
// once and every GPU of that node starts; nodes start one barrier apart. Where
// the page cannot be registered (on any rank), each rank polls a word of its own and
// opens it after the barrier, so the ranks start one barrier apart.
class NodeGate {
 public:
  explicit NodeGate(const World& w) {
    const long page = sysconf(_SC_PAGESIZE);
    void* mine = nullptr;
    MPI_Win_allocate_shared(w.local_rank == 0 ? 2 * page : 0, 1, MPI_INFO_NULL, w.node, &mine, &win_);
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    MPI_Win_shared_query(win_, 0, &size, &unit, &base);
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    const auto aligned = (address + static_cast<std::uintptr_t>(page) - 1) / static_cast<std::uintptr_t>(page) *
                         static_cast<std::uintptr_t>(page);
    page_ = reinterpret_cast<unsigned*>(aligned);
    if (w.local_rank == 0)
      for (int i = 0; i < multi_gpu::kGateWords; ++i) page_[i] = 0;
    MPI_Barrier(w.node);
    int ok = cudaHostRegister(page_, static_cast<std::size_t>(page),
                              cudaHostRegisterMapped | cudaHostRegisterPortable) == cudaSuccess
                 ? 1
                 : 0;
    void* device = nullptr;
    if (ok == 1) {
      registered_ = true;
      ok = cudaHostGetDevicePointer(&device, page_, 0) == cudaSuccess ? 1 : 0;
    }
    (void)cudaGetLastError();  // a failure here is a fallback, not an error
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    shared_ = all == 1;
    if (shared_)
      gate_ = std::make_unique<multi_gpu::StartGate>(page_, static_cast<unsigned*>(device));
    else
      gate_ = std::make_unique<multi_gpu::StartGate>();
  }
  ~NodeGate() {
    gate_.reset();
    if (registered_) cudaHostUnregister(page_);
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);  // every rank of the node at once
  }
  NodeGate(const NodeGate&) = delete;
  NodeGate& operator=(const NodeGate&) = delete;

  bool shared() const { return shared_; }
  multi_gpu::StartGate& gate() { return *gate_; }

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  unsigned* page_ = nullptr;
  bool registered_ = false;
  bool shared_ = false;
  std::unique_ptr<multi_gpu::StartGate> gate_;
};

// ---- one team -----------------------------------------------------------------------------

struct Team {
  MPI_Comm comm = MPI_COMM_NULL;  // ranks 0..count-1
  int rank = 0;
  int size = 1;
  bool opener = true;  // opens the gate: the team's lowest rank on its node (every rank without a shared gate)
  int gate_slot = 0;   // this rank's arrival slot at its node's gate
  int gate_slots = 1;  // the slots the opener waits for (the team's ranks on its node)
};

// Times the method as multi_gpu_sum does, every rank of the team at once.
multi_gpu::TimedOutcome time_row(multi_gpu::RankGpu& gpu, multi_gpu::Method m, const Team& team, NodeGate& gate,
                                 unsigned& ticket, const common::TimingOptions& timing) {
  for (int i = 0; i < timing.warmup; ++i) {
    gpu.flush_l2();
    gpu.enqueue(m);
    gpu.synchronize();
  }
  multi_gpu::TimedOutcome out;
  std::vector<double> samples;
  int reps = 0;
  while (reps == 0 || static_cast<int>(samples.size()) < reps) {
    const auto t0 = std::chrono::steady_clock::now();
    ++ticket;
    gpu.flush_l2();
    if (out.gated) gate.gate().enqueue(gpu.stream(), ticket, team.gate_slot);
    gpu.record_start();
    gpu.enqueue(m);
    gpu.record_stop();
    MPI_Barrier(team.comm);  // every rank has enqueued its repetition
    if (out.gated && team.opener) gate.gate().open(ticket, team.gate_slots);
    const double mine[2] = {gpu.elapsed_us(), out.gated && gate.gate().gave_up() ? 1.0 : 0.0};
    double worst[2] = {0.0, 0.0};
    MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, team.comm);
    if (worst[1] > 0.0) {
      // A gate opened by its own deadline: start again without gates, saying so in the row.
      MPI_Barrier(team.comm);
      if (team.opener) gate.gate().reset();
      MPI_Barrier(team.comm);
      out.gated = false;
      samples.clear();
      reps = 0;
      continue;
    }
    samples.push_back(worst[0]);
    if (reps == 0) {
      int planned = 0;
      if (team.rank == 0)
        planned = common::planned_repetitions(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), timing);
      MPI_Bcast(&planned, 1, MPI_INT, 0, team.comm);
      reps = planned;
    }
  }
  if (m == multi_gpu::Method::copy_to_one) gpu.restore_shard();
  out.timing.us = common::summarize(samples);
  out.timing.reps_run = reps;
  out.timing.capped = reps < std::max(timing.reps, 1);
  return out;
}

// Rank 0's check of a row from every rank's result and shard reference.
multi_gpu::Outcome check_row(multi_gpu::Method m, const std::vector<double>& gathered, std::size_t depth, int count,
                             std::uint64_t n, common::Reference& whole) {
  // gathered: per rank {reference sum, reference sum_abs, the result's bits, holds a result}.
  multi_gpu::Outcome o;
  whole = common::Reference{};
  for (int r = 0; r < count; ++r) {
    const double* g = &gathered[static_cast<std::size_t>(r) * 4];
    whole.sum += g[0];
    whole.sum_abs += g[1];
    if (g[3] <= 0.0) continue;
    const auto result_bits = static_cast<std::uint32_t>(g[2]);
    float result = 0.0f;
    std::memcpy(&result, &result_bits, sizeof result);
    o.results.push_back(result);
  }
  o.bound.depth = depth + (m == multi_gpu::Method::copy_to_one ? 0 : static_cast<std::size_t>(count) - 1);
  const std::size_t total = static_cast<std::size_t>(count) * n;
  o.check = common::check_sum(o.results[0], whole, o.bound, total);
  for (std::size_t r = 1; r < o.results.size(); ++r) {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::memcpy(&a, &o.results[r], sizeof a);
    std::memcpy(&b, &o.results[0], sizeof b);
    o.same_bits = o.same_bits && a == b;
    const common::Check c = common::check_sum(o.results[r], whole, o.bound, total);
    if (!c.ok && o.check.ok) {
      o.check = c;
      o.check.detail = "rank " + std::to_string(r) + ": " + c.detail;
    }
  }
  if (multi_gpu::method_deterministic(m) && multi_gpu::method_on_every_gpu(m) && !o.same_bits && o.check.ok) {
    o.check.ok = false;
    o.check.detail = "the ranks hold different bits, though each adds the same partials in the same order";
  }
  return o;
}

// ---- the run ----------------------------------------------------------------------------------

int run(const Options& opt, const World& w, const std::vector<int>& counts, multi_gpu::RankGpu& gpu) {
  NodeGate gate(w);
  const std::string nvls = multi_gpu::keep_nvls_off();
  const std::string nccl = multi_gpu::nccl_version();
  const common::DeviceInfo& first = gpu.info();

  // Who runs where, for the banner and the metadata.
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  constexpr int kLine = 256;
  std::string line = "rank " + std::to_string(w.rank) + ": " + host + ", GPU " + std::to_string(w.local_rank) + " (" +
                     first.name + ")";
  line.resize(kLine - 1, '\0');
  std::vector<char> lines(static_cast<std::size_t>(kLine) * static_cast<std::size_t>(w.size), '\0');
  MPI_Gather(line.c_str(), kLine, MPI_CHAR, lines.data(), kLine, MPI_CHAR, 0, MPI_COMM_WORLD);
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int library_length = 0;
  MPI_Get_library_version(library, &library_length);
  std::string mpi_version(library);
  mpi_version = mpi_version.substr(0, mpi_version.find_first_of(",\n"));

  const bool root = w.rank == 0;
  common::Metadata meta = common::base_metadata(first);
  std::vector<common::Record> records;
  common::Tally tally;
  common::TablePrinter table(std::cout, multi_gpu::table_columns());
  if (root) {
    meta.push_back({"ranks", std::to_string(w.size)});
    meta.push_back({"nodes", std::to_string(w.nodes)});
    meta.push_back({"gpu_counts", join(counts)});
    meta.push_back({"nccl", nccl});
    meta.push_back({"nccl_nvls_enable", nvls});
    meta.push_back({"nccl_p2p_disable", env_or_dash("NCCL_P2P_DISABLE")});
    meta.push_back({"nccl_shm_disable", env_or_dash("NCCL_SHM_DISABLE")});
    meta.push_back({"mpi", mpi_version});
    meta.push_back({"process", "one process per GPU (mpirun; ncclGetUniqueId on rank 0, MPI_Bcast, ncclCommInitRank)"});
    meta.push_back({"stage", std::string(multi_gpu::kShardStage) + " (reduction/15_one_cluster.cu) on every GPU"});
    std::string ids;
    for (const multi_gpu::Method m : opt.methods)
      ids += (ids.empty() ? "" : ",") + std::string(multi_gpu::method_id(m));
    meta.push_back({"methods", ids});
    meta.push_back({"n_per_gpu", !opt.sweep.empty() ? "sweep"
                                 : opt.n_total > 0  ? "n " + std::to_string(opt.n_total) + " split over the ranks"
                                                    : std::to_string(opt.n_per_gpu)});
    meta.push_back({"pattern", opt.pattern});
    meta.push_back({"seed", std::to_string(opt.seed) + " (rank r's shard: seed + r)"});
    for (int r = 0; r < w.size; ++r)
      meta.push_back({"rank" + std::to_string(r), std::string(&lines[static_cast<std::size_t>(r) * kLine])});
    meta.push_back({"start_gate", gate.shared() ? "a word shared by the processes of each node, opened once every "
                                                  "rank has enqueued (MPI_Barrier)"
                                                : "a word per rank, each opened after MPI_Barrier"});
    common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                                "CUDA events on every rank's GPU around the work, released by the start gate; per "
                                "repetition the slowest rank's time (MPI_Allreduce); median of the repetitions",
                                true, &opt.flush);

    std::cout << common::device_banner("Multi-GPU sum, one process per GPU", first,
                                       {common::l2_detail(first), common::peak_detail(first)})
              << "\n";
    std::cout << w.size << " rank(s) on " << w.nodes << " node(s), rank counts " << join(counts) << "; NCCL " << nccl
              << ", NCCL_NVLS_ENABLE=" << nvls << ", NCCL_P2P_DISABLE=" << env_or_dash("NCCL_P2P_DISABLE")
              << ", NCCL_SHM_DISABLE=" << env_or_dash("NCCL_SHM_DISABLE") << "; " << mpi_version << "\n";
    for (int r = 0; r < w.size; ++r) std::cout << "  " << &lines[static_cast<std::size_t>(r) * kLine] << "\n";
    std::cout << "n per GPU: ";
    if (!opt.sweep.empty())
      std::cout << "sweep of " << opt.sweep.size() << " sizes from " << common::format_count(opt.sweep.front())
                << " to " << common::format_count(opt.sweep.back());
    else if (opt.n_total > 0)
      std::cout << common::format_count(opt.n_total) << " / ranks";
    else
      std::cout << common::format_count(opt.n_per_gpu);
    std::cout << ", " << opt.pattern << " inputs (rank r's shard from seed " << opt.seed << " + r), median of up to "
              << opt.timing.reps << " repetitions per row, L2 " << common::l2_state(opt.warm_l2, opt.flush, true)
              << " on every GPU; start gate "
              << (gate.shared() ? "shared by each node's processes" : "per rank, after a barrier") << "\n\n";
    table.header();
  }

  std::map<std::uint64_t, double> one_gpu_us;  // shard_then_one_float on 1 rank, by n per GPU
  bool any_ungated = false;
  unsigned ticket = 0;
  for (const int count : counts) {
    ncclUniqueId id;
    if (root) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&ticket, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);  // rank 0 is in every team: its count is the highest
    const bool member = w.rank < count;
    Team team;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, w.rank, &team.comm);
    if (member) {
      MPI_Comm_rank(team.comm, &team.rank);
      MPI_Comm_size(team.comm, &team.size);
      MPI_Comm node_team = MPI_COMM_NULL;
      MPI_Comm_split_type(team.comm, MPI_COMM_TYPE_SHARED, team.rank, MPI_INFO_NULL, &node_team);
      int node_rank = 0;
      int node_size = 1;
      MPI_Comm_rank(node_team, &node_rank);
      MPI_Comm_size(node_team, &node_size);
      MPI_Comm_free(&node_team);
      team.opener = !gate.shared() || node_rank == 0;
      team.gate_slot = gate.shared() ? node_rank : 0;
      team.gate_slots = gate.shared() ? node_size : 1;
      gpu.join(count, team.rank, id);

      for (const std::uint64_t n : multi_gpu::sizes_for(opt, count)) {
        gpu.set_size(n);
        for (const multi_gpu::Method m : opt.methods) {
          const float result = gpu.run_once(m);
          // The result's bits travel as a whole number (exact in a double), so a NaN keeps its payload.
          std::uint32_t result_bits = 0;
          std::memcpy(&result_bits, &result, sizeof result_bits);
          const double mine[4] = {gpu.reference().sum, gpu.reference().sum_abs, static_cast<double>(result_bits),
                                  gpu.holds_result(m) ? 1.0 : 0.0};
          std::vector<double> gathered(root ? 4 * static_cast<std::size_t>(count) : 0);
          MPI_Gather(mine, 4, MPI_DOUBLE, gathered.data(), 4, MPI_DOUBLE, 0, team.comm);
          const unsigned long long my_depth = gpu.stage_depth(m);
          unsigned long long depth = 0;
          MPI_Reduce(&my_depth, &depth, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, team.comm);
          multi_gpu::Outcome o;
          common::Reference whole;
          int timed = 0;
          if (root) {
            o = check_row(m, gathered, static_cast<std::size_t>(depth), count, n, whole);
            timed = o.check.acceptable() ? 1 : 0;
          }
          MPI_Bcast(&timed, 1, MPI_INT, 0, team.comm);
          multi_gpu::TimedOutcome t;
          if (timed == 1) t = time_row(gpu, m, team, gate, ticket, opt.timing);
          if (!root) continue;

          any_ungated = any_ungated || (timed == 1 && !t.gated);
          if (count == 1 && m == multi_gpu::Method::shard_then_one_float && timed == 1)
            one_gpu_us[n] = t.timing.us.median;
          const auto base = one_gpu_us.find(n);
          multi_gpu::RowFacts row;
          row.gpus = count;
          row.n = n;
          row.method = m;
          row.outcome = &o;
          row.timed = timed == 1 ? &t : nullptr;
          row.reference = whole;
          row.one_gpu_us = base != one_gpu_us.end() ? base->second : NAN;
          row.peak_gbs = first.peak_bandwidth_gbs();
          row.copy_path = "nccl";
          row.start = !t.gated ? "host" : (gate.shared() ? "gate" : "barrier");
          common::Record rec = multi_gpu::make_record(row);
          table.row(multi_gpu::table_record(rec, n));
          const std::string failure = multi_gpu::failure_line(row);
          if (!failure.empty()) std::cout << failure << "\n";
          tally.add(o.check, row.timed != nullptr ? &t.timing : nullptr);
          records.push_back(std::move(rec));
        }
        if (root) table.rule();
      }
      gpu.leave();
      MPI_Comm_free(&team.comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  int code = 0;
  if (root) {
    std::cout << "\nGB/s = ranks x n x 4 bytes / median time (the slowest rank's, per repetition); GB/s/GPU and %peak "
                 "per GPU against one GPU's theoretical "
              << static_cast<long>(first.peak_bandwidth_gbs())
              << " GB/s.\neff = shard_then_one_float's time on 1 rank at the same n per GPU / this row's time (1 is "
                 "perfect scaling; shown when the run includes 1 rank).\nallreduce_one_float times the all-reduce of "
                 "one float alone (its latency), so it has no bandwidth. copy_to_one sends the shards to rank 0 with "
                 "ncclSend/ncclRecv.\n";
    if (any_ungated)
      std::cout << "start column 'host': the start gate gave up on that row, so its ranks started as each enqueued "
                   "(their times include that skew).\n";
    common::print_capped_note(std::cout, tally);
    code = common::finish_run(opt.csv, opt.json, meta, records, tally.all_ok);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  World w = make_world();
  NullBuffer null_buffer;
  std::streambuf* const stdout_buffer = std::cout.rdbuf();
  if (w.rank != 0) std::cout.rdbuf(&null_buffer);
  // std::cout gets its own buffer back before null_buffer goes (it is flushed at exit).
  const struct Restore {
    std::streambuf* buffer;
    ~Restore() { std::cout.rdbuf(buffer); }
  } restore{stdout_buffer};
  const auto finish = [&](int code) {
    MPI_Comm_free(&w.node);
    MPI_Finalize();
    return code;
  };

  Options opt;
  opt.methods = default_methods();
  common::ArgParser args(kProgram,
                         "Sums an array spread over several GPUs with one process per GPU (mpirun -np G, one rank per "
                         "GPU, NCCL between them), verifies every row on rank 0 and times it.");
  multi_gpu::add_size_options(args, opt, kRank);
  std::string nccl_ids;
  for (const multi_gpu::Method m : default_methods())
    nccl_ids += (nccl_ids.empty() ? "" : ", ") + std::string(multi_gpu::method_id(m));
  args.option("--methods", "LIST", "rows to run, comma-separated, in the table's order (default: all): " + nccl_ids,
              [&](const std::string& v) {
                opt.methods = multi_gpu::parse_methods(v);
                for (const multi_gpu::Method m : opt.methods)
                  if (!multi_gpu::method_across_processes(m))
                    throw common::UsageError(std::string("--methods item '") + multi_gpu::method_id(m) +
                                             "' stores into the other GPUs' memory, which needs one process holding "
                                             "every GPU: run it with multi_gpu_sum (this program runs " +
                                             nccl_ids + ").");
              });
  multi_gpu::add_run_options(args, opt, "input (rank r's shard uses seed + r)");
  args.epilog(
      "Start it with one rank per GPU: mpirun -np G [-x NCCL_NVLS_ENABLE=0] multi_gpu_mpi ... (rank r drives the "
      "r-th GPU of its node). Every rank parses the same arguments; rank 0 prints the table and writes the files.\n"
      "NCCL_NVLS_ENABLE is set to 0 (NVLink multicast off) unless the environment already sets it. "
      "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 (passed with mpirun -x) make NCCL move data through its network "
      "transport, as between nodes.\n"
      "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA, NCCL or MPI error occurred, 2 bad usage, "
      "3 no CUDA device or fewer GPUs on a node than ranks there.");

  // 1. The arguments, before any GPU is looked for.
  Verdict v;
  bool help = false;
  std::vector<int> counts;
  try {
    help = !args.parse(argc, argv);
    if (!help) counts = rank_counts(opt, w);
  } catch (...) {
    v = verdict_of_current_exception();
  }
  if (const int code = agree(v, w); code != 0) return finish(code);
  if (help) return finish(0);

  // 2. The GPU: the r-th of its node for the node's r-th rank.
  try {
    const common::DeviceInfo info = common::query_device(0);  // none at all: exit 3
    (void)info;
    const int present = common::cuda_device_count();
    if (w.local_rank >= present) {
      char host[MPI_MAX_PROCESSOR_NAME] = {};
      int length = 0;
      MPI_Get_processor_name(host, &length);
      throw common::NoDeviceError("mpirun started " + std::to_string(w.local_size) + " ranks on " + host + " but " +
                                  std::to_string(present) + " CUDA device" + (present == 1 ? " is" : "s are") +
                                  " present there: start one rank per GPU.");
    }
    CUDA_CHECK(cudaSetDevice(w.local_rank));
  } catch (...) {
    v = verdict_of_current_exception();
  }
  if (const int code = agree(v, w); code != 0) return finish(code);

  // 3. The shard, once every refusal is past (the memory check among them).
  std::unique_ptr<multi_gpu::RankGpu> gpu;
  try {
    multi_gpu::RankSetup setup;
    setup.device = w.local_rank;
    setup.rank = w.rank;
    setup.most_ranks = counts.back();
    setup.sizes = multi_gpu::all_sizes(opt, counts);
    setup.pattern = opt.pattern;
    setup.seed = opt.seed;
    setup.flush_l2 = !opt.warm_l2;
    setup.flush = opt.flush;
    setup.copy_to_one =
        std::find(opt.methods.begin(), opt.methods.end(), multi_gpu::Method::copy_to_one) != opt.methods.end();
    gpu = std::make_unique<multi_gpu::RankGpu>(setup);
  } catch (...) {
    v = verdict_of_current_exception();
  }
  if (const int code = agree(v, w); code != 0) return finish(code);

  // 4. The rows. An error now may leave the other ranks inside a collective: end the job.
  int code = 0;
  try {
    code = run(opt, w, counts, *gpu);
  } catch (...) {
    const Verdict e = verdict_of_current_exception();
    std::cerr << kProgram << ": rank " << w.rank << ": " << e.message << std::endl;
    MPI_Abort(MPI_COMM_WORLD, e.code);
    return e.code;
  }
  gpu.reset();
  return finish(code);
}
