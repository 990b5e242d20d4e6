// `gpuvp boot` end to end (issue 8): a Linux guest in QEMU (TCG) whose GPU is the platform runs
// unmodified nvcc-built CUDA programs with gpuvp's libcudart over the guest transport.
//   - co-verification, every workload of sw/workloads, a program that fills the device queues and
//     the unified-memory suite's deterministic programs (host faults on managed pages, advice):
//     the device statistics of the programs run in the guest equal, byte for byte, those of the
//     same programs run natively against one platform (`gpuvp serve`), the bridge's host-side
//     counters excepted (they count wall-clock meetings of host and platform); the programs check
//     their results against CPU references (exit non-zero on mismatch) and print in the guest what
//     they print natively;
//   - a guest program killed mid-kernel: the platform frees its channel and keeps serving;
//   - QEMU killed: the platform ends cleanly (summary, statistics, non-zero exit);
//   - the platform killed: the guest's driver notices (heartbeat) and the program gets an error;
//   - completions by MSI-X (`--interrupts msix`: vfio-pci behind QEMU's intel-iommu): programs
//     run with correct results, the driver really received interrupts, and the device statistics
//     are those of the native run (and so of the polling guest run).
// One boot per test, several programs per boot: each boot costs seconds of TCG.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/workloads.h"  // GPUVP_WORKLOAD_LIST: every workload
#include "tests/support/process.h"

namespace gpuvp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kGpuvp = GPUVP_BINARY;
const std::string kWorkloads = GPUVP_WORKLOAD_BIN_DIR;
const std::string kRtPrograms = GPUVP_RT_PROGRAM_DIR;
const std::string kCudartDir = GPUVP_CUDART_LIB_DIR;
const std::string kImage = GPUVP_GUEST_TEST_IMAGE;
constexpr auto kBootTimeout = seconds(400);

std::string describe(const ProcessResult& r) {
  std::ostringstream text;
  text << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "") << "\n--- stdout\n" << r.out
       << "--- stderr\n" << r.err;
  return text.str();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// As in the timing model's identical-runs test: the bridge group counts host/platform meetings
// in wall-clock time (polls, doorbells, waits), which differ between any two runs by design.
std::string without_host_side(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j["run"]["groups"].erase("bridge");
  for (auto& kernel : j["kernels"]) kernel["groups"].erase("bridge");
  return j.dump(2);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Pumps the process's output until `what` appears `times` times.
bool wait_for_count(Process& p, const std::string& what, size_t times, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (count(p.out(), what) < times) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (!p.wait_for_output(what + "\x01", milliseconds(200))) {
      std::this_thread::sleep_for(milliseconds(50));  // pumped, or the output has closed
    }
  }
  return true;
}

// `gpuvp serve` started for a test; its socket path read from its first lines.
std::string serve_socket(Process& serve) {
  if (!serve.wait_for_output("export GPUVP_SOCKET=", seconds(60))) return {};
  if (!serve.wait_for_output("Ctrl-C", seconds(10))) return {};
  const std::string& out = serve.out();
  const size_t at = out.find("export GPUVP_SOCKET=") + 20;
  return out.substr(at, out.find('\n', at) - at);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The guest console's lines of program `index` (between init's GPUVP-BEGIN and GPUVP-END).
std::vector<std::string> guest_program_lines(const std::string& console, size_t index) {
  const std::string begin = "GPUVP-BEGIN " + std::to_string(index) + " ";
  const std::string end = "GPUVP-END " + std::to_string(index) + " ";
  std::vector<std::string> lines;
  bool inside = false;
  for (const std::string& line : lines_of(console)) {
    if (line.rfind(begin, 0) == 0) {
      inside = true;
    } else if (line.rfind(end, 0) == 0) {
      break;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  return lines;
}

// Every line the program printed natively appears, in the same order, among its guest console
// lines (which also carry its stderr, and may carry a stray kernel message).
::testing::AssertionResult same_program_output(const std::string& name, const std::string& native_out,
                                               const std::vector<std::string>& guest) {
  size_t at = 0;
  for (const std::string& line : lines_of(native_out)) {
    while (at < guest.size() && guest[at] != line) ++at;
    if (at == guest.size()) {
      std::string all;
      for (const std::string& g : guest) all += g + "\n";
      return ::testing::AssertionFailure() << name << ": the native output line\n  " << line
                                           << "\nis missing from (or out of order in) its guest output:\n" << all;
    }
    ++at;
  }
  return ::testing::AssertionSuccess();
}

// Every workload of sw/workloads (every program the guest image ships), at its default size:
// natively about 20 s, in the guest (one boot) about 40 s of TCG on the 2-core CI machine.
// printf is also a shell builtin: the guest's init runs a workload's name by path (init.sh).
#define GPUVP_WORKLOAD_NAME(name) #name,
const std::vector<std::string> kWorkloadNames = {GPUVP_WORKLOAD_LIST(GPUVP_WORKLOAD_NAME)};
#undef GPUVP_WORKLOAD_NAME

struct CoVerified {
  std::string name;                 // the command the guest runs
  std::vector<std::string> native;  // the same binary on this host, with the same arguments
  std::string pass;                 // the line (start) the program prints once its results check out
};

// The unified-memory suite's programs co-verified in the guest (sw/workloads/uvm/uvm_suite.cu):
// every one but `threads`, whose statistics depend on the host threads' interleaving by design
// (it runs in the guest, values checked, in KilledGuestProgramIsFreed...). Host faults on managed
// pages (the runtime's SIGSEGV handler, mprotect, HostAccess) in first-touch, retouch and
// partial-touch patterns, advice (read duplication, remote mapping, accessed-by, preferred
// device), prefetches both ways, managed memcpy/memset, oversubscription, concurrent kernels on
// streams, chained kernels.
const std::vector<std::string> kUvmPrograms = {"stream",     "random",     "strided",    "oversub",
                                               "prefetch",   "retouch",    "partial",    "concurrent",
                                               "copies",     "readmostly", "prefhost",   "accessedby",
                                               "prefdevice", "adviseerrors", "chain"};

// Every workload, tests/runtime's full_queues (8 streams of 300 commands before one synchronize:
// full device queues, so the driver waits for room as a waiting host, and streams ordered by
// semaphores), then the UVM suite: about 45 programs one after another on one platform, whose
// state (caches, DRAM rows, simulated time) carries from program to program, so any wall-clock
// influence on the device anywhere shows up in a later program's numbers.
std::vector<CoVerified> co_verified() {
  std::vector<CoVerified> programs;
  for (const std::string& name : kWorkloadNames) {
    programs.push_back({name, {kWorkloads + "/workload_" + name}, "PASS " + name + ":"});
  }
  programs.push_back({"full_queues", {kRtPrograms + "/full_queues"}, "PASS full_queues:"});
  for (const std::string& name : kUvmPrograms) {
    programs.push_back({"uvm_suite " + name, {kWorkloads + "/uvm_suite", name}, "PASS uvm " + name + "\n"});
  }
  return programs;
}

TEST(GuestBoot, GuestRunsHaveNativeDeviceStatisticsAndCorrectResults) {
  const std::string native_stats = ::testing::TempDir() + "/guest_native.json";
  const std::string guest_stats = ::testing::TempDir() + "/guest_guest.json";
  const std::vector<CoVerified> programs = co_verified();
  ASSERT_EQ(programs.size(), kWorkloadNames.size() + 1 + kUvmPrograms.size());

  // Natively: the programs one after another against one platform.
  std::vector<std::string> native_out;
  {
    Process serve({kGpuvp, "serve", "--stats", native_stats, "--stats-per-launch"});
    const std::string socket = serve_socket(serve);
    ASSERT_FALSE(socket.empty()) << serve.out();
    for (const CoVerified& program : programs) {
      const ProcessResult r =
          run(program.native, seconds(300), {{"GPUVP_SOCKET", socket}, {"LD_LIBRARY_PATH", kCudartDir}});
      ASSERT_EQ(r.exit_code, 0) << program.name << "\n" << describe(r);
      ASSERT_NE(r.out.find(program.pass), std::string::npos) << describe(r);
      native_out.push_back(r.out);
    }
    ::kill(serve.pid(), SIGTERM);
    const ProcessResult done = serve.finish(seconds(60));
    ASSERT_EQ(done.exit_code, 0) << describe(done);
  }

  // In the guest: the same binaries, by name, in one boot.
  std::string run_list;
  for (const CoVerified& program : programs) run_list += program.name + "; ";
  const ProcessResult r =
      run({kGpuvp, "boot", "--image", kImage, "--guest-run", run_list, "--stats", guest_stats, "--stats-per-launch"},
          kBootTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (size_t i = 0; i < programs.size(); ++i) {
    // The programs check their results against CPU references and exit non-zero on mismatch;
    // in the guest they print what they printed natively (results, device printf output).
    EXPECT_NE(r.err.find("[" + std::to_string(i) + "] " + programs[i].name + ": exit 0\n"), std::string::npos)
        << describe(r);
    EXPECT_TRUE(same_program_output(programs[i].name, native_out[i], guest_program_lines(r.out, i)));
  }
  EXPECT_NE(r.err.find("gpuvp boot: boot time "), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("GPUVP-READY peer 1"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("the guest's driver takes completions by polling the shared region"), std::string::npos)
      << describe(r);

  const std::string native = slurp(native_stats), guest = slurp(guest_stats);
  ASSERT_FALSE(native.empty());
  ASSERT_FALSE(guest.empty());
  const nlohmann::json parsed = nlohmann::json::parse(guest);
  ASSERT_TRUE(parsed["run"]["groups"].contains("gpu"));  // the device model ran in the guest run
  EXPECT_GE(parsed["kernels"].size(), programs.size());
  EXPECT_EQ(parsed["run"]["groups"]["bridge"]["counters"]["channels_opened"]["value"], programs.size())
      << parsed["run"]["groups"]["bridge"].dump(2);
  EXPECT_TRUE(without_host_side(native) == without_host_side(guest))
      << "device statistics differ between the native and the guest runs (" << native_stats << " vs " << guest_stats
      << ")";
}

// The interrupts the guest transport reported for one program ("gpuvp: completions by MSI-X (vfio
// group G): N interrupts, W waits woken" on its stderr, GPUVP_VERBOSE); -1 when it said nothing.
long long msix_interrupts(const std::vector<std::string>& program_lines) {
  const std::string mark = "gpuvp: completions by MSI-X (vfio group ";
  for (const std::string& line : program_lines) {
    const size_t at = line.find(mark);
    if (at == std::string::npos) continue;
    const size_t colon = line.find("): ", at);
    if (colon == std::string::npos) return -1;
    return std::atoll(line.c_str() + colon + 3);
  }
  return -1;
}

// `gpuvp boot --interrupts msix`: q35 with QEMU's intel-iommu, the guest's vfio modules, the
// device bound to vfio-pci; the driver waits on an eventfd that the completion vector's MSI-X
// interrupt signals. Two workloads (a kernel per launch, copies both ways; gemm's tiled kernel)
// run with checked results, each receiving interrupts, and the device statistics equal those of
// the same programs run natively: how the guest learns of completions changes no device counter.
TEST(GuestBoot, MsixCompletionsThroughVfioGiveTheNativeDeviceStatistics) {
  const std::string native_stats = ::testing::TempDir() + "/guest_msix_native.json";
  const std::string guest_stats = ::testing::TempDir() + "/guest_msix_guest.json";
  const std::vector<std::string> names = {"vector_add", "gemm"};
  {
    Process serve({kGpuvp, "serve", "--stats", native_stats, "--stats-per-launch"});
    const std::string socket = serve_socket(serve);
    ASSERT_FALSE(socket.empty()) << serve.out();
    for (const std::string& name : names) {
      const ProcessResult r = run({kWorkloads + "/workload_" + name}, seconds(300),
                                  {{"GPUVP_SOCKET", socket}, {"LD_LIBRARY_PATH", kCudartDir}});
      ASSERT_EQ(r.exit_code, 0) << name << "\n" << describe(r);
    }
    ::kill(serve.pid(), SIGTERM);
    ASSERT_EQ(serve.finish(seconds(60)).exit_code, 0);
  }

  // GPUVP_VERBOSE: the guest transport says at exit which path it used and what it received.
  std::string run_list;
  for (const std::string& name : names) run_list += "GPUVP_VERBOSE=1 " + name + "; ";
  const ProcessResult r = run({kGpuvp, "boot", "--image", kImage, "--interrupts", "msix", "--guest-run", run_list,
                               "--stats", guest_stats, "--stats-per-launch"},
                              kBootTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find(" completions msix "), std::string::npos) << describe(r);  // GPUVP-READY
  EXPECT_NE(r.err.find("the guest's driver takes completions by MSI-X interrupts (vfio-pci)"), std::string::npos)
      << describe(r);
  EXPECT_NE(r.err.find("gpuvp boot: boot time "), std::string::npos) << describe(r);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::vector<std::string> lines = guest_program_lines(r.out, i);
    EXPECT_NE(r.err.find("[" + std::to_string(i) + "] GPUVP_VERBOSE=1 " + names[i] + ": exit 0\n"), std::string::npos)
        << describe(r);
    std::string all;
    for (const std::string& line : lines) all += line + "\n";
    EXPECT_NE(all.find("PASS " + names[i] + ":"), std::string::npos) << all;
    EXPECT_GT(msix_interrupts(lines), 0) << names[i] << " received no MSI-X interrupt:\n" << all;
  }

  const std::string native = slurp(native_stats), guest = slurp(guest_stats);
  ASSERT_FALSE(native.empty());
  ASSERT_FALSE(guest.empty());
  EXPECT_TRUE(without_host_side(native) == without_host_side(guest))
      << "device statistics differ between the native and the MSI-X guest runs (" << native_stats << " vs "
      << guest_stats << ")";
}

TEST(GuestBoot, KilledGuestProgramIsFreedAndKilledQemuEndsThePlatformCleanly) {
  const std::string stats = ::testing::TempDir() + "/guest_faults.json";
  // uvm_suite threads: host threads fault managed pages concurrently in the guest (values checked;
  // its statistics depend on the threads' interleaving, so it is not co-verified).
  Process boot({kGpuvp, "boot", "--image", kImage, "--guest-run",
                "endless_kernel die; vector_add; uvm_suite threads; endless_kernel wait", "--stats", stats});
  // The first program dies mid-kernel; the platform frees its channel and serves the next.
  ASSERT_TRUE(boot.wait_for_output("PASS vector_add", kBootTimeout)) << boot.out();
  EXPECT_NE(boot.out().find("freed channel 0 of process"), std::string::npos) << boot.out();
  // The fourth one blocks in a kernel that never ends; then QEMU dies under it.
  ASSERT_TRUE(wait_for_count(boot, "kernel running", 2, seconds(120))) << boot.out();
  std::ifstream children("/proc/" + std::to_string(boot.pid()) + "/task/" + std::to_string(boot.pid()) + "/children");
  pid_t qemu = 0;
  ASSERT_TRUE(children >> qemu) << "cannot find QEMU, gpuvp's child";
  ASSERT_EQ(::kill(qemu, SIGKILL), 0);
  const ProcessResult r = boot.finish(seconds(60));
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 137) << describe(r);  // the first non-zero program exit code: the killed one
  EXPECT_NE(r.err.find("QEMU was killed by signal 9"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("QEMU ended before the guest finished its programs (3 of 4 reported)"), std::string::npos)
      << describe(r);
  EXPECT_NE(r.err.find("[0] endless_kernel die: exit 137"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("[1] vector_add: exit 0"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("[2] uvm_suite threads: exit 0"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("PASS uvm threads"), std::string::npos) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  EXPECT_EQ(j["run"]["groups"]["bridge"]["counters"]["channels_abandoned"]["value"], 1) << j["run"]["groups"]["bridge"].dump(2);
}

TEST(GuestBoot, KilledPlatformIsAnErrorInTheGuestProgramNotAHang) {
  Process serve({kGpuvp, "serve"});
  const std::string socket = serve_socket(serve);
  ASSERT_FALSE(socket.empty()) << serve.out();
  Process boot({kGpuvp, "boot", "--image", kImage, "--platform", socket, "--guest-run", "endless_kernel wait"});
  ASSERT_TRUE(boot.wait_for_output("kernel running", kBootTimeout)) << boot.out();
  ASSERT_EQ(::kill(serve.pid(), SIGKILL), 0);  // QEMU and the guest are not told
  const ProcessResult r = boot.finish(seconds(120));
  EXPECT_FALSE(r.timed_out) << describe(r);
  // endless_kernel expects cudaErrorDevicesUnavailable from its wait, within the heartbeat bound.
  EXPECT_NE(r.out.find("heartbeat stopped"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("PASS platform_gone"), std::string::npos) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  serve.finish(seconds(10));
  std::error_code ignored;  // the killed platform could not remove its socket directory
  std::filesystem::remove_all(std::filesystem::path(socket).parent_path(), ignored);
}

TEST(GuestBoot, BadArgumentsAreClearErrors) {
  const ProcessResult missing = run({kGpuvp, "boot", "--image", "/nonexistent/image"}, seconds(30));
  EXPECT_EQ(missing.exit_code, 1) << describe(missing);
  EXPECT_NE(missing.err.find("no guest image in /nonexistent/image"), std::string::npos) << describe(missing);
  const ProcessResult socket =
      run({kGpuvp, "boot", "--image", kImage, "--platform", "/nonexistent/gpuvp.sock"}, seconds(30));
  EXPECT_EQ(socket.exit_code, 1) << describe(socket);
  EXPECT_NE(socket.err.find("cannot use the platform socket /nonexistent/gpuvp.sock"), std::string::npos)
      << describe(socket);
  const ProcessResult too_long = run({kGpuvp, "boot", "--image", kImage, "--guest-run", std::string(3000, 'x')}, seconds(30));
  EXPECT_EQ(too_long.exit_code, 1) << describe(too_long);
  EXPECT_NE(too_long.err.find("--guest-run is too long"), std::string::npos) << describe(too_long);
  const ProcessResult interrupts = run({kGpuvp, "boot", "--image", kImage, "--interrupts", "msi"}, seconds(30));
  EXPECT_NE(interrupts.exit_code, 0) << describe(interrupts);
  EXPECT_NE(interrupts.err.find("--interrupts"), std::string::npos) << describe(interrupts);
}

}  // namespace
}  // namespace gpuvp::test
