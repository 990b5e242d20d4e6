// The abstract GPU a workload's host code drives. The same host code runs on a real CUDA
// device (the workload's _main.cu), on the PTX functional model (tests/conformance), and later
// on gpuvp through libcudart, so it must not depend on any CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuvp::workloads {

using DevicePtr = std::uint64_t;

struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(std::uint32_t x_, std::uint32_t y_ = 1, std::uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

// Any failure of the device (allocation, copy, launch, kernel fault) is reported this way.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ArgKind { Pointer, Int32, UInt32, Int64, Float32, Float64 };

// One kernel argument: its kind and its bytes in host (little-endian) order, the form both
// cudaLaunchKernel (pointer to the value) and a PTX .param buffer want.
class KernelArg {
 public:
  template <typename T>
  KernelArg(ArgKind kind, T value) : kind_(kind), size_(sizeof(T)) {
    static_assert(sizeof(T) <= sizeof(bytes_), "kernel argument too large");
    std::memcpy(bytes_, &value, sizeof(T));
  }
  ArgKind kind() const { return kind_; }
  std::size_t size() const { return size_; }
  const void* data() const { return bytes_; }
  void* data() { return bytes_; }

 private:
  ArgKind kind_;
  std::size_t size_;
  alignas(8) unsigned char bytes_[8] = {};
};

// Builds a kernel's argument list in declaration order: args.ptr(x).ptr(y).i32(n).
class KernelArgs {
 public:
  KernelArgs& ptr(DevicePtr value) { return add(ArgKind::Pointer, value); }
  KernelArgs& i32(std::int32_t value) { return add(ArgKind::Int32, value); }
  KernelArgs& u32(std::uint32_t value) { return add(ArgKind::UInt32, value); }
  KernelArgs& i64(std::int64_t value) { return add(ArgKind::Int64, value); }
  KernelArgs& f32(float value) { return add(ArgKind::Float32, value); }
  KernelArgs& f64(double value) { return add(ArgKind::Float64, value); }

  const std::vector<KernelArg>& list() const { return args_; }
  std::vector<KernelArg>& list() { return args_; }

 private:
  template <typename T>
  KernelArgs& add(ArgKind kind, T value) {
    args_.emplace_back(kind, value);
    return *this;
  }
  std::vector<KernelArg> args_;
};

class Device {
 public:
  virtual ~Device() = default;
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual DevicePtr malloc(std::size_t bytes) = 0;
  virtual void free(DevicePtr ptr) = 0;
  virtual void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, DevicePtr src, std::size_t bytes) = 0;
  virtual void memset(DevicePtr dst, int value, std::size_t bytes) = 0;
  // Asynchronous like a CUDA launch; errors may surface here or at synchronize().
  virtual void launch(const std::string& kernel, Dim3 grid, Dim3 block,
                      std::uint32_t dynamic_shared_bytes, const KernelArgs& args) = 0;
  virtual void synchronize() = 0;

  // Device printf: everything kernels print between begin and end (end synchronizes first)
  // is returned instead of going to stdout, so a workload can check it.
  virtual void begin_output_capture() = 0;
  virtual std::string end_output_capture() = 0;
};

// Typed device allocation freed on scope exit, so early returns and exceptions do not leak.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer(Device& device, std::size_t count)
      : device_(device), count_(count), ptr_(device.malloc(bytes_for(count))) {}
  DeviceBuffer(Device& device, const std::vector<T>& contents) : DeviceBuffer(device, contents.size()) {
    upload(contents);
  }
  ~DeviceBuffer() {
    try {
      device_.free(ptr_);
    } catch (const DeviceError&) {
      // A destructor must not throw; the error that matters was already reported.
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr ptr() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& contents) {
    if (contents.size() != count_) throw DeviceError("DeviceBuffer::upload: size mismatch");
    device_.copy_to_device(ptr_, contents.data(), bytes());
  }
  std::vector<T> download() const {
    std::vector<T> contents(count_);
    device_.copy_to_host(contents.data(), ptr_, bytes());
    return contents;
  }
  void zero() { device_.memset(ptr_, 0, bytes()); }

 private:
  // Zero-sized allocations are legal in CUDA but awkward elsewhere; keep every buffer non-empty.
  static std::size_t bytes_for(std::size_t count) { return count == 0 ? sizeof(T) : count * sizeof(T); }
  Device& device_;
  std::size_t count_;
  DevicePtr ptr_;
};

}  // namespace gpuvp::workloads
