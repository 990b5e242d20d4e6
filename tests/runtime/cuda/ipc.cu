// Programs on one platform share device memory through IPC handles. The parent starts copies of
// itself (fork + exec, so each is a fresh program and its own client of the platform) and passes
// handles over pipes:
//   "open-double": opens the parent's buffer (a handle to buffer + 16), checks the parent's values,
//                  doubles them in a kernel and closes it; the parent then sees the doubled values
//                  in its own allocation (one copy of the data);
//   "export-exit": exports a buffer of its own and exits; opening that handle afterwards fails
//                  with a clear error (its memory went with it);
//   "open-fail":   opens a handle to memory the parent has freed: fails the same way;
//   "event-chain": opens the parent's buffer and interprocess event; its stream waits on the
//                  parent's record of that event before a slow kernel reads what the parent's
//                  kernel wrote, then records the event itself; the parent's stream waits on that
//                  record, so the parent's next kernel sees the child's result (no host
//                  synchronisation between the kernels: only the events order them).
// Prints "PASS ipc".
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.cuh"

constexpr int kCount = 4096;

__global__ void twice(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2;
}

__global__ void fill(int* data, int n, int base) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = base + i;
}

void send(int fd, const void* bytes, size_t n) { CHECK(write(fd, bytes, n) == static_cast<ssize_t>(n)); }
void receive(int fd, void* bytes, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, static_cast<char*>(bytes) + got, n - got);
    CHECK(r > 0);
    got += static_cast<size_t>(r);
  }
}

// Starts this program with `role`; its fds 3 (in) and 4 (out) are pipes to us, its stdout ours.
constexpr int kIn = 3, kOut = 4;
struct Child {
  pid_t pid;
  int in;   // we write, it reads (its stdin)
  int out;  // it writes (its stdout), we read
};
Child spawn(const char* role) {
  int down[2], up[2];
  CHECK(pipe(down) == 0 && pipe(up) == 0);
  std::fflush(stdout);
  const pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(down[0], kIn);
    dup2(up[1], kOut);
    execl("/proc/self/exe", "ipc", role, static_cast<char*>(nullptr));
    std::_Exit(3);
  }
  close(down[0]);
  close(up[1]);
  return Child{pid, down[1], up[0]};
}
int finish(const Child& child) {
  close(child.in);
  close(child.out);
  int status = 0;
  CHECK(waitpid(child.pid, &status, 0) == child.pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

int open_double() {
  cudaIpcMemHandle_t handle;
  receive(kIn, &handle, sizeof handle);
  int* data = nullptr;
  EXPECT_CUDA(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&data), handle, cudaIpcMemLazyEnablePeerAccess),
              cudaSuccess);
  std::vector<int> seen(kCount - 16);
  EXPECT_CUDA(cudaMemcpy(seen.data(), data, seen.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kCount - 16; ++i) CHECK(seen[i] == 1000 + 16 + i);  // the handle named buffer + 16
  twice<<<(kCount - 16 + 127) / 128, 128>>>(data, kCount - 16);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_CUDA(cudaIpcCloseMemHandle(data), cudaSuccess);
  EXPECT_CUDA(cudaIpcCloseMemHandle(data), cudaErrorInvalidResourceHandle);
  const char done = 1;
  send(kOut, &done, 1);
  return 0;
}

int export_exit() {
  int* mine = nullptr;
  EXPECT_CUDA(cudaMalloc(&mine, 256 * sizeof(int)), cudaSuccess);
  cudaIpcMemHandle_t handle;
  EXPECT_CUDA(cudaIpcGetMemHandle(&handle, mine), cudaSuccess);
  send(kOut, &handle, sizeof handle);
  return 0;  // exits with the memory still allocated: the platform frees it with the program
}

int open_fail() {
  cudaIpcMemHandle_t handle;
  receive(kIn, &handle, sizeof handle);
  void* data = nullptr;
  EXPECT_CUDA(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidResourceHandle);
  cudaIpcMemHandle_t junk;
  std::memset(&junk, 0x5a, sizeof junk);
  EXPECT_CUDA(cudaIpcOpenMemHandle(&data, junk, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidResourceHandle);
  const char done = 1;
  send(kOut, &done, 1);
  return 0;
}

// Slow on purpose (a long dependent chain per thread), so a missing wait shows as wrong values.
__global__ void add_slowly(int* data, int n, int amount) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = data[i];
  for (int k = 0; k < amount; ++k) v = v + 1;
  data[i] = v;
}

struct EventChainHandles {
  cudaIpcMemHandle_t memory;
  cudaIpcEventHandle_t event;
};

int event_chain() {
  EventChainHandles handles;
  receive(kIn, &handles, sizeof handles);
  int* data = nullptr;
  EXPECT_CUDA(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&data), handles.memory, cudaIpcMemLazyEnablePeerAccess),
              cudaSuccess);
  cudaEvent_t event;
  EXPECT_CUDA(cudaIpcOpenEventHandle(&event, handles.event), cudaSuccess);
  float ms = 0;
  EXPECT_CUDA(cudaEventElapsedTime(&ms, event, event), cudaErrorInvalidResourceHandle);  // no timing
  const char ready = 1;
  send(kOut, &ready, 1);           // the parent now records the event behind its kernel...
  char recorded = 0;
  receive(kIn, &recorded, 1);      // ...and tells us it has
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_CUDA(cudaStreamWaitEvent(stream, event, 0), cudaSuccess);
  add_slowly<<<(kCount + 127) / 128, 128, 0, stream>>>(data, kCount, 500);  // reads the parent's values
  EXPECT_CUDA(cudaEventRecord(event, stream), cudaSuccess);
  send(kOut, &ready, 1);           // our record is queued: the parent may wait on it
  EXPECT_CUDA(cudaEventSynchronize(event), cudaSuccess);
  EXPECT_CUDA(cudaEventQuery(event), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(event), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_CUDA(cudaIpcCloseMemHandle(data), cudaSuccess);
  receive(kIn, &recorded, 1);      // stay until the parent has used our record
  return 0;
}

// The parent's half of "event-chain": returns when its check has passed.
void check_event_chain() {
  int* buffer = nullptr;
  EXPECT_CUDA(cudaMalloc(&buffer, kCount * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(buffer, 0, kCount * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  cudaEvent_t event;
  EXPECT_CUDA(cudaEventCreateWithFlags(&event, cudaEventInterprocess), cudaErrorInvalidValue);  // needs DisableTiming
  cudaEvent_t local;
  EXPECT_CUDA(cudaEventCreate(&local), cudaSuccess);
  cudaIpcEventHandle_t refused;
  EXPECT_CUDA(cudaIpcGetEventHandle(&refused, local), cudaErrorInvalidResourceHandle);  // not interprocess
  EXPECT_CUDA(cudaEventDestroy(local), cudaSuccess);
  EXPECT_CUDA(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  EventChainHandles handles;
  EXPECT_CUDA(cudaIpcGetMemHandle(&handles.memory, buffer), cudaSuccess);
  EXPECT_CUDA(cudaIpcGetEventHandle(&handles.event, event), cudaSuccess);
  cudaEvent_t own;
  EXPECT_CUDA(cudaIpcOpenEventHandle(&own, handles.event), cudaErrorInvalidResourceHandle);  // our own handle
  cudaIpcEventHandle_t junk;
  std::memset(&junk, 0x5a, sizeof junk);
  EXPECT_CUDA(cudaIpcOpenEventHandle(&own, junk), cudaErrorInvalidResourceHandle);

  Child child = spawn("event-chain");
  send(child.in, &handles, sizeof handles);
  char ready = 0;
  receive(child.out, &ready, 1);
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  add_slowly<<<(kCount + 127) / 128, 128, 0, stream>>>(buffer, kCount, 700);  // 0 -> 700
  EXPECT_CUDA(cudaEventRecord(event, stream), cudaSuccess);
  send(child.in, &ready, 1);
  receive(child.out, &ready, 1);  // the child's wait, kernel (+500) and record are queued
  EXPECT_CUDA(cudaStreamWaitEvent(stream, event, 0), cudaSuccess);
  twice<<<(kCount + 127) / 128, 128, 0, stream>>>(buffer, kCount);  // (700 + 500) * 2
  std::vector<int> seen(kCount);
  EXPECT_CUDA(cudaMemcpyAsync(seen.data(), buffer, kCount * sizeof(int), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  for (int i = 0; i < kCount; ++i) CHECK(seen[i] == 2400);
  send(child.in, &ready, 1);
  CHECK(finish(child) == 0);
  // The child has gone: a wait on a record it could still make ends, the event stays usable here.
  EXPECT_CUDA(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventSynchronize(event), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(event), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_CUDA(cudaFree(buffer), cudaSuccess);
}

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role == "open-double") return open_double();
  if (role == "export-exit") return export_exit();
  if (role == "open-fail") return open_fail();
  if (role == "event-chain") return event_chain();

  int* buffer = nullptr;
  EXPECT_CUDA(cudaMalloc(&buffer, kCount * sizeof(int)), cudaSuccess);
  fill<<<(kCount + 127) / 128, 128>>>(buffer, kCount, 1000);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  cudaIpcMemHandle_t handle;
  EXPECT_CUDA(cudaIpcGetMemHandle(&handle, buffer + 16), cudaSuccess);

  // Another program opens, checks and doubles it; we see its writes.
  Child doubler = spawn("open-double");
  send(doubler.in, &handle, sizeof handle);
  char done = 0;
  receive(doubler.out, &done, 1);
  CHECK(finish(doubler) == 0);
  std::vector<int> after(kCount);
  EXPECT_CUDA(cudaMemcpy(after.data(), buffer, kCount * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kCount; ++i) CHECK(after[i] == (i < 16 ? 1000 + i : 2 * (1000 + i)));
  // A program cannot open its own handle.
  void* self = nullptr;
  EXPECT_CUDA(cudaIpcOpenMemHandle(&self, handle, 0), cudaErrorInvalidResourceHandle);

  // A handle of a program that has exited names nothing.
  Child exporter = spawn("export-exit");
  cudaIpcMemHandle_t orphan;
  receive(exporter.out, &orphan, sizeof orphan);
  CHECK(finish(exporter) == 0);
  EXPECT_CUDA(cudaIpcOpenMemHandle(&self, orphan, 0), cudaErrorInvalidResourceHandle);

  // Nor does a handle to memory its program has freed.
  EXPECT_CUDA(cudaFree(buffer), cudaSuccess);
  Child late = spawn("open-fail");
  send(late.in, &handle, sizeof handle);
  receive(late.out, &done, 1);
  CHECK(finish(late) == 0);

  // Interprocess events order two programs' streams.
  check_event_chain();
  std::printf("PASS ipc\n");
  return 0;
}
