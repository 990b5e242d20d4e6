// Programs on one platform share device memory through IPC handles. The parent starts copies of
// itself (fork + exec, so each is a fresh program and its own client of the platform) and passes
// handles over pipes:
//   "open-double": opens the parent's buffer (a handle to buffer + 16), checks the parent's values,
//                  doubles them in a kernel and closes it; the parent then sees the doubled values
//                  in its own allocation (one copy of the data);
//   "export-exit": exports a buffer of its own and exits; opening that handle afterwards fails
//                  with a clear error (its memory went with it);
//   "open-fail":   opens a handle to memory the parent has freed: fails the same way.
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

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role == "open-double") return open_double();
  if (role == "export-exit") return export_exit();
  if (role == "open-fail") return open_fail();

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
  std::printf("PASS ipc\n");
  return 0;
}
