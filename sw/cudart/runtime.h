// The process-wide CUDA runtime context of libcudart.so.13: everything the runtime ABI forces
// to be global lives in this one object (created on first use, destroyed at exit). The exported
// C functions (api_*.cpp) lock it and call its members.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuvp/device.h"
#include "sw/cudart/fatbin.h"
#include "sw/driver/driver.h"

namespace gpuvp::cudart {

struct Module {  // one registered fatbin (one translation unit)
  std::optional<Fatbin> fatbin;
  std::string parse_error;
  bool loaded = false;
  cudaError_t load_error = cudaSuccess;
  uint64_t handle = 0;
  bool uses_printf = false;
};

struct Function {
  Module* module = nullptr;
  const void* host_function = nullptr;
  std::string name;
  bool resolved = false;
  uint64_t handle = 0;
  uint32_t param_bytes = 0;
  std::vector<device::ParamLayout> params;
  uint32_t max_dynamic_shared = 0;  // cudaFuncAttributeMaxDynamicSharedMemorySize (0: not set)
  int32_t shared_carveout = -1;     // cudaFuncAttributePreferredSharedMemoryCarveout (-1: none)
};

struct Variable {
  Module* module = nullptr;
  const void* host_variable = nullptr;
  std::string name;
  std::size_t size = 0;
  bool resolved = false;
  uint64_t address = 0;
  void** managed_slot = nullptr;  // __managed__ variables: where host code reads the variable's address
  bool managed_ready = false;      // the host mirror exists and *managed_slot points at it
};

struct Allocation {
  uint64_t bytes = 0;
  bool managed = false;
  bool pristine = false;  // managed, and no device work has run since it was allocated: both copies are zero
};

struct Stream {
  uint32_t queue = 0;
  bool blocking = true;  // synchronizes with the legacy default stream
};

struct Event {
  uint64_t cell = 0;      // host address of {value, simulated ps}
  uint64_t value = 0;     // last value recorded
  uint64_t sequence = 0;  // SemaphoreSignal of the last record
  bool disable_timing = false;
};

// Work queued but not yet known complete, and what to do when it completes.
struct Pending {
  uint32_t queue = 0;
  uint64_t release[2] = {0, 0};  // window blocks to free
  uint64_t printf_address = 0;
  std::string what;              // for error messages
};

class Runtime {
 public:
  static Runtime& instance();
  Runtime() = default;
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  std::recursive_mutex& mutex() { return mutex_; }

  // ---- Registration ABI (no device needed).
  void** register_fatbin(void* fat_cubin);
  void unregister_fatbin(void** handle);
  void register_function(void** handle, const char* host_function, const char* device_name);
  void register_variable(void** handle, const void* host_variable, const char* device_name, std::size_t size);
  Function* function_of(const void* host_function_or_kernel);

  // ---- Errors.
  cudaError_t record(cudaError_t error);  // sets the last error when not success
  cudaError_t sticky() const { return sticky_; }
  cudaError_t take_last_error();
  cudaError_t peek_last_error() const { return sticky_ != cudaSuccess ? sticky_ : last_error_; }
  void log_unsupported(const char* name);

  // ---- Device.
  cudaError_t ensure_device();  // connects on first use
  const device::DeviceInfo& info() const { return driver_->device_info(); }
  cudaError_t device_properties(cudaDeviceProp* prop);
  cudaError_t device_attribute(int* value, cudaDeviceAttr attr);
  cudaError_t reset();

  // ---- Memory.
  cudaError_t malloc_device(void** ptr, std::size_t bytes);
  cudaError_t malloc_host(void** ptr, std::size_t bytes);
  cudaError_t malloc_managed(void** ptr, std::size_t bytes);
  // __managed__ variables of a module: mirror each at its device address on the host, fill the
  // mirror from the device and point the host's slot at it (what __cudaInitModule does).
  cudaError_t init_managed_variables(void** handle);
  void register_managed_variable(void** handle, void** slot, const char* device_name, std::size_t size);
  cudaError_t free_device(void* ptr);
  cudaError_t free_host(void* ptr);
  cudaError_t memcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                     bool async);
  cudaError_t memset(void* dst, int value, std::size_t bytes, cudaStream_t stream, bool async);
  cudaError_t symbol_address(void** address, std::size_t* size, const void* symbol);
  cudaError_t prefetch(const void* ptr, std::size_t bytes, bool to_device, cudaStream_t stream);
  cudaError_t mem_advise(const void* ptr, std::size_t bytes, int advice, cudaMemLocation location);
  // The SIGSEGV handler's question: `address` faulted (`write`: a write, as far as is known).
  // When it lies in managed memory, migrates its page to the host (waiting for outstanding
  // work first), maps it and returns true; false for a fault that is not the runtime's.
  bool host_fault(uint64_t address, bool write);
  cudaError_t pointer_attributes(cudaPointerAttributes* attributes, const void* ptr);
  cudaError_t mem_info(std::size_t* free_bytes, std::size_t* total_bytes);

  // ---- Launch.
  cudaError_t launch(const void* function, dim3 grid, dim3 block, void** args, std::size_t shared, cudaStream_t stream);
  cudaError_t launch_kernel(Function* function, dim3 grid, dim3 block, void** args, std::size_t shared,
                            cudaStream_t stream);
  cudaError_t function_attributes(cudaFuncAttributes* attributes, const void* function);
  cudaError_t occupancy(int* blocks, const void* function, int block_size, std::size_t shared);
  void push_configuration(dim3 grid, dim3 block, std::size_t shared, void* stream);
  cudaError_t pop_configuration(dim3* grid, dim3* block, std::size_t* shared, void* stream);

  // ---- Streams and events.
  cudaError_t stream_create(cudaStream_t* stream, unsigned flags);
  cudaError_t stream_destroy(cudaStream_t stream);
  cudaError_t stream_synchronize(cudaStream_t stream);
  cudaError_t stream_query(cudaStream_t stream);
  cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event);
  cudaError_t event_create(cudaEvent_t* event, unsigned flags);
  cudaError_t event_destroy(cudaEvent_t event);
  cudaError_t event_record(cudaEvent_t event, cudaStream_t stream);
  cudaError_t event_synchronize(cudaEvent_t event);
  cudaError_t event_query(cudaEvent_t event);
  cudaError_t event_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end);
  cudaError_t synchronize();

 private:
  Stream* stream_of(cudaStream_t stream);  // nullptr for an unknown handle
  Event* event_of(cudaEvent_t event);
  // Queues a command on `stream`'s queue after the legacy-stream dependencies it needs.
  uint64_t submit(Stream& stream, device::Command command, Pending pending);
  uint64_t submit_raw(uint32_t queue, device::Command command, Pending pending);
  driver::Completion call(uint32_t queue, const device::Command& command);  // synchronous
  cudaError_t wait_for(uint64_t sequence);  // waits, then completes everything that arrived
  // cudaStreamQuery / cudaEventQuery of `sequence`: cudaSuccess when it has completed, else lets
  // simulated time advance by at most one query quantum (Driver::query) and says again.
  cudaError_t query(uint64_t sequence);
  void reap();                              // completes every pending op that has finished
  cudaError_t complete(uint64_t sequence, const driver::Completion& completion);
  cudaError_t status_error(const driver::Completion& completion, const std::string& what);
  cudaError_t load_module(Module& module);
  cudaError_t resolve(Function& function);
  cudaError_t resolve(Variable& variable);
  std::optional<uint64_t> copy_into_window(const void* data, std::size_t bytes);
  // The device range [p, p+bytes) inside one allocation, or nullopt.
  bool is_device_range(uint64_t address, std::size_t bytes) const;
  cudaError_t queue_dependencies(Stream& stream);
  cudaError_t stage_copy(uint64_t dst, const void* src, void* host_dst, uint64_t device_src, std::size_t bytes,
                         Stream& stream);
  // Maps host pages over [address, address+bytes) at the same virtual addresses; pages already
  // mapped by an earlier call are kept. False when the range is taken by something else.
  bool map_host_mirror(uint64_t address, std::size_t bytes);
  // Host access to managed memory (README "Unified memory"). Managed pages the host may touch
  // are in host_pages_: kHostClean (mapped read-only, same values as the device) or kHostDirty
  // (read-write, the host may have changed them); every other managed page is PROT_NONE and
  // its values live on the device. A host access to one faults (SIGSEGV): host_fault() asks the
  // device for the page (HostAccess: the GMMU counts a host touch, the values come back) and
  // maps it. Device work first revokes the host's pages it may touch: dirty ones are copied to
  // the device, all become PROT_NONE again.
  enum : uint8_t { kHostClean = 1, kHostDirty = 2 };
  // Makes the managed pages of [lo, hi) host accessible for reading (or writing): fetches
  // those the host does not hold. cudaSuccess or the error of the HostAccess that failed.
  cudaError_t make_host_accessible(uint64_t lo, uint64_t hi, bool write);
  // Device work may touch managed [lo, hi): dirty host pages go to the device, the host's
  // pages in the range are protected again, pristine allocations there stop being pristine.
  cudaError_t revoke_host_access(uint64_t lo, uint64_t hi);
  // Calls f(lo', hi', allocation) for each managed allocation's part of [lo, hi), ascending.
  template <typename F>
  void for_managed_in(uint64_t lo, uint64_t hi, F&& f);
  void protect(uint64_t page_lo, uint64_t page_hi, int protection);
  void wait_idle();  // waits for all outstanding work; errors become deferred/sticky as usual
  void install_fault_handler();
  uint64_t page_bytes() const;
  void flush_printf(uint64_t address, const driver::Completion& completion);
  std::size_t printf_bytes() const;  // device printf buffer per launch

  std::recursive_mutex mutex_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::map<const void*, std::unique_ptr<Function>> functions_;  // by host stub
  std::map<const void*, std::unique_ptr<Variable>> variables_;  // by host shadow
  std::set<std::string> unsupported_logged_;
  struct LaunchConfig {
    dim3 grid, block;
    std::size_t shared = 0;
    void* stream = nullptr;
  };
  std::vector<LaunchConfig> configurations_;

  cudaError_t last_error_ = cudaSuccess;
  cudaError_t sticky_ = cudaSuccess;
  cudaError_t deferred_ = cudaSuccess;  // an asynchronous error reported by the next call
  bool init_attempted_ = false;
  cudaError_t init_error_ = cudaSuccess;
  std::unique_ptr<driver::Driver> driver_;

  std::map<uint64_t, Allocation> allocations_;     // device address -> allocation
  std::map<uint64_t, uint64_t> host_allocations_;  // host address -> bytes (pinned)
  std::map<uint64_t, Pending> pending_;            // sequence -> pending op
  uint64_t last_on_queue_[device::kQueuesPerChannel] = {};
  uint64_t queue_cells_ = 0;                       // host address: one {value, ps} per queue
  uint64_t queue_signal_[device::kQueuesPerChannel] = {};
  Stream legacy_{0, true};
  std::map<Stream*, std::unique_ptr<Stream>> streams_;
  std::map<Event*, std::unique_ptr<Event>> events_;
  uint32_t next_queue_ = 1;
  bool has_managed_ = false;
  std::set<uint64_t> mirrored_pages_;  // host pages mapped for managed memory (page addresses)
  std::map<uint64_t, uint8_t> host_pages_;  // host-accessible managed pages: kHostClean / kHostDirty
  bool revoking_ = false;                   // revoke_host_access is pushing dirty pages
};

}  // namespace gpuvp::cudart
