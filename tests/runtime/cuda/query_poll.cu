// Polling instead of synchronizing: a long kernel, then cudaEventQuery / cudaStreamQuery in a loop
// until they say cudaSuccess, with host work between the queries and no blocking call in the
// loop. Simulated time advances only while the host waits on the GPU, so each query that finds
// the work unfinished lets the platform run for one query quantum (host.query_quantum); the loops
// must therefore end, after a number of queries that depends only on the program. Each loop is
// bounded, so a platform that never moves the work on fails here instead of hanging. Results are
// checked against the CPU; the query counts are printed (identical runs print the same).
// cudaEventElapsedTime on unfinished events answers cudaErrorNotReady the same way.
#include <cstdio>
#include <vector>

#include "check.cuh"

namespace {

constexpr int kBlocks = 168;
constexpr int kThreads = 256;
constexpr int kN = kBlocks * kThreads;
constexpr int kQueryLimit = 200000;  // 200 ms of simulated time at the default 1 us quantum

__host__ __device__ unsigned churn(unsigned x, int rounds) {
  for (int r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  return x;
}

__global__ void churn_kernel(unsigned* out, const unsigned* in, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) out[i] = churn(in[i], rounds);
}

unsigned host_work_done = 0;
void do_host_work() { host_work_done = host_work_done * 31u + 7u; }

int fail(const char* what, int queries) {
  std::printf("FAIL query_poll: %s (after %d queries)\n", what, queries);
  return 1;
}

// Polls `query` until it stops saying cudaErrorNotReady; the number of NotReady answers, or -1
// when the limit was reached or the query failed.
template <class Query>
int poll(Query query) {
  int not_ready = 0;
  for (;;) {
    const cudaError_t e = query();
    if (e == cudaSuccess) return not_ready;
    if (e != cudaErrorNotReady) {
      std::printf("query returned %s\n", cudaGetErrorName(e));
      return -1;
    }
    if (++not_ready >= kQueryLimit) return -1;
    do_host_work();
  }
}

}  // namespace

int main() {
  std::vector<unsigned> in(kN), out(kN), expected_a(kN), expected_b(kN), expected_c(kN);
  for (int i = 0; i < kN; ++i) in[i] = static_cast<unsigned>(i) * 2654435761u;
  for (int i = 0; i < kN; ++i) {
    expected_a[i] = churn(in[i], 3200);
    expected_b[i] = churn(expected_a[i], 2400);
    expected_c[i] = churn(expected_b[i], 1600);
  }
  unsigned *d_in = nullptr, *d_a = nullptr, *d_b = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_in, kN * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_a, kN * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_b, kN * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(d_in, in.data(), kN * sizeof(unsigned), cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  cudaEvent_t start, stop;
  EXPECT_CUDA(cudaEventCreate(&start), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&stop), cudaSuccess);

  // 1. cudaEventQuery on an event recorded after a long kernel.
  EXPECT_CUDA(cudaEventRecord(start, stream), cudaSuccess);
  churn_kernel<<<kBlocks, kThreads, 0, stream>>>(d_a, d_in, 3200);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(stop, stream), cudaSuccess);
  const int event_queries = poll([&] { return cudaEventQuery(stop); });
  if (event_queries < 0) return fail("cudaEventQuery never said cudaSuccess", kQueryLimit);
  if (event_queries < 2) return fail("the kernel finished before the second query: too short to test polling", event_queries);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);     // cudaErrorNotReady is not an error
  EXPECT_CUDA(cudaEventQuery(stop), cudaSuccess);  // done stays done
  EXPECT_CUDA(cudaStreamQuery(stream), cudaSuccess);
  float ms = 0;
  EXPECT_CUDA(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  if (!(ms > 0)) return fail("the kernel took no simulated time", event_queries);

  // 2. cudaStreamQuery on a stream with a kernel queued.
  churn_kernel<<<kBlocks, kThreads, 0, stream>>>(d_b, d_a, 2400);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  const int stream_queries = poll([&] { return cudaStreamQuery(stream); });
  if (stream_queries < 0) return fail("cudaStreamQuery never said cudaSuccess", kQueryLimit);
  if (stream_queries < 1) return fail("cudaStreamQuery found a fresh kernel done", stream_queries);

  // 3. The legacy default stream (cudaStreamQuery(0)), in place, d_a from d_b.
  churn_kernel<<<kBlocks, kThreads>>>(d_a, d_b, 1600);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  const int legacy_queries = poll([&] { return cudaStreamQuery(0); });
  if (legacy_queries < 0) return fail("cudaStreamQuery(0) never said cudaSuccess", kQueryLimit);

  // 4. cudaEventElapsedTime polled until both events are done (it says cudaErrorNotReady before).
  EXPECT_CUDA(cudaEventRecord(start, stream), cudaSuccess);
  churn_kernel<<<kBlocks, kThreads, 0, stream>>>(d_in, d_in, 800);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(stop, stream), cudaSuccess);
  float elapsed_ms = 0;
  const int elapsed_queries = poll([&] { return cudaEventElapsedTime(&elapsed_ms, start, stop); });
  if (elapsed_queries < 0) return fail("cudaEventElapsedTime never said cudaSuccess", kQueryLimit);
  if (elapsed_queries < 1) return fail("cudaEventElapsedTime found a fresh kernel done", elapsed_queries);
  if (!(elapsed_ms > 0 && elapsed_ms < ms)) return fail("the shorter kernel's elapsed time is off", elapsed_queries);

  int errors = 0;
  EXPECT_CUDA(cudaMemcpy(out.data(), d_b, kN * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kN; ++i) errors += out[i] != expected_b[i];
  EXPECT_CUDA(cudaMemcpy(out.data(), d_a, kN * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kN; ++i) errors += out[i] != expected_c[i];

  EXPECT_CUDA(cudaEventDestroy(start), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_CUDA(cudaFree(d_in), cudaSuccess);
  EXPECT_CUDA(cudaFree(d_a), cudaSuccess);
  EXPECT_CUDA(cudaFree(d_b), cudaSuccess);
  std::printf("queries: event %d, stream %d, legacy stream %d, elapsed time %d; kernels %.6f ms, %.6f ms\n",
              event_queries, stream_queries, legacy_queries, elapsed_queries, ms, elapsed_ms);
  std::printf("%s query_poll: %d errors\n", errors == 0 ? "PASS" : "FAIL", errors);
  return errors == 0 ? 0 : 1;
}
