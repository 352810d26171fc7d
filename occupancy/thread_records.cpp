#include "thread_records.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <numeric>
#include <sstream>

namespace occupancy {

CoverageReport check_coverage(const std::vector<ThreadRecord>& records, std::uint32_t grid, std::uint32_t block,
                              int warp_size) {
  CoverageReport rep;
  rep.records = records.size();
  rep.expected = static_cast<std::size_t>(grid) * block;
  const auto ws = static_cast<std::uint64_t>(warp_size);
  std::vector<std::uint8_t> seen(rep.expected, 0);
  std::ostringstream why;
  int examples = 0;
  auto note = [&](const std::string& text) {
    if (examples++ < 3) why << (examples > 1 ? "; " : "") << text;
  };

  for (std::size_t i = 0; i < records.size(); ++i) {
    const ThreadRecord& r = records[i];
    if (r.global_thread >= rep.expected) {
      ++rep.out_of_range;
      note("record " + std::to_string(i) + " names thread " + std::to_string(r.global_thread) + ", beyond the " +
           std::to_string(rep.expected) + " launched");
      continue;
    }
    std::uint8_t& s = seen[r.global_thread];
    if (s < 2) ++s;
    const std::uint64_t in_block = r.global_thread % block;
    const bool consistent =
        r.block == r.global_thread / block && r.warp == in_block / ws && r.lane == in_block % ws && r.hw_lane == r.lane;
    if (!consistent) {
      ++rep.inconsistent;
      note("thread " + std::to_string(r.global_thread) + " recorded block " + std::to_string(r.block) + ", warp " +
           std::to_string(r.warp) + ", lane " + std::to_string(r.lane) + " (hardware lane " +
           std::to_string(r.hw_lane) + ")");
    }
  }
  for (std::size_t g = 0; g < seen.size(); ++g) {
    if (seen[g] == 0) {
      ++rep.missing;
      note("thread " + std::to_string(g) + " has no record");
    } else if (seen[g] > 1) {
      ++rep.duplicates;
      note("thread " + std::to_string(g) + " has more than one record");
    }
  }
  rep.ok = rep.records == rep.expected && rep.missing == 0 && rep.duplicates == 0 && rep.out_of_range == 0 &&
           rep.inconsistent == 0;
  if (!rep.ok) {
    std::ostringstream full;
    full << rep.records << " records for " << rep.expected << " threads: " << rep.missing << " missing, "
         << rep.duplicates << " duplicated, " << rep.out_of_range << " out of range, " << rep.inconsistent
         << " inconsistent (" << why.str() << ")";
    rep.detail = full.str();
  }
  return rep;
}

namespace {

// What the lanes of one warp agree on.
struct WarpView {
  bool seen = false;
  std::uint32_t smid = 0;
  std::uint64_t clock = 0;
  std::uint64_t globaltimer = 0;
  std::uint32_t ticket = 0;
  bool one_sm = true;
  bool same_clock = true;
  bool same_globaltimer = true;
};

}  // namespace

HierarchySummary summarize_records(const std::vector<ThreadRecord>& records, std::uint32_t grid, std::uint32_t block,
                                   int warp_size) {
  HierarchySummary s;
  s.grid = grid;
  s.block = block;
  s.threads = records.size();
  const std::size_t warps_per_block = (block + static_cast<std::uint32_t>(warp_size) - 1) / warp_size;
  s.warps = warps_per_block * grid;

  std::vector<WarpView> warps(s.warps);
  for (const ThreadRecord& r : records) {
    WarpView& w = warps[r.block * warps_per_block + r.warp];
    if (!w.seen) {
      w.seen = true;
      w.smid = r.smid;
      w.clock = r.clock;
      w.globaltimer = r.globaltimer;
      w.ticket = r.warp_ticket;
      continue;
    }
    w.one_sm = w.one_sm && r.smid == w.smid;
    w.same_clock = w.same_clock && r.clock == w.clock;
    w.same_globaltimer = w.same_globaltimer && r.globaltimer == w.globaltimer;
    w.ticket = std::min(w.ticket, r.warp_ticket);
    w.globaltimer = std::min(w.globaltimer, r.globaltimer);
  }
  for (const ThreadRecord& r : records) s.lanes_match_hardware += r.lane == r.hw_lane ? 1 : 0;
  for (const WarpView& w : warps) {
    s.warps_one_sm += w.one_sm ? 1 : 0;
    s.warps_same_clock += w.same_clock ? 1 : 0;
    s.warps_same_globaltimer += w.same_globaltimer ? 1 : 0;
  }

  // A block starts when its first warp does.
  std::vector<std::uint32_t> block_ticket(grid, 0);
  std::vector<std::uint64_t> block_start_ns(grid, 0);
  std::vector<std::uint32_t> block_sm(grid, 0);
  std::map<std::uint32_t, std::size_t> blocks_on_sm;
  for (std::uint32_t b = 0; b < grid; ++b) {
    const WarpView* first = &warps[b * warps_per_block];
    bool one_sm = true;
    bool in_order = true;
    std::uint32_t ticket = first->ticket;
    std::uint64_t start = first->globaltimer;
    for (std::size_t w = 0; w < warps_per_block; ++w) {
      const WarpView& v = first[w];
      one_sm = one_sm && v.one_sm && v.smid == first->smid;
      if (w > 0 && v.ticket < first[w - 1].ticket) in_order = false;
      ticket = std::min(ticket, v.ticket);
      start = std::min(start, v.globaltimer);
    }
    s.blocks_one_sm += one_sm ? 1 : 0;
    s.blocks_with_warps_out_of_order += in_order ? 0 : 1;
    block_ticket[b] = ticket;
    block_start_ns[b] = start;
    block_sm[b] = first->smid;
    ++blocks_on_sm[first->smid];
  }

  s.start_order.resize(grid);
  std::iota(s.start_order.begin(), s.start_order.end(), 0u);
  std::stable_sort(s.start_order.begin(), s.start_order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return block_ticket[a] < block_ticket[b]; });
  s.start_sm.resize(grid);
  for (std::uint32_t i = 0; i < grid; ++i) {
    s.start_sm[i] = block_sm[s.start_order[i]];
    s.blocks_out_of_order += s.start_order[i] != i ? 1 : 0;
  }
  if (grid > 0) {
    const auto [lo, hi] = std::minmax_element(block_start_ns.begin(), block_start_ns.end());
    s.start_spread_ns = *hi - *lo;
  }

  s.sms_used = blocks_on_sm.size();
  for (const auto& [sm, count] : blocks_on_sm) {
    s.min_blocks_per_sm = s.min_blocks_per_sm == 0 ? count : std::min(s.min_blocks_per_sm, count);
    s.max_blocks_per_sm = std::max(s.max_blocks_per_sm, count);
  }
  return s;
}

std::string format_summary(const HierarchySummary& s, std::size_t first, int sm_count) {
  std::ostringstream o;
  auto line = [&](const std::string& what, std::size_t count, std::size_t of) {
    o << "  " << std::left << std::setw(60) << what << " " << std::right << count << " of " << of << "\n";
  };
  o << "Grid of " << s.grid << " blocks x " << s.block << " threads = " << s.threads << " threads, " << s.warps
    << " warps (a partial warp counts as one).\n\n";

  o << "Lanes of a warp run together (each lane read these for itself):\n";
  line("warps whose lanes all ran on one SM (%smid)", s.warps_one_sm, s.warps);
  line("warps whose lanes all read the same clock64()", s.warps_same_clock, s.warps);
  line("warps whose lanes all read the same %globaltimer", s.warps_same_globaltimer, s.warps);
  line("threads whose threadIdx.x % 32 equals the hardware %laneid", s.lanes_match_hardware, s.threads);
  o << "\nA block never leaves its SM:\n";
  line("blocks whose threads all ran on one SM", s.blocks_one_sm, s.grid);

  o << "\nBlocks and warps start in no fixed order:\n";
  line("blocks whose start position differs from their index", s.blocks_out_of_order, s.grid);
  line("blocks whose warps did not start in the order 0, 1, 2, ...", s.blocks_with_warps_out_of_order, s.grid);
  const std::size_t shown = std::min(first, s.start_order.size());
  o << "  first " << shown << " blocks in start order (block@SM):";
  for (std::size_t i = 0; i < shown; ++i) o << " " << s.start_order[i] << "@" << s.start_sm[i];
  o << "\n";
  o << "  first to last block start: " << std::fixed << std::setprecision(1)
    << static_cast<double>(s.start_spread_ns) / 1e3 << " us (%globaltimer)\n";

  o << "\nBlocks per SM: " << s.sms_used;
  if (sm_count > 0) o << " of " << sm_count;
  o << " SMs ran blocks, " << s.min_blocks_per_sm;
  if (s.max_blocks_per_sm != s.min_blocks_per_sm) o << " to " << s.max_blocks_per_sm;
  o << " block" << (s.max_blocks_per_sm == 1 ? "" : "s") << " each.\n";
  return o.str();
}

std::string raw_header() { return "thread block warp lane hw_lane smid warp_ticket clock64 globaltimer_ns"; }

std::string raw_line(const ThreadRecord& r) {
  std::ostringstream o;
  o << r.global_thread << " " << r.block << " " << r.warp << " " << r.lane << " " << r.hw_lane << " " << r.smid << " "
    << r.warp_ticket << " " << r.clock << " " << r.globaltimer;
  return o.str();
}

}  // namespace occupancy
