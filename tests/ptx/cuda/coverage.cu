// Kernels for instructions that nvcc emits rarely or only through intrinsics and inline PTX:
// nanosleep, mad24, ldu, fence, bar.arrive with a named barrier, the timer and geometry
// special registers, ld.global.nc and NaN tests. Each result is checked on the CPU side.
#include <cstdint>

extern "C" __global__ void sleep_then_write(int* out) {
  __nanosleep(200);
  out[threadIdx.x] = static_cast<int>(threadIdx.x) + 1;
}

extern "C" __global__ void mad24_and_mul24(const int* a, const int* b, const int* c, int* lo, int* hi, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int d = 0;
  int e = 0;
  asm("mad24.lo.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  asm("mul24.hi.s32 %0, %1, %2;" : "=r"(e) : "r"(a[i]), "r"(b[i]));
  lo[i] = d;
  hi[i] = e;
}

extern "C" __global__ void uniform_and_noncoherent_loads(const unsigned* table, unsigned* out) {
  unsigned uniform = 0;
  asm volatile("ldu.global.u32 %0, [%1];" : "=r"(uniform) : "l"(table + 3));
  asm volatile("fence.acq_rel.gpu;");
  out[threadIdx.x] = uniform + __ldg(table + (threadIdx.x & 7));
}

// Warp 0 produces into shared memory and arrives at named barrier 1; warp 1 waits there and
// consumes. 64 threads take part in the barrier.
extern "C" __global__ void producer_consumer(int* out) {
  __shared__ int buffer[32];
  const unsigned lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    buffer[lane] = static_cast<int>(lane * lane);
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[lane] = buffer[31 - lane] + 1;
  }
}

extern "C" __global__ void special_registers(unsigned long long* out) {
  extern __shared__ char dynamic[];
  unsigned dynamic_bytes = 0, nwarpid = 0, warpid = 0;
  unsigned long long t0 = 0, t1 = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
  asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(nwarpid));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  dynamic[threadIdx.x] = static_cast<char>(threadIdx.x);
  const long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (threadIdx.x == 0) {
    out[0] = dynamic_bytes;
    out[1] = nwarpid > warpid ? 1 : 0;
    out[2] = t1 >= t0 ? 1 : 0;
    out[3] = c1 > c0 ? 1 : 0;
  }
}

extern "C" __global__ void nan_tests(const float* x, const double* y, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int is_nan_f = 0, is_nan_d = 0;
  asm("{ .reg .pred p; setp.nan.f32 p, %1, %1; selp.s32 %0, 1, 0, p; }" : "=r"(is_nan_f) : "f"(x[i]));
  asm("{ .reg .pred p; setp.num.f64 p, %1, %1; selp.s32 %0, 0, 1, p; }" : "=r"(is_nan_d) : "d"(y[i]));
  out[2 * i] = is_nan_f;
  out[2 * i + 1] = is_nan_d;
}
