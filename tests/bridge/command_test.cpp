// Real commands through shared memory: memory, copies, modules, launches of nvcc-built PTX,
// printf, semaphores, time, and every kind of bad input. Each bad command must get its error
// completion and leave the platform serving.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <regex>
#include <thread>

#include "tests/bridge/platform_fixture.h"

extern char** environ;

namespace gpuvp::test {
namespace {

using device::Opcode;
using device::Status;

constexpr uint32_t kStatusMissing = 0xffffffffu;

std::string status_text(const device::CompletionRecord& r) {
  return "status " + std::to_string(r.status) + ": " + r.message;
}

#define EXPECT_STATUS(record, expected) \
  EXPECT_EQ((record).status, static_cast<uint32_t>(expected)) << status_text(record)
#define ASSERT_OK(record) ASSERT_EQ((record).status, static_cast<uint32_t>(Status::Ok)) << status_text(record)

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    platform = std::make_unique<RunningPlatform>();
    client = connect_open(platform->socket_path());
    ASSERT_NE(client, nullptr);
  }
  void TearDown() override {
    client.reset();
    platform.reset();
  }

  device::CompletionRecord run(Opcode opcode, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0,
                               uint32_t queue = 0) {
    return client->execute(queue, RawClient::command(opcode, a, b, c, d));
  }
  uint64_t map(uint64_t bytes) {
    const auto r = run(Opcode::MemMap, bytes, 0, 0);
    EXPECT_STATUS(r, Status::Ok);
    return r.value0;
  }
  uint64_t load_module(const std::string& text, device::CompletionRecord* record = nullptr) {
    const uint64_t image = client->allocate(text.size());
    std::memcpy(client->at(image), text.data(), text.size());
    const auto r = run(Opcode::LoadModule, image, text.size());
    if (record != nullptr) *record = r;
    return r.value0;
  }
  uint64_t kernels() {
    const std::string ptx = read_file(GPUVP_BRIDGE_PTX);
    EXPECT_FALSE(ptx.empty());
    device::CompletionRecord r{};
    const uint64_t module = load_module(ptx, &r);
    EXPECT_STATUS(r, Status::Ok);
    return module;
  }
  // GetFunction with the parameter layout; returns the handle and fills `layout`.
  uint64_t function(uint64_t module, const std::string& name, std::vector<device::ParamLayout>* layout = nullptr) {
    const uint64_t text = client->put_text(name);
    const uint64_t buffer = client->allocate(device::kParamLayoutBytes, 8);
    const auto r = run(Opcode::GetFunction, module, text, name.size(), buffer);
    EXPECT_STATUS(r, Status::Ok);
    if (layout != nullptr) {
      const auto count = static_cast<uint32_t>(r.value1 >> 32);
      const auto* entries = static_cast<const device::ParamLayout*>(client->at(buffer));
      layout->assign(entries, entries + count);
    }
    return r.value0;
  }
  struct Launch {
    uint64_t function = 0;
    uint32_t grid[3] = {1, 1, 1};
    uint32_t block[3] = {1, 1, 1};
    uint32_t shared = 0;
    uint32_t max_dynamic_shared = 0;  // cudaFuncAttributeMaxDynamicSharedMemorySize (0: not set)
    uint32_t carveout = 0;            // cudaFuncAttributePreferredSharedMemoryCarveout + 1 (0: none)
    std::vector<uint8_t> args;
    uint64_t printf_address = 0;
    uint64_t printf_bytes = 0;
    uint32_t queue = 0;
  };
  device::Command launch_command(const Launch& l) {
    device::Command command{};
    command.opcode = static_cast<uint32_t>(Opcode::Launch);
    device::LaunchArgs& a = command.body.launch;
    a.function = l.function;
    std::copy(l.grid, l.grid + 3, a.grid);
    std::copy(l.block, l.block + 3, a.block);
    a.dynamic_shared_bytes = l.shared;
    a.max_dynamic_shared_bytes = l.max_dynamic_shared;
    a.shared_carveout = l.carveout;
    if (!l.args.empty()) {
      a.args_address = client->allocate(l.args.size(), 16);
      std::memcpy(client->at(a.args_address), l.args.data(), l.args.size());
    }
    a.args_bytes = l.args.size();
    a.printf_address = l.printf_address;
    a.printf_bytes = l.printf_bytes;
    return command;
  }
  device::CompletionRecord launch(const Launch& l) { return client->execute(l.queue, launch_command(l)); }

  template <class... T>
  static std::vector<uint8_t> pack(const std::vector<device::ParamLayout>& layout, const T&... values) {
    std::vector<uint8_t> buffer;
    size_t i = 0;
    auto put = [&](const auto& value) {
      const device::ParamLayout& p = layout.at(i++);
      EXPECT_EQ(p.size, sizeof value);
      if (buffer.size() < p.offset + p.size) buffer.resize(p.offset + p.size);
      std::memcpy(buffer.data() + p.offset, &value, sizeof value);
    };
    (put(values), ...);
    return buffer;
  }
  // Proves the platform still serves this client.
  void still_serving() {
    const auto r = run(Opcode::Nop);
    EXPECT_STATUS(r, Status::Ok);
  }

  std::unique_ptr<RunningPlatform> platform;
  std::unique_ptr<RawClient> client;
};

TEST_F(Commands, MemcpyRoundTripThroughTheDmaEngine) {
  const uint64_t bytes = (uint64_t{1} << 20) + 12345;  // more than one DMA transfer
  const uint64_t device_buffer = map(bytes);
  EXPECT_GE(device_buffer, 1u);
  const uint64_t source = client->allocate(bytes);
  const uint64_t destination = client->allocate(bytes);
  auto* in = static_cast<uint8_t*>(client->at(source));
  for (uint64_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + (i >> 9));
  std::memset(client->at(destination), 0, bytes);
  ASSERT_OK(run(Opcode::Memcpy, device_buffer, source, bytes, uint64_t(device::CopyDirection::HostToDevice)));
  const auto back = run(Opcode::Memcpy, destination, device_buffer, bytes, uint64_t(device::CopyDirection::DeviceToHost));
  ASSERT_OK(back);
  EXPECT_EQ(std::memcmp(client->at(source), client->at(destination), bytes), 0);
  EXPECT_GT(back.simulated_ps, 0u);  // the copies crossed the PCIe link model
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.dma", "host_to_device_bytes"), bytes);
  EXPECT_EQ(platform->counter("gpu.dma", "device_to_host_bytes"), bytes);
  EXPECT_EQ(platform->counter("bridge", "commands_memcpy"), 2u);
  EXPECT_GE(platform->counter("pcie", "upstream_bytes"), bytes);
}

TEST_F(Commands, MemsetAndDeviceToDeviceCopy) {
  const uint64_t a = map(4096);
  const uint64_t b = map(4096);
  ASSERT_OK(run(Opcode::Memset, a, 4096, 0xab));
  ASSERT_OK(run(Opcode::Memset, a + 100, 10, 0x01));
  ASSERT_OK(run(Opcode::Memcpy, b, a, 4096, uint64_t(device::CopyDirection::DeviceToDevice)));
  const uint64_t host = client->allocate(4096);
  ASSERT_OK(run(Opcode::Memcpy, host, b, 4096, uint64_t(device::CopyDirection::DeviceToHost)));
  const auto* bytes = static_cast<const uint8_t*>(client->at(host));
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(bytes[i], (i >= 100 && i < 110) ? 0x01 : 0xab) << i;
}

// Unified memory's commands: MemAdvise (cudaMemAdvise) and HostAccess (the runtime's host
// faults) on a Managed mapping, and their validation.
TEST_F(Commands, MemAdviseAndHostAccessOnManagedMemory) {
  const auto mapped = run(Opcode::MemMap, 8192, uint64_t(device::MemoryKind::Managed), 4096);
  ASSERT_OK(mapped);
  const uint64_t managed = mapped.value0;
  const uint64_t host = client->allocate(8192);
  std::memset(client->at(host), 0x5a, 8192);
  ASSERT_OK(run(Opcode::Memcpy, managed, host, 8192, uint64_t(device::CopyDirection::HostToDevice)));
  const uint64_t back = client->allocate(8192);
  std::memset(client->at(back), 0, 8192);
  ASSERT_OK(run(Opcode::MemAdvise, managed, 8192, uint64_t(device::MemAdvice::SetReadMostly), 0));
  ASSERT_OK(run(Opcode::MemAdvise, managed, 4096, uint64_t(device::MemAdvice::SetPreferredLocation),
                uint64_t(device::AdviceLocation::Host)));
  ASSERT_OK(run(Opcode::HostAccess, managed, 8192, uint64_t(device::HostAccessKind::Read), back));
  EXPECT_EQ(std::memcmp(client->at(back), client->at(host), 8192), 0);  // the values came back
  ASSERT_OK(run(Opcode::HostAccess, managed + 100, 10, uint64_t(device::HostAccessKind::Write), 0));
  // Validation: advice, location, access kind, empty and unmapped ranges, host buffer.
  EXPECT_STATUS(run(Opcode::MemAdvise, managed, 4096, 0, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemAdvise, managed, 4096, 7, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemAdvise, managed, 4096, 3, 2), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemAdvise, managed, 0, 1, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemAdvise, managed + 4096, 8192, 1, 0), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::MemAdvise, 0x1000, 4096, 1, 0), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::HostAccess, managed, 4096, 2, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::HostAccess, managed, 0, 0, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::HostAccess, managed, 8193, 0, 0), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::HostAccess, managed, 4096, 0, 64), Status::InvalidAddress);  // host buffer outside the window
  EXPECT_STATUS(run(Opcode::Memcpy, managed, 64, 4096, uint64_t(device::CopyDirection::HostToDevice)),
                Status::InvalidAddress);  // so is this copy's source
  still_serving();
  platform->stop();
  EXPECT_EQ(platform->counter("bridge", "commands_mem_advise"), 8u);
  EXPECT_EQ(platform->counter("bridge", "commands_host_access"), 6u);
  EXPECT_EQ(platform->counter("uvm.gmmu", "advice_calls"), 2u);
  // The host-to-device copy and the two valid HostAccess commands; those refused for their host
  // buffer touched no page (the window is checked before anything moves).
  EXPECT_EQ(platform->counter("uvm.gmmu", "host_accesses"), 3u);
}

TEST_F(Commands, BadInputGetsErrorCompletionsAndThePlatformKeepsServing) {
  const uint64_t mapped = map(4096);
  const uint64_t host = client->allocate(4096);
  const auto h2d = uint64_t(device::CopyDirection::HostToDevice);

  EXPECT_STATUS(run(static_cast<Opcode>(99)), Status::InvalidCommand);
  device::Command flagged = RawClient::command(Opcode::Nop);
  flagged.flags = 1;
  EXPECT_STATUS(client->execute(0, flagged), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::UnloadModule, 0x1234), Status::InvalidHandle);
  EXPECT_STATUS(run(Opcode::GetFunction, 0x1234, client->put_text("f"), 1), Status::InvalidHandle);
  Launch bad_function;
  bad_function.function = 0x777;
  EXPECT_STATUS(launch(bad_function), Status::InvalidHandle);
  // Host addresses outside this channel's window slice: the header, another channel's slice,
  // past the region, and a range that starts inside and runs out.
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, 0, 64, h2d), Status::InvalidAddress);
  const uint64_t other_slice = client->window_base() + client->window_bytes();
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, other_slice, 64, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, client->region_bytes() + 4096, 64, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, other_slice - 32, 64, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, ~uint64_t{0} - 8, 64, h2d), Status::InvalidAddress);
  // Device ranges not mapped by this channel.
  EXPECT_STATUS(run(Opcode::Memcpy, 0x1000, host, 64, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memcpy, mapped + 4000, host, 200, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memset, mapped + 4096, 1, 0), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, host, 64, 7), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::Memset, mapped, 16, 300), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemMap, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemMap, 4096, 9), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemMap, 4096, 0, 3), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::MemMap, uint64_t{1} << 40), Status::OutOfMemory);
  EXPECT_STATUS(run(Opcode::MemUnmap, mapped + 8), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::Hello, 1), Status::InvalidCommand);  // already open
  EXPECT_STATUS(run(Opcode::SemaphoreWait, 12), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::SemaphoreSignal, host + 4, 1), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::LoadModule, host, 0), Status::InvalidCommand);
  EXPECT_STATUS(run(Opcode::LoadModule, 64, 100), Status::InvalidAddress);
  // Unmapping makes the range invalid for later commands.
  ASSERT_OK(run(Opcode::MemUnmap, mapped));
  EXPECT_STATUS(run(Opcode::Memcpy, mapped, host, 64, h2d), Status::InvalidAddress);
  EXPECT_STATUS(run(Opcode::MemUnmap, mapped), Status::InvalidAddress);
  still_serving();
  platform->stop();
  EXPECT_GE(platform->counter("bridge", "errors"), 25u);
  EXPECT_EQ(platform->counter("bridge", "commands_unknown"), 1u);
}

TEST_F(Commands, VectorAddOnNvccPtxMatchesTheCpu) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  const uint64_t vec_add = function(module, "vec_add", &layout);
  ASSERT_EQ(layout.size(), 4u);
  EXPECT_EQ(layout[3].size, 4u);

  const int n = 1000;
  const uint64_t bytes = n * sizeof(float);
  const uint64_t a = map(bytes), b = map(bytes), c = map(bytes);
  const uint64_t host_a = client->allocate(bytes), host_b = client->allocate(bytes), host_c = client->allocate(bytes);
  auto* ha = static_cast<float*>(client->at(host_a));
  auto* hb = static_cast<float*>(client->at(host_b));
  for (int i = 0; i < n; ++i) {
    ha[i] = 0.5f * static_cast<float>(i);
    hb[i] = 3.0f - static_cast<float>(i) / 7.0f;
  }
  const auto h2d = uint64_t(device::CopyDirection::HostToDevice);
  ASSERT_OK(run(Opcode::Memcpy, a, host_a, bytes, h2d));
  ASSERT_OK(run(Opcode::Memcpy, b, host_b, bytes, h2d));
  Launch l;
  l.function = vec_add;
  l.grid[0] = (n + 127) / 128;
  l.block[0] = 128;
  l.args = pack(layout, a, b, c, n);
  const auto done = launch(l);
  ASSERT_OK(done);
  ASSERT_OK(run(Opcode::Memcpy, host_c, c, bytes, uint64_t(device::CopyDirection::DeviceToHost)));
  const auto* hc = static_cast<const float*>(client->at(host_c));
  for (int i = 0; i < n; ++i) ASSERT_EQ(hc[i], ha[i] * 2.0f + hb[i]) << i;
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.command_processor", "kernels_launched"), 1u);
  EXPECT_EQ(platform->counter("bridge", "commands_launch"), 1u);
  EXPECT_GT(platform->counter("gpu.command_processor", "warp_instructions"), 0u);
  EXPECT_GT(platform->counter("gpu.command_processor", "thread_instructions"),
            platform->counter("gpu.command_processor", "warp_instructions"));
}

// ---- Kernel resources told with GetFunction (what a driver reads from the SASS).

device::KernelResources sass(uint32_t registers, uint32_t shared = 0, uint32_t local = 0) {
  device::KernelResources r{};
  r.source = static_cast<uint32_t>(device::ResourceSource::CubinNearest);
  r.sass_arch = 75;
  r.registers_per_thread = registers;
  r.static_shared_bytes = shared;
  r.local_bytes_per_thread = local;
  return r;
}

class Resources : public Commands {
 protected:
  device::CompletionRecord get_function(uint64_t module, const std::string& name, const device::KernelResources& told,
                                        std::vector<device::ParamLayout>* layout = nullptr) {
    device::Command command = RawClient::command(Opcode::GetFunction, module, client->put_text(name), name.size(),
                                                 client->allocate(device::kParamLayoutBytes, 8));
    command.body.get_function.resources = told;
    const auto r = client->execute(0, command);
    if (layout != nullptr && r.status == static_cast<uint32_t>(Status::Ok)) {
      const auto* entries = static_cast<const device::ParamLayout*>(client->at(command.body.get_function.layout_address));
      layout->assign(entries, entries + (r.value1 >> 32));
    }
    return r;
  }
  // vec_add over n floats in CTAs of `threads`.
  device::CompletionRecord vec_add(uint64_t function, const std::vector<device::ParamLayout>& layout, uint32_t threads,
                                   int n = 84 * 2048) {
    const uint64_t bytes = uint64_t(n) * sizeof(float);
    if (buffer_ == 0) buffer_ = map(3 * bytes);
    Launch l;
    l.function = function;
    l.grid[0] = (n + threads - 1) / threads;
    l.block[0] = threads;
    l.args = pack(layout, buffer_, buffer_ + bytes, buffer_ + 2 * bytes, n);
    return launch(l);
  }
  const stats::Histogram* histogram(const std::string& name) {
    const stats::Group* g = platform->stats().find_group("gpu.cta_scheduler");
    return g != nullptr ? g->find_histogram(name) : nullptr;
  }
  uint64_t buffer_ = 0;
};

TEST_F(Resources, OccupancyFollowsTheToldRegisters) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  const auto few = get_function(module, "vec_add", sass(32), &layout);
  ASSERT_OK(few);
  const auto many = get_function(module, "vec_add", sass(128));
  ASSERT_OK(many);
  // 256 threads: 32 registers leave the thread limit (8 CTAs) binding, 128 registers fit 2 CTAs
  // (8 warps x 4096 registers of 65536).
  ASSERT_OK(vec_add(few.value0, layout, 256));
  ASSERT_OK(vec_add(many.value0, layout, 256));
  platform->stop();
  const stats::Histogram* ctas = histogram("ctas_per_sm");
  const stats::Histogram* registers = histogram("registers_per_thread");
  ASSERT_NE(ctas, nullptr);
  ASSERT_NE(registers, nullptr);
  EXPECT_EQ(ctas->count(), 2u);
  EXPECT_EQ(ctas->min(), 2u);
  EXPECT_EQ(ctas->max(), 8u);
  EXPECT_EQ(registers->min(), 32u);
  EXPECT_EQ(registers->max(), 128u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "occupancy_limited_by_threads"), 1u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "occupancy_limited_by_registers"), 1u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "resources_cubin_nearest"), 2u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "resources_estimated"), 0u);
  EXPECT_EQ(platform->counter("gpu.command_processor", "timing_fallbacks"), 0u);
}

TEST_F(Resources, ToldSharedAndLocalMemoryAreCarried) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  // 40 KiB of static shared memory: two 256-thread CTAs per SM of 96 KiB.
  const auto f = get_function(module, "vec_add", sass(16, 40 * 1024, 96), &layout);
  ASSERT_OK(f);
  ASSERT_OK(vec_add(f.value0, layout, 256));
  platform->stop();
  EXPECT_EQ(histogram("ctas_per_sm")->max(), 2u);
  EXPECT_EQ(histogram("shared_bytes_per_cta")->max(), 40u * 1024);
  EXPECT_EQ(histogram("local_bytes_per_thread")->max(), 96u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "occupancy_limited_by_shared_memory"), 1u);
}

TEST_F(Resources, BadToldResourcesAreRefused) {
  const uint64_t module = kernels();
  auto refused = [&](device::KernelResources told, const std::string& says) {
    const auto r = get_function(module, "vec_add", told);
    EXPECT_STATUS(r, Status::InvalidCommand);
    EXPECT_NE(std::string(r.message).find(says), std::string::npos) << r.message;
    EXPECT_NE(std::string(r.message).find("vec_add"), std::string::npos) << r.message;
  };
  refused(sass(0), "registers per thread");
  refused(sass(256), "registers per thread");
  refused(sass(32, 200 * 1024), "static shared memory");
  refused(sass(32, 0, 1u << 20), "local memory");
  device::KernelResources unknown = sass(32);
  unknown.source = 7;
  refused(unknown, "unknown resource source");
  device::KernelResources sourceless = sass(32);
  sourceless.source = 0;
  refused(sourceless, "without a source");
  device::KernelResources no_arch = sass(32);
  no_arch.sass_arch = 0;
  refused(no_arch, "SASS architecture");
  device::KernelResources threads = sass(32);
  threads.max_threads_per_block = 4096;
  refused(threads, "thread limit");

  // 255 registers x 1024 threads cannot be resident: refused as hardware refuses it.
  std::vector<device::ParamLayout> layout;
  const auto heavy = get_function(module, "vec_add", sass(255), &layout);
  ASSERT_OK(heavy);
  const auto r = vec_add(heavy.value0, layout, 1024, 4096);
  EXPECT_STATUS(r, Status::LaunchOutOfResources);
  EXPECT_NE(std::string(r.message).find("too many resources"), std::string::npos) << r.message;
  // A told thread limit binds the launch.
  device::KernelResources limited = sass(32);
  limited.max_threads_per_block = 128;
  const auto small = get_function(module, "vec_add", limited);
  ASSERT_OK(small);
  EXPECT_STATUS(vec_add(small.value0, layout, 256, 4096), Status::InvalidLaunch);
  ASSERT_OK(vec_add(small.value0, layout, 128, 4096));
  still_serving();
}

// A kernel that declares many PTX registers: the estimate (x1.5) does not fit 1024 threads.
constexpr const char* kRegisterHeavyPtx = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .entry heavy(.param .u64 out)
{
  .reg .b32 %r<120>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

TEST_F(Resources, EstimatedRegistersAndTheirFallbackAreLoud) {
  device::CompletionRecord loaded{};
  const uint64_t module = load_module(kRegisterHeavyPtx, &loaded);
  ASSERT_OK(loaded);
  const uint64_t out = map(4096);
  std::vector<device::ParamLayout> layout;
  const auto estimated = get_function(module, "heavy", device::KernelResources{}, &layout);
  ASSERT_OK(estimated);
  Launch l;
  l.function = estimated.value0;
  l.block[0] = 1024;
  l.args = pack(layout, out);
  ::testing::internal::CaptureStderr();
  ASSERT_OK(launch(l));
  ASSERT_OK(launch(l));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  // One line per kernel and reason, not per launch.
  const std::regex estimate_line("gpuvp: warning: kernel heavy: registers per thread estimated from the PTX[^\n]*\n");
  const std::regex fallback_line("gpuvp: warning: kernel heavy runs on the functional model[^\n]*registers[^\n]*\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(warnings.begin(), warnings.end(), estimate_line), std::sregex_iterator()), 1)
      << warnings;
  EXPECT_EQ(std::distance(std::sregex_iterator(warnings.begin(), warnings.end(), fallback_line), std::sregex_iterator()), 1)
      << warnings;

  // Told ptxas's figure, the same kernel fits and runs on the timing model, silently.
  const auto told = get_function(module, "heavy", sass(16));
  ASSERT_OK(told);
  l.function = told.value0;
  ::testing::internal::CaptureStderr();
  ASSERT_OK(launch(l));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.command_processor", "timing_fallbacks"), 2u);
  EXPECT_EQ(platform->counter("gpu.cta_scheduler", "resources_cubin_nearest"), 1u);
  EXPECT_EQ(platform->counter("gpu.command_processor", "kernels_launched"), 3u);
}

// A client that loads modules without end is refused with OutOfMemory at the context's bound
// (4096 loaded at once), not left to exhaust the platform; unloading one makes room again.
TEST_F(Commands, ModulesPerContextAreBounded) {
  const std::string text = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
  const uint64_t image = client->allocate(text.size());
  std::memcpy(client->at(image), text.data(), text.size());
  std::vector<uint64_t> modules;
  for (int i = 0; i < 4096; ++i) {
    const auto r = run(Opcode::LoadModule, image, text.size());
    ASSERT_OK(r) << i;
    modules.push_back(r.value0);
  }
  const auto refused = run(Opcode::LoadModule, image, text.size());
  EXPECT_STATUS(refused, Status::OutOfMemory);
  EXPECT_NE(std::string(refused.message).find("at most 4096 modules"), std::string::npos) << refused.message;
  ASSERT_OK(run(Opcode::UnloadModule, modules.back()));
  modules.pop_back();
  ASSERT_OK(run(Opcode::LoadModule, image, text.size()));
  // The platform still serves kernels on this channel.
  const uint64_t out = map(64);
  ASSERT_OK(run(Opcode::Memset, out, 64, 0x5a));
}

TEST_F(Commands, ModuleVariablesThroughGetSymbol) {
  const uint64_t module = kernels();
  const uint64_t name = client->put_text("counter_table");
  const auto symbol = run(Opcode::GetSymbol, module, name, std::strlen("counter_table"));
  ASSERT_OK(symbol);
  EXPECT_EQ(symbol.value1, 16u);
  // cudaMemcpyToSymbol: overwrite the table, then run a kernel that reads it.
  const uint64_t table = client->allocate(16);
  const int values[4] = {100, 200, 300, 400};
  std::memcpy(client->at(table), values, sizeof values);
  ASSERT_OK(run(Opcode::Memcpy, symbol.value0, table, 16, uint64_t(device::CopyDirection::HostToDevice)));
  std::vector<device::ParamLayout> layout;
  const uint64_t add_table = function(module, "add_table", &layout);
  const uint64_t out = map(8 * sizeof(int));
  Launch l;
  l.function = add_table;
  l.block[0] = 8;
  l.args = pack(layout, out);
  ASSERT_OK(launch(l));
  const uint64_t host = client->allocate(8 * sizeof(int));
  ASSERT_OK(run(Opcode::Memcpy, host, out, 8 * sizeof(int), uint64_t(device::CopyDirection::DeviceToHost)));
  const auto* got = static_cast<const int*>(client->at(host));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], values[i % 4] + i) << i;
  EXPECT_STATUS(run(Opcode::GetSymbol, module, client->put_text("nope"), 4), Status::InvalidHandle);
  // Unloading invalidates the module's functions.
  ASSERT_OK(run(Opcode::UnloadModule, module));
  EXPECT_STATUS(launch(l), Status::InvalidHandle);
}

TEST_F(Commands, PrintfGoesToTheLaunchBuffer) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  const uint64_t say_hello = function(module, "say_hello", &layout);
  Launch l;
  l.function = say_hello;
  l.grid[0] = 2;
  l.block[0] = 2;
  l.args = pack(layout, 7);
  l.printf_bytes = 4096;
  l.printf_address = client->allocate(l.printf_bytes);
  const auto done = launch(l);
  ASSERT_OK(done);
  const std::string expected =
      "hello from block 0 thread 0 tag 7\nhello from block 0 thread 1 tag 7\n"
      "hello from block 1 thread 0 tag 7\nhello from block 1 thread 1 tag 7\n";
  EXPECT_EQ(done.value0, expected.size());
  EXPECT_EQ(done.value1, 0u);
  EXPECT_EQ(std::string(static_cast<const char*>(client->at(l.printf_address)), done.value0), expected);

  // A small buffer keeps whole lines and counts what it dropped.
  l.printf_bytes = 40;
  l.printf_address = client->allocate(l.printf_bytes);
  const auto small = launch(l);
  ASSERT_OK(small);
  EXPECT_EQ(small.value0, 34u);
  EXPECT_EQ(small.value1, expected.size() - 34);
  // No buffer: the output is dropped, the launch still succeeds.
  l.printf_address = 0;
  l.printf_bytes = 0;
  const auto none = launch(l);
  ASSERT_OK(none);
  EXPECT_EQ(none.value1, expected.size());
}

TEST_F(Commands, MalformedPtxIsRejectedWithALocation) {
  device::CompletionRecord r{};
  load_module(".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k() {\n  bogus.op %r1;\n}\n", &r);
  EXPECT_STATUS(r, Status::ModuleLoadFailed);
  EXPECT_TRUE(std::regex_search(r.message, std::regex(R"(module\d+\.ptx:\d+:\d+: )"))) << r.message;
  load_module("\x01\x02 not ptx at all", &r);
  EXPECT_STATUS(r, Status::ModuleLoadFailed);
  still_serving();
  kernels();  // a good module still loads
}

TEST_F(Commands, IllegalLaunchesAreRefused) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  const uint64_t uses_shared = function(module, "uses_shared", &layout);
  const uint64_t out = map(4096);
  Launch good;
  good.function = uses_shared;
  good.block[0] = 64;
  good.shared = 64 * sizeof(float);
  good.args = pack(layout, out);
  ASSERT_OK(launch(good));

  auto refused = [&](const std::function<void(Launch&)>& change) {
    Launch l = good;
    change(l);
    return launch(l);
  };
  EXPECT_STATUS(refused([](Launch& l) { l.block[0] = 2048; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.block[0] = 32, l.block[1] = 64; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.block[2] = 65; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.block[1] = 0; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.grid[0] = 0; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.grid[1] = 70000; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.shared = 200 * 1024; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.args.resize(4); }), Status::InvalidLaunch);
  // More than 48 KiB of shared memory needs cudaFuncAttributeMaxDynamicSharedMemorySize, as on
  // real hardware; up to the SM's 96 KiB with it.
  const auto over = refused([](Launch& l) { l.shared = 64 * 1024; });
  EXPECT_STATUS(over, Status::InvalidLaunch);
  EXPECT_NE(std::string(over.message).find("MaxDynamicSharedMemorySize"), std::string::npos) << over.message;
  EXPECT_STATUS(refused([](Launch& l) { l.shared = 64 * 1024, l.max_dynamic_shared = 32 * 1024; }), Status::InvalidLaunch);
  EXPECT_STATUS(refused([](Launch& l) { l.shared = 64 * 1024, l.max_dynamic_shared = 64 * 1024; }), Status::Ok);
  EXPECT_STATUS(refused([](Launch& l) { l.carveout = 1 + 25; }), Status::Ok);  // a carve-out preference is a hint
  EXPECT_STATUS(refused([](Launch& l) { l.carveout = 102; }), Status::InvalidLaunch);
  const auto message = refused([](Launch& l) { l.block[0] = 2048; });
  EXPECT_NE(std::string(message.message).find("2048"), std::string::npos) << message.message;
  still_serving();
}

TEST_F(Commands, WildStoreInAKernelIsAnIllegalAddress) {
  const uint64_t module = kernels();
  std::vector<device::ParamLayout> layout;
  const uint64_t wild_store = function(module, "wild_store", &layout);
  const uint64_t buffer = map(256);
  Launch l;
  l.function = wild_store;
  l.args = pack(layout, buffer, static_cast<long long>(1) << 36);
  const auto done = launch(l);
  EXPECT_STATUS(done, Status::IllegalAddress);
  EXPECT_NE(std::string(done.message), "");
  still_serving();
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.command_processor", "kernel_faults"), 1u);
}

TEST_F(Commands, CorruptRingIndicesFaultTheChannelOnly) {
  device::Channel& ch = client->channel();
  __atomic_store_n(&ch.queues[3].tail.value, 1000u, __ATOMIC_RELEASE);  // 1000 ahead of head 0
  client->ring(device::kPlatformPeerId, device::kVectorCommand);
  const auto fault = client->wait(0, false);  // the platform's record carries sequence 0
  ASSERT_TRUE(fault.has_value());
  EXPECT_STATUS(*fault, Status::RingCorrupt);
  EXPECT_NE(std::string(fault->message).find("queue 3"), std::string::npos) << fault->message;
  EXPECT_EQ(__atomic_load_n(&ch.control.state, __ATOMIC_ACQUIRE), uint32_t(device::ChannelState::Faulted));

  // Other programs are served meanwhile.
  auto other = connect_open(platform->socket_path());
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other->channel_index(), client->channel_index());
  EXPECT_STATUS(other->execute(0, RawClient::command(Opcode::Nop)), Status::Ok);

  // When the faulted program leaves, its channel is Free again, one generation on.
  const uint32_t index = client->channel_index();
  const uint32_t generation = ch.control.generation;
  // Watch the channel through the other client's mapping: ours goes away with us.
  const auto* control = reinterpret_cast<const device::ChannelControl*>(
      other->region() + other->header().channels_offset + other->header().channel_bytes * index);
  client.reset();
  EXPECT_TRUE(eventually([&] {
    return __atomic_load_n(&control->state, __ATOMIC_ACQUIRE) == uint32_t(device::ChannelState::Free);
  }));
  EXPECT_EQ(control->generation, generation + 1);
  auto again = connect_open(platform->socket_path());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->channel_index(), index);
}

TEST_F(Commands, CorruptCompletionHeadFaultsTheChannel) {
  device::Channel& ch = client->channel();
  __atomic_store_n(&ch.completions.head.value, 5000u, __ATOMIC_RELEASE);
  client->ring(device::kPlatformPeerId, device::kVectorCommand);
  EXPECT_TRUE(eventually([&] {
    return __atomic_load_n(&ch.control.state, __ATOMIC_ACQUIRE) == uint32_t(device::ChannelState::Faulted);
  }));
}

TEST_F(Commands, SemaphoresOrderQueuesAndCarryTime) {
  const uint64_t cells = client->allocate(64, 64);
  auto* cell = static_cast<uint64_t*>(client->at(cells));
  const uint64_t buffer = map(4096);
  const uint64_t host = client->allocate(4096);
  // Queue 1 waits for the semaphore that queue 2 signals after a copy.
  const uint64_t waiting = client->submit(1, RawClient::command(Opcode::SemaphoreWait, cells, 1));
  const uint64_t after = client->submit(1, RawClient::command(Opcode::Nop));
  const uint64_t copy = client->submit(2, RawClient::command(Opcode::Memcpy, buffer, host, 4096,
                                                             uint64_t(device::CopyDirection::HostToDevice)));
  const uint64_t signal = client->submit(2, RawClient::command(Opcode::SemaphoreSignal, cells, 1));
  // The host blocks until the cell reaches 1 (HostWaiting with a condition).
  const uint64_t host_wait = client->submit(0, RawClient::command(Opcode::HostWaiting, cells, 1));
  const auto waited = client->wait(host_wait, false);
  ASSERT_TRUE(waited.has_value());
  EXPECT_STATUS(*waited, Status::Ok);
  EXPECT_EQ(__atomic_load_n(cell, __ATOMIC_ACQUIRE), 1u);
  const auto c = client->wait(copy, false), s = client->wait(signal, false);
  const auto w = client->wait(waiting), a = client->wait(after);
  ASSERT_TRUE(c && s && w && a);
  EXPECT_GT(c->simulated_ps, 0u);
  EXPECT_LE(c->simulated_ps, s->simulated_ps);
  EXPECT_LE(s->simulated_ps, w->simulated_ps);
  EXPECT_GE(cell[1], c->simulated_ps);  // the signal wrote its time next to the value
  EXPECT_LE(cell[1], s->simulated_ps);
  EXPECT_LE(waited->simulated_ps, w->simulated_ps + 1);
}

TEST_F(Commands, SimulatedTimeStandsStillUntilTheHostWaits) {
  const uint64_t buffer = map(65536);
  const uint64_t host = client->allocate(65536);
  const uint64_t copy = client->submit(0, RawClient::command(Opcode::Memcpy, buffer, host, 65536,
                                                             uint64_t(device::CopyDirection::HostToDevice)));
  // The copy needs simulated time (PCIe); nobody waits, so it cannot finish.
  EXPECT_FALSE(client->wait(copy, false, std::chrono::milliseconds(300)).has_value());
  const auto done = client->wait(copy, true);
  ASSERT_TRUE(done.has_value());
  EXPECT_STATUS(*done, Status::Ok);
  EXPECT_GT(done->simulated_ps, 0u);
}

// A HostWaiting naming a command of another queue may sit in its own queue behind a command that
// is still running after it was answered. Its client runs again from then on: what it queues next
// must wait for its next HostWaiting, or when it starts would depend on the platform's passes.
TEST_F(Commands, AnsweredHostWaitingLeftInItsQueueReleasesNothing) {
  const uint64_t cells = client->allocate(64, 64);
  auto* cell = static_cast<uint64_t*>(client->at(cells));
  const uint64_t stalled = client->submit(0, RawClient::command(Opcode::SemaphoreWait, cells, 1));
  const uint64_t first = client->submit(1, RawClient::command(Opcode::Nop));
  const uint64_t waiting = client->submit(0, RawClient::command(Opcode::HostWaiting, 0, 0, first));
  const auto answered = client->wait(waiting, false);
  ASSERT_TRUE(answered.has_value());
  EXPECT_STATUS(*answered, Status::Ok);
  ASSERT_TRUE(client->wait(first, false).has_value());
  // The HostWaiting is still in queue 0, behind the semaphore; the client is not blocked.
  const uint64_t later = client->submit(1, RawClient::command(Opcode::Nop));
  EXPECT_FALSE(client->wait(later, false, std::chrono::milliseconds(300)).has_value());
  EXPECT_TRUE(client->wait(later, true).has_value());  // now it waits: the Nop runs
  __atomic_store_n(cell, 1u, __ATOMIC_RELEASE);
  EXPECT_TRUE(client->wait(stalled, true).has_value());
}

// A running host's write to a semaphore cell is taken when the host next waits, with what it
// queued meanwhile, never at whichever wall-clock poll came first: until then its queue stays put.
TEST_F(Commands, HostWrittenSemaphoreCountsWhenTheHostWaits) {
  const uint64_t cells = client->allocate(64, 64);
  auto* cell = static_cast<uint64_t*>(client->at(cells));
  const uint64_t stalled = client->submit(1, RawClient::command(Opcode::SemaphoreWait, cells, 1));
  const uint64_t behind = client->submit(1, RawClient::command(Opcode::Nop));
  const uint64_t other = client->submit(2, RawClient::command(Opcode::Nop));
  // Everything is released; the host waits for `other` only, and queue 1 waits for its cell.
  const uint64_t waiting = client->submit(0, RawClient::command(Opcode::HostWaiting, 0, 0, other));
  ASSERT_TRUE(client->wait(waiting, false).has_value());
  ASSERT_TRUE(client->wait(other, false).has_value());
  __atomic_store_n(cell, 1u, __ATOMIC_RELEASE);
  EXPECT_FALSE(client->wait(stalled, false, std::chrono::milliseconds(300)).has_value());  // many polls later
  const auto done = client->wait(behind, true);
  ASSERT_TRUE(done.has_value());
  EXPECT_STATUS(*done, Status::Ok);
  EXPECT_TRUE(client->wait(stalled, false).has_value());
}

TEST_F(Commands, GoodbyeFreesTheChannel) {
  map(1 << 20);
  kernels();
  const uint32_t generation = client->channel().control.generation;
  const auto r = run(Opcode::Goodbye);
  ASSERT_OK(r);
  const auto* control = &client->channel().control;
  EXPECT_TRUE(eventually([&] {
    return __atomic_load_n(&control->state, __ATOMIC_ACQUIRE) == uint32_t(device::ChannelState::Free);
  }));
  EXPECT_EQ(control->generation, generation + 1);
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.command_processor", "contexts_released"), 1u);
  EXPECT_EQ(platform->counter("gpu.command_processor", "bytes_unmapped"), uint64_t{1} << 20);
  EXPECT_EQ(platform->counter("gpu.command_processor", "modules_unloaded"), 1u);
  EXPECT_EQ(platform->counter("bridge", "channels_released"), 1u);
}

TEST_F(Commands, CommandsBeforeHelloAreRefused) {
  // A second client claims a channel but skips Hello.
  std::string error;
  auto raw = RawClient::connect(platform->socket_path(), &error);
  ASSERT_NE(raw, nullptr) << error;
  const auto& h = raw->header();
  device::ChannelControl* control = nullptr;
  uint32_t index = 0;
  for (; index < h.max_channels; ++index) {
    control = reinterpret_cast<device::ChannelControl*>(raw->region() + h.channels_offset + h.channel_bytes * index);
    uint32_t expected = 0;
    if (__atomic_compare_exchange_n(&control->state, &expected, 1u, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
  }
  ASSERT_LT(index, h.max_channels);
  control->owner_peer = static_cast<uint32_t>(raw->peer_id());
  auto* ch = reinterpret_cast<device::Channel*>(control);
  device::Command nop = RawClient::command(Opcode::MemMap, 4096);
  nop.sequence = 77;
  ch->queues[0].entries[0] = nop;
  __atomic_store_n(&ch->queues[0].tail.value, 1u, __ATOMIC_RELEASE);
  raw->ring(device::kPlatformPeerId, device::kVectorCommand);
  EXPECT_TRUE(eventually([&] { return __atomic_load_n(&ch->completions.tail.value, __ATOMIC_ACQUIRE) == 1u; }));
  EXPECT_EQ(ch->completions.entries[0].sequence, 77u);
  EXPECT_EQ(ch->completions.entries[0].status, uint32_t(Status::ChannelUnavailable));
}

// A query's HostWaiting, bounded by `bound` ps, again and again until a 1 MiB copy is done (at
// most `limit` times). Returns the simulated times of the HostWaitings' completions; the last
// entry is the copy's completion time (0 when it never completed). `expired` counts the
// HostWaitings that ended by their bound.
std::vector<uint64_t> poll_copy(RawClient& client, uint64_t bound, int limit, int* expired = nullptr) {
  std::vector<uint64_t> times;
  const uint64_t bytes = 1 << 20;
  const auto mapped = client.execute(0, RawClient::command(Opcode::MemMap, bytes));
  EXPECT_EQ(mapped.status, uint32_t(Status::Ok)) << status_text(mapped);
  const uint64_t host = client.allocate(bytes);
  const auto nop = client.execute(0, RawClient::command(Opcode::Nop));
  EXPECT_EQ(nop.status, uint32_t(Status::Ok)) << status_text(nop);
  // Bounded wait on work that is done: it holds at once and no simulated time passes.
  const auto idle = client.wait(client.submit(0, RawClient::command(Opcode::HostWaiting, 0, 0, nop.sequence, bound)), false);
  EXPECT_TRUE(idle.has_value());
  if (!idle) return times;
  EXPECT_EQ(idle->status, uint32_t(Status::Ok)) << status_text(*idle);
  EXPECT_EQ(idle->value0, 1u);
  EXPECT_EQ(idle->simulated_ps, nop.simulated_ps);
  times.push_back(idle->simulated_ps);

  const uint64_t copy = client.submit(1, RawClient::command(Opcode::Memcpy, mapped.value0, host, bytes,
                                                            uint64_t(device::CopyDirection::HostToDevice)));
  uint64_t previous = idle->simulated_ps;
  if (expired != nullptr) *expired = 0;
  for (int i = 0; i < limit; ++i) {
    const auto waited =
        client.wait(client.submit(0, RawClient::command(Opcode::HostWaiting, 0, 0, copy, bound)), false);
    EXPECT_TRUE(waited.has_value()) << "query " << i << ": no completion";
    if (!waited) break;
    EXPECT_EQ(waited->status, uint32_t(Status::Ok)) << status_text(*waited);
    times.push_back(waited->simulated_ps);
    // The HostWaiting's completion comes after the instant settled: a copy that finished by then
    // has posted its completion already.
    const auto copied = client.wait(copy, false, std::chrono::milliseconds(0));
    if (!copied) {
      EXPECT_EQ(waited->value0, 0u) << "query " << i;
      EXPECT_EQ(waited->simulated_ps, previous + bound) << "query " << i << ": time advances by exactly the bound";
      if (expired != nullptr) ++*expired;
      previous = waited->simulated_ps;
      continue;
    }
    EXPECT_EQ(copied->status, uint32_t(Status::Ok)) << status_text(*copied);
    EXPECT_EQ(waited->value0, 1u);
    EXPECT_GT(copied->simulated_ps, previous);
    EXPECT_LE(copied->simulated_ps, waited->simulated_ps);
    EXPECT_LE(waited->simulated_ps, previous + bound) << "time advances by at most the bound";
    times.push_back(copied->simulated_ps);
    return times;
  }
  times.push_back(0);
  return times;
}

// A HostWaiting bounded in simulated time (what a query sends): while the command it names runs
// on, each one lets exactly its bound of simulated time pass and completes with value0 0; the one
// in whose bound the command completes ends there, with value0 1, after the command's completion.
TEST_F(Commands, BoundedHostWaitingAdvancesTimeByAtMostItsBound) {
  constexpr uint64_t kBound = 2'000'000;  // 2 us
  int expired = 0;
  const auto times = poll_copy(*client, kBound, 10000, &expired);
  ASSERT_GE(times.size(), 3u);
  EXPECT_NE(times.back(), 0u) << "the copy never completed";
  EXPECT_GE(expired, 5);  // a 1 MiB copy over PCIe takes tens of microseconds
  platform->stop();
  EXPECT_EQ(platform->counter("bridge", "host_waits_bounded"), uint64_t(expired) + 2);
  EXPECT_EQ(platform->counter("bridge", "host_waits_expired"), uint64_t(expired));
}

// Nobody waits, nothing moves: without a HostWaiting a queued copy never completes, however long
// the host polls its completion ring; one bounded HostWaiting moves it by exactly the bound.
TEST_F(Commands, WithoutAHostWaitingNothingMovesWithABoundedOneTimeDoes) {
  const uint64_t buffer = map(65536);
  const uint64_t host = client->allocate(65536);
  const auto before = client->execute(0, RawClient::command(Opcode::Nop));
  const uint64_t copy = client->submit(1, RawClient::command(Opcode::Memcpy, buffer, host, 65536,
                                                             uint64_t(device::CopyDirection::HostToDevice)));
  EXPECT_FALSE(client->wait(copy, false, std::chrono::milliseconds(200)).has_value());
  const auto waited =
      client->wait(client->submit(0, RawClient::command(Opcode::HostWaiting, 0, 0, copy, 1000)), false);
  ASSERT_TRUE(waited.has_value());
  EXPECT_EQ(waited->value0, 0u);
  EXPECT_EQ(waited->simulated_ps, before.simulated_ps + 1000);
  EXPECT_FALSE(client->wait(copy, false, std::chrono::milliseconds(200)).has_value());  // stopped again
  const auto done = client->wait(copy, true);  // an unbounded wait finishes it
  ASSERT_TRUE(done.has_value());
  EXPECT_STATUS(*done, Status::Ok);
}

// Same commands, same simulated times: the host's speed does not matter.
TEST(Determinism, SameCommandsGiveTheSameSimulatedTimes) {
  auto session = [] {
    RunningPlatform platform;
    auto client = connect_open(platform.socket_path());
    std::vector<uint64_t> times;
    if (client == nullptr) return times;
    const uint64_t buffer = client->execute(0, RawClient::command(Opcode::MemMap, 3 << 20)).value0;
    const uint64_t host = client->allocate(3 << 20);
    for (uint64_t bytes : {uint64_t{4096}, uint64_t{65536}, uint64_t{3} << 20}) {
      const auto r = client->execute(0, RawClient::command(Opcode::Memcpy, buffer, host, bytes,
                                                           uint64_t(device::CopyDirection::HostToDevice)));
      times.push_back(r.simulated_ps);
      const auto back = client->execute(0, RawClient::command(Opcode::Memcpy, host, buffer, bytes,
                                                              uint64_t(device::CopyDirection::DeviceToHost)));
      times.push_back(back.simulated_ps);
    }
    return times;
  };
  const auto first = session();
  const auto second = session();
  ASSERT_EQ(first.size(), 6u);
  EXPECT_EQ(first, second);
  for (size_t i = 1; i < first.size(); ++i) EXPECT_LT(first[i - 1], first[i]);
}

// Queries too: the same bounded HostWaitings end at the same simulated times in every run.
TEST(Determinism, SameQueriesGiveTheSameSimulatedTimes) {
  auto session = [] {
    RunningPlatform platform;
    auto client = connect_open(platform.socket_path());
    return client != nullptr ? poll_copy(*client, 3'000'000, 10000) : std::vector<uint64_t>{};
  };
  const auto first = session();
  const auto second = session();
  ASSERT_GE(first.size(), 4u);
  EXPECT_NE(first.back(), 0u);
  EXPECT_EQ(first, second);
}

// A program killed in the middle of a kernel: the kernel is cancelled, the channel's memory and
// modules are freed, and the next program is served.
TEST(ClientDeath, KilledMidKernelFreesEverythingAndTheNextProgramRuns) {
  RunningPlatform platform;
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string program = GPUVP_BRIDGE_KILL_CLIENT;
  std::string socket = platform.socket_path();
  std::string ptx = GPUVP_BRIDGE_PTX;
  char* argv[] = {program.data(), socket.data(), ptx.data(), nullptr};
  pid_t child = -1;
  ASSERT_EQ(posix_spawn(&child, program.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);

  // The child says "launched" once its endless kernel is queued behind a HostWaiting.
  std::string line;
  pollfd readable{out[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && ::poll(&readable, 1, 10000) == 1) {
    char buffer[64];
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  ::close(out[0]);
  ASSERT_EQ(line.rfind("launched", 0), 0u) << line;
  EXPECT_TRUE(eventually([&] { return platform.server().activity().kernels_started >= 1; }));
  // The bridge counts the launch when it takes the command; the command processor begins the grid
  // (and counts kernels_launched) a moment later on the simulation thread, with no outside signal
  // of it. Give it that moment, so the kill lands while the endless kernel runs, also under ASan.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));

  EXPECT_TRUE(eventually([&] { return platform.server().activity().channels_released >= 1; }));
  auto next = connect_open(platform.socket_path());
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->channel_index(), 0u);  // the dead program's channel, Free again
  EXPECT_EQ(next->execute(0, RawClient::command(Opcode::MemMap, 4096)).status, uint32_t(Status::Ok));
  next.reset();
  EXPECT_TRUE(eventually([&] { return platform.server().activity().channels_released >= 2; }));
  platform.stop();
  EXPECT_EQ(platform.counter("gpu.command_processor", "kernels_launched"), 1u);
  EXPECT_EQ(platform.counter("gpu.command_processor", "kernels_cancelled"), 1u);  // it was running
  EXPECT_EQ(platform.counter("gpu.command_processor", "contexts_released"), 2u);
  EXPECT_EQ(platform.counter("gpu.command_processor", "bytes_mapped"),
            platform.counter("gpu.command_processor", "bytes_unmapped"));
  EXPECT_EQ(platform.counter("gpu.command_processor", "modules_unloaded"), 1u);
}

}  // namespace
}  // namespace gpuvp::test
