// Test harness for PTX executor tests: loads nvcc-generated PTX from the build tree and
// launches kernels on a fresh functional device.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/gpu/ptx/executor.h"

namespace gpuvp::ptx::testing {

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// PTX compiled from tests/ptx/cuda/<name>.cu at build time.
inline std::string generated_ptx(const std::string& name) {
  return read_text_file(std::string(GPUVP_PTX_TEST_DIR) + "/" + name + ".ptx");
}

class Harness {
 public:
  explicit Harness(const std::string& ptx_name, ExecutorOptions options = {})
      : loaded_(Module::parse(generated_ptx(ptx_name), ptx_name + ".ptx"), memory_), options_(std::move(options)) {
    if (!options_.printf_sink) options_.printf_sink = [this](std::string_view text) { printed_ += text; };
    executor_ = std::make_unique<Executor>(memory_, options_);
  }
  Harness(const std::string& text, const std::string& file_name, ExecutorOptions options)
      : loaded_(Module::parse(text, file_name), memory_), options_(std::move(options)) {
    if (!options_.printf_sink) options_.printf_sink = [this](std::string_view out) { printed_ += out; };
    executor_ = std::make_unique<Executor>(memory_, options_);
  }

  template <typename T>
  uint64_t upload(const std::vector<T>& values) {
    const uint64_t address = memory_.allocate(std::max<size_t>(1, values.size() * sizeof(T)));
    if (!values.empty()) memory_.copy_to_device(address, values.data(), values.size() * sizeof(T));
    return address;
  }
  template <typename T>
  std::vector<T> download(uint64_t address, size_t count) {
    std::vector<T> values(count);
    memory_.copy_from_device(values.data(), address, count * sizeof(T));
    return values;
  }

  template <typename... Args>
  LaunchResult launch(const std::string& kernel_name, Dim3 grid, Dim3 block, uint32_t shared_bytes, const Args&... args) {
    const Kernel& kernel = loaded_.kernel(kernel_name);
    return executor_->launch(loaded_, kernel, LaunchConfig{grid, block, shared_bytes}, pack_params(kernel, args...));
  }

  DeviceMemory& memory() { return memory_; }
  LoadedModule& loaded() { return loaded_; }
  const std::string& printed() const { return printed_; }

 private:
  DeviceMemory memory_;
  LoadedModule loaded_;
  ExecutorOptions options_;
  std::unique_ptr<Executor> executor_;
  std::string printed_;
};

}  // namespace gpuvp::ptx::testing
