#include "lab.hpp"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <stdexcept>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "inputs.hpp"
#include "row_measure.hpp"

namespace lab {
namespace {

// The depth every row is checked at: far more additions than any design here puts
// one element through (a few hundred at most), and a design that loses or repeats a
// partial sum misses by far more than the bound this allows.
constexpr std::size_t kCheckDepth = 1024;

// Fewer repetitions for the large sizes, whose rows take hundreds of microseconds.
common::TimingOptions timing_for(std::size_t n) {
  common::TimingOptions timing;
  timing.reps = n >= (std::size_t{1} << 28) ? 30 : 200;
  timing.warmup = 3;
  return timing;
}

std::vector<common::Column> table_columns() {
  return {{"key", "design", 20, 0, true}, {"n_text", "n", 6, 0},          {"block", "block", 5, 0},
          {"grid", "grid", 6, 0},         {"median_us", "us", 10, 2},     {"cub_us", "cub-us", 10, 2},
          {"vs_cub", "vs-CUB", 7, 3},     {"check", "check", 10, 0, true}};
}

}  // namespace

common::Record row_record(const Row& r) {
  return {common::text_field("key", r.design),
          common::number_field("n", static_cast<double>(r.n)),
          common::number_field("block", r.block),
          common::number_field("grid", r.grid),
          common::number_field("median_us", r.us),
          common::number_field("cub_us", r.cub_us),
          common::number_field("vs_cub", r.cub_us / r.us),
          common::text_field("check", r.check)};
}

Experiment::Experiment(const char* name, const common::DeviceInfo& device, std::size_t max_n,
                       std::vector<std::uint64_t> sizes)
    : name_(name),
      device_(device),
      flusher_(device.l2_bytes),
      host_(common::make_input(common::Pattern::uniform, 1, max_n)),
      input_(max_n),
      out_(1),
      scratch_(1 << 20),
      ticket_scratch_(1 << 20) {
  common::copy_to_device(input_.get(), host_.data(), input_.bytes());
  CUDA_CHECK(cudaMemset(scratch_.get(), 0, scratch_.bytes()));
  CUDA_CHECK(cudaMemset(ticket_scratch_.get(), 0, ticket_scratch_.bytes()));
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes_, input_.get(), out_.get(), static_cast<std::int64_t>(max_n)));
  cub_temp_ = common::DeviceBuffer<unsigned char>(cub_bytes_);
  CUDA_CHECK(cudaDeviceSynchronize());
  sizes_ = std::move(sizes);
}

void Experiment::set_reference(std::size_t n) {
  if (n > host_.size())
    throw std::logic_error("n = " + std::to_string(n) + " is past the input's " + std::to_string(host_.size()));
  n_ = n;
  ref_ = common::reference_sum(std::vector<float>(host_.begin(), host_.begin() + static_cast<std::ptrdiff_t>(n)));
}

void Experiment::set_n(std::size_t n) {
  set_reference(n);
  const auto cub = [&] {
    std::size_t bytes = cub_bytes_;
    CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp_.get(), bytes, input_.get(), out_.get(), static_cast<std::int64_t>(n_),
                                      stream_.get()));
  };
  common::RowMeasure measure("cub");
  const common::Check check = checked_run(measure, cub);
  if (!check.ok)
    throw std::runtime_error("CUB's DeviceReduce::Sum fails its check at n = " + common::format_count(n) + " (" +
                             check.detail + "), so no row can be compared with it.");
  cub_us_ = measure.timed(cub, timing_for(n_), false, stream_.get(), &flusher_).us.median;
}

void Experiment::poison_output() {
  const float poison = common::poison_value();
  common::copy_to_device(out_.get(), &poison, sizeof poison);
}

common::Check Experiment::check_output() const {
  float result = 0.0f;
  CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof result, cudaMemcpyDeviceToHost));
  return common::check_sum(result, ref_, kCheckDepth, n_);
}

common::Check Experiment::checked_run(common::RowMeasure& measure, const std::function<void()>& launch) const {
  const float result =
      measure.checked([&] { return common::poisoned_run(out_.get(), common::poison_value(), launch, stream_.get()); });
  return common::check_sum(result, ref_, kCheckDepth, n_);
}

void Experiment::measure(const std::string& design, int block, unsigned grid, const std::function<void()>& launch,
                         bool diagnostic) {
  common::RowMeasure row_measure(design.c_str());
  std::string verdict = "diagnostic";
  if (!diagnostic) {
    const common::Check check = checked_run(row_measure, launch);
    verdict = check.ok ? "ok" : "FAIL";
    if (!check.ok) ++failures_;
  }
  const double us = row_measure.timed(launch, timing_for(n_), false, stream_.get(), &flusher_).us.median;
  rows_.push_back({design, n_, block, grid, us, cub_us_, verdict});

  common::TablePrinter table(std::cout, table_columns());
  if (!header_printed_) {
    std::cout << name_ << " on " << device_.name << "; us = median, L2 flushed (read) before each repetition\n";
    table.header();
    header_printed_ = true;
  }
  common::Record line = row_record(rows_.back());
  line.push_back(common::text_field("n_text", common::format_count(n_)));
  table.row(line);
}

void Experiment::fail(const std::string& what) {
  std::cout << "FAIL: " << what << "\n";
  ++failures_;
}

int experiment_main(int argc, const char* const* argv, const Program& program) {
  std::string csv;
  std::string json;
  int device = 0;
  common::ArgParser args(program.name, program.summary);
  common::add_output_options(args, csv, json, "every row");
  common::add_device_option(args, device);
  std::vector<std::uint64_t> sizes = program.sizes;
  if (!program.sizes.empty())
    args.option("--sweep", "LO:HI[:F]",
                "the sizes, from LO to HI multiplying by F (default 2), each from 2^10 to 2^30 (default " +
                    common::format_count(program.sizes.front()) + ":" + common::format_count(program.sizes.back()) +
                    ")",
                [&](const std::string& v) {
                  sizes = common::parse_sweep(v);
                  for (std::uint64_t n : sizes)
                    if (n < (1u << 10) || n > (1u << 30))
                      throw common::UsageError("--sweep '" + v + "': every size must be from 2^10 to 2^30, not " +
                                               common::format_count(n) + ".");
                });
  args.epilog(
      "What the designs are and what their numbers decided: lab/notes/90_lab_notes.md.\n"
      "Exit codes: 0 every checked row verified, 1 a check failed or a CUDA error occurred, 2 bad usage, 3 no "
      "CUDA device.");
  return common::run_program(program.name, [&] {
    if (!args.parse(argc, argv)) return 0;
    const common::DeviceInfo info = common::query_device(device);
    const std::size_t max_n =
        sizes.empty() ? program.max_n : std::max<std::size_t>(program.max_n, static_cast<std::size_t>(sizes.back()));
    Experiment experiment(program.name, info, max_n, sizes);
    std::vector<common::Record> records = program.body(experiment);
    for (const Row& r : experiment.rows()) records.push_back(row_record(r));
    common::Metadata meta = common::base_metadata(info);
    meta.push_back({"experiment", program.name});
    meta.push_back({"l2_flush", "read"});
    return common::finish_run(csv, json, meta, records, experiment.all_ok(), "Some checks FAILED.");
  });
}

}  // namespace lab
