// multi_gpu_sum: the sum of an array spread over several GPUs, one process driving
// every GPU, with NCCL and with NVLink peer stores.
//
// Each GPU holds a shard of n floats. The rows (methods.hpp): every GPU sums its shard
// with stage 15 and the partials are combined by an all-reduce of one float
// (shard_then_one_float) or gathered and added in rank order, the same bits on every GPU
// (shard_then_fixed_order); an all-reduce of the whole shards, then one sum
// (allreduce_whole); every shard copied to GPU 0, then one sum (copy_to_one); the
// one-float all-reduce alone, its latency (allreduce_one_float); one kernel per GPU that
// sums the shard and stores the partial into every peer's memory over NVLink, then adds
// the G partials in rank order (shard_then_peer_store, peer_store.cu); and that exchange
// of one float alone (peer_store_one_float). Each row is checked against a double
// reference of the whole array, then timed with the L2 flushed on every GPU: per
// repetition, the slowest GPU's time. The peer-store rows need peer access between every
// pair of GPUs; without it they are left out, saying why. Run it with NCCL_NVLS_ENABLE=0
// (it sets that itself unless told otherwise). multi_gpu_mpi runs the NCCL rows with one
// process per GPU instead. Chapter: chapters/26_multi_gpu.md
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli.hpp"
#include "device_info.hpp"
#include "gpu_team.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "report.hpp"
#include "sum_options.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace {

constexpr const char* kProgram = "multi_gpu_sum";
constexpr multi_gpu::Unit kGpu{"GPU", "GPUs"};

using multi_gpu::env_or_dash;
using multi_gpu::join;
using Options = multi_gpu::SumOptions;

int run(const Options& opt) {
  const common::DeviceInfo first = common::query_device(0);  // no device: exit 3
  const int present = common::cuda_device_count();
  std::vector<int> counts = opt.gpus;
  if (counts.empty()) {
    counts = {1, present};
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  }
  if (counts.back() > present)
    throw common::NoDeviceError("--gpus asks for " + std::to_string(counts.back()) + " GPUs but " +
                                std::to_string(present) + " CUDA device" + (present == 1 ? " is" : "s are") +
                                " present.");
  if (opt.n_total > 0) multi_gpu::require_divisible(opt.n_total, counts, kGpu);

  const std::string nvls = multi_gpu::keep_nvls_off();

  multi_gpu::TeamSetup setup;
  setup.gpus = counts.back();
  setup.sizes = multi_gpu::all_sizes(opt, counts);
  setup.pattern = opt.pattern;
  setup.seed = opt.seed;
  setup.flush_l2 = !opt.warm_l2;
  setup.flush = opt.flush;
  multi_gpu::GpuTeam team(setup);
  const std::string nccl = multi_gpu::nccl_version();

  common::Metadata meta = common::base_metadata(first);
  meta.push_back({"gpus_present", std::to_string(present)});
  meta.push_back({"gpu_counts", join(counts)});
  meta.push_back({"nccl", nccl});
  meta.push_back({"nccl_nvls_enable", nvls});
  meta.push_back({"process", "one process drives every GPU (ncclCommInitAll, ncclGroupStart/End)"});
  meta.push_back({"stage",
                  "one_cluster (reduction/15_one_cluster.cu) on every GPU; the peer-store sum: "
                  "multi_gpu/peer_store.cu"});
  meta.push_back({"methods", [&] {
                    std::string ids;
                    for (const multi_gpu::Method m : opt.methods)
                      ids += (ids.empty() ? "" : ",") + std::string(multi_gpu::method_id(m));
                    return ids;
                  }()});
  meta.push_back({"nccl_p2p_disable", env_or_dash("NCCL_P2P_DISABLE")});
  meta.push_back({"nccl_shm_disable", env_or_dash("NCCL_SHM_DISABLE")});
  meta.push_back({"n_per_gpu", !opt.sweep.empty() ? "sweep"
                               : opt.n_total > 0  ? "n " + std::to_string(opt.n_total) + " split over the GPUs"
                                                  : std::to_string(opt.n_per_gpu)});
  meta.push_back({"pattern", opt.pattern});
  meta.push_back({"seed", std::to_string(opt.seed) + " (shard g: seed + g)"});
  const std::vector<std::string> gpu_lines = team.describe();
  for (std::size_t g = 0; g < gpu_lines.size(); ++g) meta.push_back({"gpu" + std::to_string(g), gpu_lines[g]});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                              "CUDA events on every GPU around the work, all released by one start gate; per "
                              "repetition the slowest GPU's time; median of the repetitions",
                              true, &opt.flush);

  std::cout << common::device_banner("Multi-GPU sum", first, {common::l2_detail(first), common::peak_detail(first)})
            << "\n";
  std::cout << present << " CUDA device(s) present, GPU counts " << join(counts) << "; NCCL " << nccl
            << ", NCCL_NVLS_ENABLE=" << nvls << "; one process drives every GPU\n";
  for (const std::string& line : gpu_lines) std::cout << "  " << line << "\n";
  std::cout << "n per GPU: ";
  if (!opt.sweep.empty())
    std::cout << "sweep of " << opt.sweep.size() << " sizes from " << common::format_count(opt.sweep.front()) << " to "
              << common::format_count(opt.sweep.back());
  else if (opt.n_total > 0)
    std::cout << common::format_count(opt.n_total) << " / GPUs";
  else
    std::cout << common::format_count(opt.n_per_gpu);
  std::cout << ", " << opt.pattern << " inputs (shard g from seed " << opt.seed << " + g), median of up to "
            << opt.timing.reps << " repetitions per row, L2 " << common::l2_state(opt.warm_l2, opt.flush, true)
            << " on every GPU\n\n";

  common::TablePrinter table(std::cout, multi_gpu::table_columns());
  table.header();
  std::vector<common::Record> records;
  common::Tally tally;
  std::map<std::uint64_t, double> one_gpu_us;  // shard_then_one_float on 1 GPU, by n per GPU
  bool any_ungated = false;
  std::vector<std::string> peer_notes;  // why the peer-store rows were left out, per GPU count
  for (const int gpus : counts) {
    team.use(gpus);
    std::vector<multi_gpu::Method> methods = opt.methods;
    if (!team.peer_store_problem().empty()) {
      const auto before = methods.size();
      methods.erase(std::remove_if(methods.begin(), methods.end(), multi_gpu::method_peer_store), methods.end());
      if (methods.size() != before)
        peer_notes.push_back("The peer-store rows are left out on " + std::to_string(gpus) +
                             " GPUs: " + team.peer_store_problem() + ".");
    }
    for (const std::uint64_t n : multi_gpu::sizes_for(opt, gpus)) {
      team.set_size(n);
      for (const multi_gpu::Method m : methods) {
        multi_gpu::Outcome o = team.run_checked(m);
        multi_gpu::TimedOutcome t;
        bool timed = o.check.acceptable();
        if (timed) t = team.time(m, opt.timing);
        if (timed && t.gave_up) {
          timed = false;
          o.check.ok = false;
          o.check.unbounded = false;
          o.check.detail = "the peer exchange gave up waiting while the row was timed";
        }
        any_ungated = any_ungated || (timed && !t.gated);
        if (gpus == 1 && m == multi_gpu::Method::shard_then_one_float && timed) one_gpu_us[n] = t.timing.us.median;
        const auto base = one_gpu_us.find(n);

        multi_gpu::RowFacts row;
        row.gpus = gpus;
        row.n = n;
        row.method = m;
        row.outcome = &o;
        row.timed = timed ? &t : nullptr;
        row.reference = team.reference();
        row.one_gpu_us = base != one_gpu_us.end() ? base->second : NAN;
        row.peak_gbs = first.peak_bandwidth_gbs();
        row.copy_path = team.copy_paths();
        row.start = t.gated ? "gate" : "host";
        common::Record rec = multi_gpu::make_record(row);
        table.row(multi_gpu::table_record(rec, n));
        const std::string failure = multi_gpu::failure_line(row);
        if (!failure.empty()) std::cout << failure << "\n";
        tally.add(o.check, row.timed != nullptr ? &t.timing : nullptr);
        records.push_back(std::move(rec));
      }
      table.rule();
    }
  }

  std::cout
      << "\nGB/s = GPUs x n x 4 bytes / median time (the slowest GPU's, per repetition); GB/s/GPU and %peak per "
         "GPU against one GPU's theoretical "
      << static_cast<long>(first.peak_bandwidth_gbs())
      << " GB/s.\neff = shard_then_one_float's time on 1 GPU at the same n per GPU / this row's time (1 is "
         "perfect scaling; shown when the run includes 1 GPU).\nallreduce_one_float and peer_store_one_float time the "
         "combine of one float alone (its latency), so they have no bandwidth.\n";
  if (counts.back() > 1)
    std::cout << "copy_to_one copies "
              << (team.copy_paths() == "host"   ? "through the host (no peer access)"
                  : team.copy_paths() == "peer" ? "GPU to GPU (peer access)"
                                                : "GPU to GPU where peer access allows, "
                                                  "else through the host")
              << ".\n";
  if (any_ungated)
    std::cout << "start column 'host': the start gate gave up on that row, so its GPUs started one host launch apart "
                 "(their times include that skew).\n";
  for (const std::string& note : peer_notes) std::cout << note << "\n";
  common::print_capped_note(std::cout, tally);
  return common::finish_run(opt.csv, opt.json, meta, records, tally.all_ok);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  common::ArgParser args(kProgram,
                         "Sums an array spread over several GPUs, one process driving every GPU: four ways with NCCL "
                         "and one with NVLink peer stores; verifies every row and times it.");
  opt.methods = multi_gpu::all_methods();
  multi_gpu::add_size_options(args, opt, kGpu);
  args.option("--methods", "LIST",
              "rows to run, comma-separated, in the table's order (default: all): " + multi_gpu::method_ids(),
              [&](const std::string& v) { opt.methods = multi_gpu::parse_methods(v); });
  multi_gpu::add_run_options(args, opt, "input (shard g uses seed + g)");
  args.epilog(
      "NCCL_NVLS_ENABLE is set to 0 (NVLink multicast off) unless the environment already sets it.\n"
      "The peer-store rows need peer access between every pair of GPUs (at most 8); without it they are left out, "
      "saying why.\n"
      "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA or NCCL error occurred, 2 bad usage, 3 no "
      "CUDA device or fewer GPUs than --gpus asks for.");
  return common::run_program(kProgram, [&] {
    if (!args.parse(argc, argv)) return 0;
    return run(opt);
  });
}
