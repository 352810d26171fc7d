// The access-pattern programs: each numbered file defines its ProgramSpec, and the
// host references and predictions the tests check without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "access_check.hpp"
#include "runner.hpp"

namespace access_patterns {

constexpr unsigned kParticleFloats = 8;  // 03: x y z vx vy vz mass charge
constexpr unsigned kBins = 256;          // 06: one per byte value

// 01_stride_offset.cu
ProgramSpec stride_offset_program();
// Each thread's partial sum of the row's reads from `in` (the n + 31 input floats).
std::vector<SumRef> reference_read_sums(const RowSpec& row, std::uint64_t n, std::uint64_t seed,
                                        const std::vector<float>& in);
// Distinct 32-byte sectors a warp's request touches (averaged over warps for random).
double predicted_sectors(const RowSpec& row, std::uint64_t n, std::uint64_t seed);

// 02_rows_columns.cu
ProgramSpec rows_columns_program();
// The `sums` sums of `terms` floats of `in` as `variant` groups them (0: rows of
// sums x terms, 1: columns of terms x sums, 2: rows again, summed by a warp).
std::vector<SumRef> reference_line_sums(const std::vector<float>& in, std::uint64_t sums, unsigned terms, int variant);

// 03_aos_soa.cu
ProgramSpec aos_soa_program();
// n particles of kParticleFloats floats, particle by particle.
std::vector<float> make_particles(std::uint64_t n, std::uint64_t seed);
// The particles after one step of x += vx dt (fused multiply-add), other fields unchanged.
std::vector<float> update_particles(const std::vector<float>& particles, float dt);

// 04_vector_width_index.cu
ProgramSpec vector_width_index_program();
std::vector<float> reference_scale(const std::vector<float>& in, float a);

// 05_bank_padding.cu
ProgramSpec bank_padding_program();
// Each thread's sum for `blocks` blocks reading at `stride` (tiles as the program makes them).
std::vector<unsigned> reference_strided_sums(const std::vector<unsigned>& tiles, unsigned stride, std::uint64_t blocks);
// Wavefronts per shared-memory load at `stride`, with or without padding.
unsigned predicted_wavefronts(unsigned stride, bool pad);

// 06_histogram.cu
ProgramSpec histogram_program();
std::vector<unsigned char> make_histogram_data(std::uint64_t n, std::uint64_t seed, bool skewed);
std::vector<unsigned> reference_histogram(const std::vector<unsigned char>& bytes);

// 07_fusion.cu
ProgramSpec fusion_program();
std::vector<float> reference_add_scale(const std::vector<float>& x, const std::vector<float>& y, float s);

// 08_block_scan.cu
ProgramSpec block_scan_program();
std::vector<unsigned> make_scan_input(std::uint64_t n, std::uint64_t seed);
// Exclusive prefix sums restarting at every multiple of `tile`.
std::vector<unsigned> reference_tile_scan(const std::vector<unsigned>& in, std::size_t tile);
// Average wavefronts per shared-memory load of the tile scan.
double predicted_scan_wavefronts(bool pad);

// Every program in chapter order, for the tests (access_patterns/CMakeLists.txt builds
// one executable per entry, named after ProgramSpec::name).
std::vector<ProgramSpec> all_programs();

}  // namespace access_patterns
