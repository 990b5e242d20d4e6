// Device printf: one thread printing every common conversion, and many threads in several CTAs
// printing from a divergent branch (two lines each, in program order).
#include <cstdio>

extern "C" __global__ void printf_formats(int i, unsigned u, long long ll, double d, float f, const char* text) {
  printf("int %d unsigned %u hex %x HEX %X octal %o long %lld\n", i, u, u, u, u, ll);
  printf("double %f %e %g %.10g float %.3f\n", d, d, d, d, f);
  printf("char %c string %s literal %s\n", 'Q', text, "in-kernel");
  printf("width [%6d] [%-6d] [%06d] [%+d] [%8.3f] [%-10s]\n", i, i, i, i, d, "left");
  printf("percent %% and no arguments\n");
}

extern "C" __global__ void printf_threads(int every) {
  const int t = threadIdx.x;
  if (t % every == 0) {
    printf("cta %d thread %d first\n", blockIdx.x, t);
    printf("cta %d thread %d second %d\n", blockIdx.x, t, blockIdx.x * 1000 + t);
  }
}
