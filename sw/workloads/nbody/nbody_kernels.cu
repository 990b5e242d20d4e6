// All-pairs gravitational n-body in double precision. Positions and masses are 16-byte aligned
// structs (x, y, z, mass), so loads and shared-memory accesses are vectorized; bodies are staged in
// shared-memory tiles of blockDim.x. A softening term makes the self-interaction zero instead
// of a division by zero. Every operation is an explicit fma or correctly rounded intrinsic, so
// the CPU reference repeats the arithmetic exactly.

// Same layout as the host's Body/Vec3 (CUDA 13 deprecates the plain double4).
struct __align__(16) Body {
  double x, y, z, w;  // position and mass
};
struct Vec3 {
  double x, y, z;
};

extern "C" __global__ void nbody_accelerations(const Body* bodies, Vec3* accelerations, int count, double softening_sq) {
  extern __shared__ Body tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const Body me = i < count ? bodies[i] : Body{0.0, 0.0, 0.0, 0.0};
  double ax = 0.0, ay = 0.0, az = 0.0;
  for (int base = 0; base < count; base += blockDim.x) {
    if (base + threadIdx.x < count) tile[threadIdx.x] = bodies[base + threadIdx.x];
    __syncthreads();
    const int in_tile = min(static_cast<int>(blockDim.x), count - base);
    for (int k = 0; k < in_tile; ++k) {
      const Body other = tile[k];
      const double dx = __dsub_rn(other.x, me.x);
      const double dy = __dsub_rn(other.y, me.y);
      const double dz = __dsub_rn(other.z, me.z);
      const double dist_sq = fma(dz, dz, fma(dy, dy, fma(dx, dx, softening_sq)));
      const double inv_cube = __ddiv_rn(1.0, __dmul_rn(dist_sq, __dsqrt_rn(dist_sq)));
      const double strength = __dmul_rn(other.w, inv_cube);
      ax = fma(dx, strength, ax);
      ay = fma(dy, strength, ay);
      az = fma(dz, strength, az);
    }
    __syncthreads();
  }
  if (i < count) accelerations[i] = Vec3{ax, ay, az};
}

// Semi-implicit Euler: v += a*dt, then x += v*dt.
extern "C" __global__ void nbody_integrate(Body* bodies, Vec3* velocities, const Vec3* accelerations, int count, double dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Vec3 v = velocities[i];
  const Vec3 a = accelerations[i];
  v.x = fma(a.x, dt, v.x);
  v.y = fma(a.y, dt, v.y);
  v.z = fma(a.z, dt, v.z);
  velocities[i] = v;
  Body b = bodies[i];
  b.x = fma(v.x, dt, b.x);
  b.y = fma(v.y, dt, b.y);
  b.z = fma(v.z, dt, b.z);
  bodies[i] = b;
}
