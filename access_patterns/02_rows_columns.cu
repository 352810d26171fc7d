// Access patterns 02: the same sums parallelised along rows and along columns.
//
// Idea: S sums of K floats each, from one buffer of n = S x K floats, three ways:
//   row-per-thread     the buffer is S rows of K (row-major); thread r adds up row r.
//                      At each step the 32 lanes of a warp read floats K apart: 32
//                      sectors per request, 4 useful bytes in each.
//   column-per-thread  the buffer is K rows of S; thread c adds up column c. At each
//                      step the lanes read 32 neighbouring floats: 4 sectors.
//   row-per-warp       the S x K view again, one warp per row: the lanes walk along
//                      the row side by side, then a warp shuffle adds their 32 sums.
// The first two launch the same S threads, each adding K floats of the same buffer;
// only the direction the lanes are spread in memory differs. The third shows that
// row sums need not be strided: give the row to a warp instead of a thread.
// Expect: column-per-thread and row-per-warp near the memory's speed; row-per-thread
// several times slower. The L1 cache keeps the other 7 floats of each sector for the
// thread's next steps, so DRAM traffic is about the same; the cost is the 32 sectors
// every request asks the L1 for.
// Bytes counted: 4 per float read plus 4 per sum written.
// Nsight Compute: sectors per request (l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
// / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum): 32, 4 and 4.
// Chapter: chapters/24_global_memory_access.md
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "access_check.hpp"
#include "access_index.hpp"
#include "cli.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "programs.hpp"

namespace access_patterns {
namespace {

constexpr unsigned kBlock = 256;
enum Variant { kRowPerThread, kColumnPerThread, kRowPerWarp };

__global__ void row_per_thread(const float* __restrict__ in, std::uint64_t sums, unsigned terms,
                               float* __restrict__ out) {
  const std::uint64_t r = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (r >= sums) return;
  const float* row = in + r * terms;
  float s = 0.0f;
  for (unsigned k = 0; k < terms; ++k) s += row[k];
  out[r] = s;
}

__global__ void column_per_thread(const float* __restrict__ in, std::uint64_t sums, unsigned terms,
                                  float* __restrict__ out) {
  const std::uint64_t c = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (c >= sums) return;
  float s = 0.0f;
  for (unsigned k = 0; k < terms; ++k) s += in[k * sums + c];
  out[c] = s;
}

__global__ void row_per_warp(const float* __restrict__ in, std::uint64_t sums, unsigned terms,
                             float* __restrict__ out) {
  const std::uint64_t r = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (r >= sums) return;  // the whole warp leaves together: its lanes share r
  const float* row = in + r * terms;
  float s = 0.0f;
  for (unsigned k = lane; k < terms; k += kWarp) s += row[k];
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (lane == 0) out[r] = s;
}

class RowsColumns : public Workload {
 public:
  RowsColumns(const Options& opt, unsigned terms)
      : sums_(opt.n / terms),
        terms_(terms),
        host_(common::make_input(common::Pattern::uniform, opt.seed, opt.n)),
        in_(opt.n),
        out_(sums_) {
    common::copy_to_device(in_.get(), host_.data(), in_.bytes());
  }

  void reset(const RowSpec&, cudaStream_t stream) override { poison_words(out_.get(), sums_, stream); }

  Verdict verify(const RowSpec& row, cudaStream_t stream) override {
    const auto got = copy_back(out_.get(), sums_, stream);
    return check_sums(got, reference_line_sums(host_, sums_, terms_, row.variant), "sums");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    const std::uint64_t threads = row.variant == kRowPerWarp ? sums_ * kWarp : sums_;
    const unsigned grid = static_cast<unsigned>(ceil_div(threads, kBlock));
    if (row.variant == kRowPerThread) row_per_thread<<<grid, kBlock, 0, stream>>>(in_.get(), sums_, terms_, out_.get());
    if (row.variant == kColumnPerThread)
      column_per_thread<<<grid, kBlock, 0, stream>>>(in_.get(), sums_, terms_, out_.get());
    if (row.variant == kRowPerWarp) row_per_warp<<<grid, kBlock, 0, stream>>>(in_.get(), sums_, terms_, out_.get());
    CUDA_CHECK_LAUNCH();
  }

 private:
  std::uint64_t sums_;
  unsigned terms_;
  std::vector<float> host_;
  common::DeviceBuffer<float> in_;
  common::DeviceBuffer<float> out_;
};

}  // namespace

std::vector<SumRef> reference_line_sums(const std::vector<float>& in, std::uint64_t sums, unsigned terms, int variant) {
  std::vector<SumRef> refs(sums);
  common::parallel_chunks(sums, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      SumRef& s = refs[i];
      for (unsigned k = 0; k < terms; ++k) {
        const double x = variant == kColumnPerThread ? in[k * sums + i] : in[i * terms + k];
        s.sum += x;
        s.sum_abs += std::fabs(x);
      }
      s.terms = terms;
      // One running sum per thread; per warp, each lane's running sum then 5 shuffle levels.
      s.depth = variant == kRowPerWarp ? ceil_div(terms, kWarp) + 5 : terms;
    }
  });
  return refs;
}

ProgramSpec rows_columns_program() {
  auto terms = std::make_shared<unsigned>(256);
  ProgramSpec p;
  p.name = "02_rows_columns";
  p.summary =
      "Adds up S sums of K floats from one buffer of n = S x K floats: one thread per row of an S x K matrix, "
      "one thread per column of a K x S matrix, and one warp per row; verifies and times each.";
  p.epilog = "n must be a multiple of --terms.";
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = std::uint64_t{1} << 32;
  p.bytes_note = "(4 bytes per float read + 4 per sum written)";
  p.param_columns = {{"sectors_pred", "sect/req", 8, 1}};
  p.add_options = [terms](common::ArgParser& args) {
    args.option("--terms", "K", "floats in each sum (default 256)", [terms](const std::string& v) {
      *terms = static_cast<unsigned>(common::parse_int(v, "--terms", 1, 1 << 20));
    });
  };
  p.check_options = [terms](const Options& opt) {
    if (opt.n % *terms != 0)
      throw common::UsageError("--n " + std::to_string(opt.n) + " is not a multiple of --terms " +
                               std::to_string(*terms) + ": the buffer holds n / terms sums of terms floats each.");
  };
  p.plan = [terms](const Options& opt) {
    const unsigned k = *terms;
    const std::uint64_t sums = opt.n / k;
    struct V {
      Variant v;
      const char* key;
      const char* label;
    };
    const V variants[] = {{kRowPerThread, "row-per-thread", "thread r adds row r of S x K"},
                          {kColumnPerThread, "column-per-thread", "thread c adds column c of K x S"},
                          {kRowPerWarp, "row-per-warp", "warp r adds row r of S x K"}};
    std::vector<RowSpec> rows;
    for (const V& v : variants) {
      RowSpec r;
      r.key = v.key;
      r.label = v.label;
      r.variant = v.v;
      r.base = v.v == kRowPerThread ? "" : "row-per-thread";
      r.bytes = 4.0 * static_cast<double>(opt.n + sums);
      // The byte addresses the first warp asks for at its first step.
      std::vector<std::uint64_t> bytes;
      for (std::uint64_t lane = 0; lane < std::min<std::uint64_t>(kWarp, v.v == kRowPerWarp ? k : sums); ++lane)
        bytes.push_back(4 * (v.v == kRowPerThread ? lane * k : lane));
      r.params = {common::number_field("sums", static_cast<double>(sums)), common::number_field("terms", k),
                  common::number_field("sectors_pred", static_cast<double>(distinct_sectors(bytes)))};
      rows.push_back(r);
    }
    return rows;
  };
  p.device_bytes = [terms](const Options& opt) { return 4 * (opt.n + opt.n / *terms); };
  p.metadata = [terms](const Options&) { return common::Metadata{{"terms", std::to_string(*terms)}}; };
  p.prepare = [terms](const Options& opt, const common::DeviceInfo&) {
    return std::make_unique<RowsColumns>(opt, *terms);
  };
  return p;
}

}  // namespace access_patterns
