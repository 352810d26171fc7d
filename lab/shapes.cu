// shapes: the tagged ticket kernel with other grid shapes, n = 2^16 .. 2^24 (or --sweep),
// beside stage15.
// Chapter: lab/notes/92_lab_notes_reading.md. Run: build/lab/shapes [--sweep LO:HI] [--csv FILE]
//
//   tBxT-uU-mM   B blocks of T threads per SM (at most as many as fit), U loads in
//                flight per thread, at least M vectors per thread; t3x512-u4-m2 is the
//                ticket path's own shape
#include "cli.hpp"
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::Experiment;
using lab::run_shape;

std::vector<common::Record> shapes(Experiment& e) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  for (const std::uint64_t size : e.sizes()) {
    const auto n = static_cast<std::size_t>(size);
    e.set_n(n);
    e.measure("stage15", 512, g::grid_for<float, g::Sum>(n, sms),
              [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
    run_shape<512, 4>(e, 3, 2);  // the ticket path as it is
    run_shape<512, 4>(e, 3, 1);
    run_shape<512, 8>(e, 2, 2);
    run_shape<512, 8>(e, 2, 4);
    run_shape<256, 4>(e, 8, 1);
    run_shape<256, 4>(e, 8, 2);
    run_shape<256, 4>(e, 8, 4);
    run_shape<256, 8>(e, 8, 2);
    run_shape<1024, 4>(e, 2, 1);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"shapes",
       "n = 2^16 .. 2^24 (or --sweep): the tagged ticket kernel with other blocks, loads in flight and grids.\n"
       "Designs: stage15, and tBxT-uU-mM: B blocks of T threads per SM, U loads in flight per thread, at least\n"
       "M vectors per thread.\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 24, shapes, common::parse_sweep("2^16:2^24")});
}
