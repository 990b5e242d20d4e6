#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

// Same layout as CUDA's double4 / double3.
struct alignas(16) Body {
  double x, y, z, mass;
};
struct Vec3 {
  double x, y, z;
};

}  // namespace

WorkloadResult run_nbody(Device& device) {
  constexpr int kBodies = 600;  // not a multiple of the tile
  constexpr int kSteps = 2;
  constexpr std::uint32_t kBlock = 128;
  const double softening_sq = 1e-4;
  const double dt = 1e-3;

  Rng rng(0x5eed0013);
  std::vector<Body> bodies(kBodies);
  std::vector<Vec3> velocities(kBodies);
  for (Body& b : bodies) b = {rng.uniform_double(-1, 1), rng.uniform_double(-1, 1), rng.uniform_double(-1, 1), rng.uniform_double(0.5, 1.5)};
  for (Vec3& v : velocities) v = {rng.uniform_double(-0.1, 0.1), rng.uniform_double(-0.1, 0.1), rng.uniform_double(-0.1, 0.1)};

  DeviceBuffer<Body> d_bodies(device, bodies);
  DeviceBuffer<Vec3> d_velocities(device, velocities), d_accelerations(device, kBodies);
  for (int step = 0; step < kSteps; ++step) {
    device.launch("nbody_accelerations", ceil_div(kBodies, kBlock), kBlock, kBlock * sizeof(Body),
                  KernelArgs().ptr(d_bodies.ptr()).ptr(d_accelerations.ptr()).i32(kBodies).f64(softening_sq));
    device.launch("nbody_integrate", ceil_div(kBodies, kBlock), kBlock, 0,
                  KernelArgs().ptr(d_bodies.ptr()).ptr(d_velocities.ptr()).ptr(d_accelerations.ptr()).i32(kBodies).f64(dt));
  }
  device.synchronize();

  std::vector<Vec3> accelerations(kBodies);
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kBodies; ++i) {
      Vec3 a{0.0, 0.0, 0.0};
      for (int j = 0; j < kBodies; ++j) {
        const double dx = bodies[j].x - bodies[i].x;
        const double dy = bodies[j].y - bodies[i].y;
        const double dz = bodies[j].z - bodies[i].z;
        const double dist_sq = std::fma(dz, dz, std::fma(dy, dy, std::fma(dx, dx, softening_sq)));
        const double strength = bodies[j].mass * (1.0 / (dist_sq * std::sqrt(dist_sq)));
        a.x = std::fma(dx, strength, a.x);
        a.y = std::fma(dy, strength, a.y);
        a.z = std::fma(dz, strength, a.z);
      }
      accelerations[i] = a;
    }
    for (int i = 0; i < kBodies; ++i) {
      Vec3& v = velocities[i];
      v = {std::fma(accelerations[i].x, dt, v.x), std::fma(accelerations[i].y, dt, v.y), std::fma(accelerations[i].z, dt, v.z)};
      bodies[i].x = std::fma(v.x, dt, bodies[i].x);
      bodies[i].y = std::fma(v.y, dt, bodies[i].y);
      bodies[i].z = std::fma(v.z, dt, bodies[i].z);
    }
  }

  const auto flatten_bodies = [](const std::vector<Body>& list) {
    std::vector<double> flat;
    for (const Body& b : list) flat.insert(flat.end(), {b.x, b.y, b.z, b.mass});
    return flat;
  };
  const auto flatten_vectors = [](const std::vector<Vec3>& list) {
    std::vector<double> flat;
    for (const Vec3& v : list) flat.insert(flat.end(), {v.x, v.y, v.z});
    return flat;
  };
  // Correctly rounded operations and fmas in the same order: exact.
  Check check;
  check.exact("bodies", flatten_bodies(d_bodies.download()), flatten_bodies(bodies));
  check.exact("velocities", flatten_vectors(d_velocities.download()), flatten_vectors(velocities));
  return check.result("600 bodies, 2 steps, FP64, 128-body shared tiles");
}

}  // namespace gpuvp::workloads
