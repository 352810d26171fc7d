// Access patterns 03: array of structures against structure of arrays.
//
// Idea: a particle has eight floats (position x y z, velocity vx vy vz, mass, charge);
// one time step moves every particle, x += vx dt and likewise for y and z, reading six
// fields and writing three. The same update three ways:
//   aos          Particle p[n], 32 bytes each: a warp's lanes read one field 32 bytes
//                apart, so every load instruction touches 32 sectors, and the sectors
//                bring the untouched mass and charge along;
//   aos-float4   the same array read as two float4 per particle (the compiler may
//                narrow the second to the 8 bytes it uses) and the first written back
//                as one float4: fewer instructions, the same sectors;
//   soa          eight arrays of n floats: every field load is 32 neighbouring floats,
//                4 sectors, and mass and charge are never read.
// Expect: soa fastest; aos-float4 between (the DRAM traffic of aos, fewer requests);
// the gap is what the sectors per request column predicts only in part: the L1 cache
// serves the second to sixth field of a particle from the sectors the first loaded.
// Bytes counted: 24 read + 12 written per particle (the fields the update needs).
// The update is in place, so each checked run starts from a fresh copy of the
// particles; a particle the kernel skipped keeps its old position, which differs from
// the expected one (|v dt| >= 0.005 and the positions are below 1).
// Nsight Compute: dram__bytes_read.sum and dram__bytes_write.sum per particle, and
// l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum per request.
// Chapter: chapters/24_global_memory_access.md
#include <cmath>
#include <string>
#include <vector>

#include "access_check.hpp"
#include "access_index.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "programs.hpp"

namespace access_patterns {
namespace {

constexpr unsigned kBlock = 256;
constexpr float kDt = 0.01f;
enum Variant { kAos, kAosFloat4, kSoa };

struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;
};
static_assert(sizeof(Particle) == kParticleFloats * sizeof(float), "a particle is eight floats");

struct ParticleArrays {
  float *x, *y, *z, *vx, *vy, *vz, *mass, *charge;
};

__global__ void update_aos(Particle* __restrict__ p, std::uint64_t n, float dt) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i].x = fmaf(p[i].vx, dt, p[i].x);
    p[i].y = fmaf(p[i].vy, dt, p[i].y);
    p[i].z = fmaf(p[i].vz, dt, p[i].z);
  }
}

// A particle is 32 bytes and the array starts on a 256-byte boundary, so it is two
// aligned float4: (x, y, z, vx) and (vy, vz, mass, charge).
__global__ void update_aos_float4(Particle* __restrict__ p, std::uint64_t n, float dt) {
  float4* v = reinterpret_cast<float4*>(p);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    float4 a = v[2 * i];
    const float4 b = v[2 * i + 1];
    a.x = fmaf(a.w, dt, a.x);
    a.y = fmaf(b.x, dt, a.y);
    a.z = fmaf(b.y, dt, a.z);
    v[2 * i] = a;
  }
}

__global__ void update_soa(ParticleArrays p, std::uint64_t n, float dt) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    p.x[i] = fmaf(p.vx[i], dt, p.x[i]);
    p.y[i] = fmaf(p.vy[i], dt, p.y[i]);
    p.z[i] = fmaf(p.vz[i], dt, p.z[i]);
  }
}

class AosSoa : public Workload {
 public:
  AosSoa(const Options& opt, const common::DeviceInfo& device)
      : n_(opt.n),
        grid_(static_cast<unsigned>(std::min<std::uint64_t>(ceil_div(opt.n, kBlock), 8ull * device.sm_count))),
        host_(make_particles(opt.n, opt.seed)),
        expected_(update_particles(host_, kDt)),
        aos_(opt.n),
        aos_start_(opt.n),
        soa_(kParticleFloats * opt.n),
        soa_start_(kParticleFloats * opt.n) {
    common::copy_to_device(aos_start_.get(), host_.data(), aos_start_.bytes());
    const std::vector<float> columns = to_columns(host_);
    common::copy_to_device(soa_start_.get(), columns.data(), soa_start_.bytes());
  }

  // The update is in place: a checked run starts from the particles as generated.
  void reset(const RowSpec& row, cudaStream_t stream) override {
    if (row.variant == kSoa)
      CUDA_CHECK(cudaMemcpyAsync(soa_.get(), soa_start_.get(), soa_.bytes(), cudaMemcpyDeviceToDevice, stream));
    else
      CUDA_CHECK(cudaMemcpyAsync(aos_.get(), aos_start_.get(), aos_.bytes(), cudaMemcpyDeviceToDevice, stream));
  }

  Verdict verify(const RowSpec& row, cudaStream_t stream) override {
    if (row.variant == kSoa)
      return compare_exact(to_rows(copy_back(soa_.get(), soa_.size(), stream)), expected_, "particle fields");
    return compare_exact(copy_back(reinterpret_cast<const float*>(aos_.get()), kParticleFloats * n_, stream), expected_,
                         "particle fields");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    if (row.variant == kAos) update_aos<<<grid_, kBlock, 0, stream>>>(aos_.get(), n_, kDt);
    if (row.variant == kAosFloat4) update_aos_float4<<<grid_, kBlock, 0, stream>>>(aos_.get(), n_, kDt);
    if (row.variant == kSoa) {
      float* f = soa_.get();
      const ParticleArrays arrays{f, f + n_, f + 2 * n_, f + 3 * n_, f + 4 * n_, f + 5 * n_, f + 6 * n_, f + 7 * n_};
      update_soa<<<grid_, kBlock, 0, stream>>>(arrays, n_, kDt);
    }
    CUDA_CHECK_LAUNCH();
  }

 private:
  // Field f of particle i: AoS order is i * 8 + f, SoA order f * n + i.
  std::vector<float> to_columns(const std::vector<float>& rows) const {
    std::vector<float> out(rows.size());
    for (std::uint64_t i = 0; i < n_; ++i)
      for (unsigned f = 0; f < kParticleFloats; ++f) out[f * n_ + i] = rows[i * kParticleFloats + f];
    return out;
  }
  std::vector<float> to_rows(const std::vector<float>& columns) const {
    std::vector<float> out(columns.size());
    for (std::uint64_t i = 0; i < n_; ++i)
      for (unsigned f = 0; f < kParticleFloats; ++f) out[i * kParticleFloats + f] = columns[f * n_ + i];
    return out;
  }

  std::uint64_t n_;
  unsigned grid_;
  std::vector<float> host_;
  std::vector<float> expected_;
  common::DeviceBuffer<Particle> aos_;
  common::DeviceBuffer<Particle> aos_start_;
  common::DeviceBuffer<float> soa_;
  common::DeviceBuffer<float> soa_start_;
};

}  // namespace

std::vector<float> make_particles(std::uint64_t n, std::uint64_t seed) {
  std::vector<float> p(kParticleFloats * n);
  common::parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      for (unsigned f = 0; f < kParticleFloats; ++f) {
        const std::uint64_t h = common::hash64(seed, i * kParticleFloats + f);
        const float unit = static_cast<float>(h >> 40) * 0x1p-24f;  // [0, 1)
        // Velocities (fields 3 to 5): a random sign and a magnitude in [0.5, 1).
        p[i * kParticleFloats + f] = (f >= 3 && f <= 5) ? ((h & 1) ? -1.0f : 1.0f) * (0.5f + 0.5f * unit) : unit;
      }
  });
  return p;
}

std::vector<float> update_particles(const std::vector<float>& particles, float dt) {
  std::vector<float> out = particles;
  for (std::size_t i = 0; i + kParticleFloats <= out.size(); i += kParticleFloats)
    for (unsigned f = 0; f < 3; ++f) out[i + f] = std::fma(out[i + 3 + f], dt, out[i + f]);
  return out;
}

ProgramSpec aos_soa_program() {
  ProgramSpec p;
  p.name = "03_aos_soa";
  p.summary =
      "Moves n particles one time step (x += vx dt, y += vy dt, z += vz dt) stored as an array of 32-byte "
      "structures, read field by field or as two float4, and as a structure of eight arrays; verifies every field "
      "of every particle and times each layout.";
  p.epilog = "The kernel and the host both use a fused multiply-add, so positions must match bit for bit.";
  p.n_unit = "particles";
  p.n_element_bytes = kParticleFloats * sizeof(float);
  p.default_n = std::uint64_t{1} << 24;
  p.max_n = std::uint64_t{1} << 30;
  p.bytes_note = "(24 bytes read + 12 written per particle)";
  p.param_columns = {{"sectors_pred", "sect/req", 8, 1}};
  p.plan = [](const Options& opt) {
    const double bytes = 36.0 * static_cast<double>(opt.n);
    // Sectors the first warp's load of x touches: lanes 32 bytes apart in AoS, 4 apart in SoA.
    auto row = [&](const char* key, const char* label, Variant v, double sectors) {
      RowSpec r;
      r.key = key;
      r.label = label;
      r.variant = v;
      r.bytes = bytes;
      r.base = v == kAos ? "" : "aos";
      r.params = {common::number_field("sectors_pred", sectors)};
      return r;
    };
    const double lanes = static_cast<double>(std::min<std::uint64_t>(opt.n, kWarp));
    return std::vector<RowSpec>{row("aos", "Particle[n], field loads", kAos, lanes),
                                row("aos-float4", "Particle[n], two float4 loads", kAosFloat4, lanes),
                                row("soa", "8 arrays of n floats", kSoa, std::ceil(lanes * 4 / kSectorBytes))};
  };
  p.device_bytes = [](const Options& opt) { return 4 * 32 * opt.n; };
  p.prepare = [](const Options& opt, const common::DeviceInfo& device) {
    return std::make_unique<AosSoa>(opt, device);
  };
  return p;
}

}  // namespace access_patterns
