// The process-wide CUDA runtime context of libcudart.so.13: everything the runtime ABI forces
// to be global lives in this one object (created on first use, destroyed at exit). The exported
// C functions (api_*.cpp) lock it and call its members.
#pragma once

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpuvp/device.h"
#include "sw/cubin/cubin.h"
#include "sw/cudart/fatbin.h"
#include "sw/driver/driver.h"

namespace gpuvp::cudart {

struct GraphState;   // graph.h
class GraphAccess;   // graph.h

struct Module {  // one registered fatbin (one translation unit)
  std::optional<Fatbin> fatbin;
  std::string parse_error;
  bool loaded = false;
  cudaError_t load_error = cudaSuccess;
  uint64_t handle = 0;
  bool uses_printf = false;
  bool uses_device_heap = false;    // its PTX declares malloc/free (device_runtime.cpp)
  bool uses_device_launch = false;  // its PTX launches kernels from the device (dynamic parallelism)
  uint32_t ptx_arch = 0;                 // compute_XX of the PTX loaded
  std::optional<cubin::Cubin> cubin;     // the cubin kernel resources come from (Fatbin::best_cubin)
  device::ResourceSource cubin_source = device::ResourceSource::NotTold;
  std::string load_message;              // why the platform refused the PTX (the driver API's JIT log)
};

struct Function {
  Module* module = nullptr;
  const void* host_function = nullptr;
  std::string name;
  bool resolved = false;
  bool refusal_told = false;  // the platform's reason for not resolving it was printed
  uint64_t handle = 0;
  uint32_t param_bytes = 0;
  std::vector<device::ParamLayout> params;
  const cubin::KernelResources* sass = nullptr;  // in module->cubin; null: no cubin has this kernel
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
  unsigned flags = cudaStreamDefault;
  int priority = 0;
  unsigned long long id = 0;  // cudaStreamGetId
};

// A host function in stream order (cudaLaunchHostFunc, cudaStreamAddCallback): the stream's
// queue holds a marker command (`trigger`: the earlier work is done once it completes), then a
// SemaphoreWait on the queue's release cell that holds the later work until the function ran.
struct HostCallback {
  uint64_t trigger = 0;        // sequence of the marker
  uint32_t queue = 0;
  uint64_t release_value = 0;  // written to the queue's release cell once the function returned
  cudaStream_t stream = nullptr;     // as the program named it (cudaStreamAddCallback's argument)
  cudaHostFn_t host_fn = nullptr;    // cudaLaunchHostFunc
  cudaStreamCallback_t callback = nullptr;  // cudaStreamAddCallback
  void* user_data = nullptr;
};

// Runs host functions on a thread of the runtime, one at a time, while the caller waits.
class CallbackThread {
 public:
  CallbackThread();
  ~CallbackThread();
  CallbackThread(const CallbackThread&) = delete;
  CallbackThread& operator=(const CallbackThread&) = delete;
  void run(const std::function<void()>& job);  // returns once `job` has returned
  // True on the callback thread: CUDA calls from a host function are refused (cudaErrorNotPermitted).
  static bool on_callback_thread();

 private:
  void loop();
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* job_ = nullptr;
  bool stop_ = false;
  std::thread thread_;
};

// A stream-ordered memory pool (cudaMallocAsync, cudaMemPool*). Freed blocks stay mapped for
// reuse; a block freed on a stream is reusable by later work of that stream at once, by any
// stream once the free's marker command has completed.
struct MemPool {
  struct FreeBlock {
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint64_t ready = 0;  // sequence of the free's marker (0: free since before any marker)
    uint32_t queue = 0;  // queue of the stream that freed it
  };
  std::vector<FreeBlock> free_blocks;        // in order of freeing
  std::map<uint64_t, uint64_t> live;         // address -> bytes, allocated from this pool
  uint64_t release_threshold = 0;            // cudaMemPoolAttrReleaseThreshold
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  uint64_t reserved_high = 0;
  uint64_t used_high = 0;
  uint64_t reserved() const;
  uint64_t used() const;
};

struct Event {
  uint64_t cell = 0;      // host address of {value, simulated ps}; 0: an opened IPC event (the cell is its exporter's)
  uint64_t value = 0;     // last value recorded
  uint64_t sequence = 0;  // SemaphoreSignal of the last record
  bool disable_timing = false;
  bool interprocess = false;  // cudaEventInterprocess: may get an IPC handle
  uint64_t ipc_id = 0;        // exported or opened: the platform's export id (records and waits go by it)
  uint64_t ipc_wait = 0;      // an IpcEventWait a query left queued, and the ticket it waits for
  uint64_t ipc_wait_value = 0;
};

// Work queued but not yet known complete, and what to do when it completes.
struct Pending {
  uint32_t queue = 0;
  uint64_t release[2] = {0, 0};  // window blocks to free
  uint64_t printf_address = 0;
  std::string what;              // for error messages
};

// What a launch asks beyond <<<...>>> (cudaLaunchCooperativeKernel, cudaLaunchKernelEx's attributes).
struct LaunchOptions {
  bool cooperative = false;      // all CTAs resident at once, grid-wide sync
  int32_t shared_carveout = -2;  // this launch's carve-out percent; -2: the function's attribute
  bool graph_node = false;       // a kernel node of a launched graph (the device applies the graph launch latency)
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
  static const char* error_name(cudaError_t error);  // cudaGetErrorName's answer
  static const char* error_text(cudaError_t error);  // cudaGetErrorString's answer
  cudaError_t peek_last_error() const { return sticky_ != cudaSuccess ? sticky_ : last_error_; }
  void log_unsupported(const char* name);

  // ---- Device.
  cudaError_t ensure_device();  // connects on first use
  const device::DeviceInfo& info() const { return driver_->device_info(); }
  cudaError_t device_properties(cudaDeviceProp* prop);
  cudaError_t device_attribute(int* value, cudaDeviceAttr attr);
  cudaUUID_t device_uuid() const;  // derived from the preset's device name: stable across runs
  // The legacy default stream for nullptr, the calling thread's per-thread default stream for
  // cudaStreamPerThread.
  static cudaStream_t per_thread(cudaStream_t stream) { return stream == nullptr ? cudaStreamPerThread : stream; }
  cudaError_t reset();
  // Counts cudaDeviceReset calls: state kept beside the runtime (api_texture.cpp) is void after one.
  uint64_t reset_count() const { return reset_count_; }
  // cudaDeviceSetLimit/GetLimit (device_runtime.cpp): the device heap's size among them.
  cudaError_t set_limit(cudaLimit limit, std::size_t value);
  cudaError_t get_limit(std::size_t* value, cudaLimit limit);

  // ---- Memory.
  cudaError_t malloc_device(void** ptr, std::size_t bytes);
  // Pinned host memory from the channel's DMA window; beyond what the window holds, pageable
  // memory (said once on stderr: copies from it are staged through the window, synchronously).
  cudaError_t malloc_host(void** ptr, std::size_t bytes, unsigned flags = 0);
  cudaError_t host_register(void* ptr, std::size_t bytes, unsigned flags);
  cudaError_t host_unregister(void* ptr);
  cudaError_t host_flags(unsigned* flags, void* ptr);
  // cudaHostGetDevicePointer: pinned or registered host memory mapped into the device's address
  // space at its own address (unified addressing), mapping it first if it is not yet.
  cudaError_t host_device_pointer(void** device, void* host, unsigned flags);

  // ---- IPC: a device allocation of this program opened by another on the same platform.
  cudaError_t ipc_get_mem_handle(cudaIpcMemHandle_t* handle, void* device);
  cudaError_t ipc_open_mem_handle(void** device, const cudaIpcMemHandle_t& handle, unsigned flags);
  cudaError_t ipc_close_mem_handle(void* device);
  cudaError_t ipc_get_event_handle(cudaIpcEventHandle_t* handle, cudaEvent_t event);
  cudaError_t ipc_open_event_handle(cudaEvent_t* event, const cudaIpcEventHandle_t& handle);
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
  // cudaStreamAttachMemAsync: checks the stream, range and flags. Host access to managed memory
  // is page-fault driven whatever the attachment, so it changes nothing else.
  cudaError_t attach_memory(cudaStream_t stream, void* ptr, std::size_t bytes, unsigned flags);

  // ---- Launch.
  cudaError_t launch(const void* function, dim3 grid, dim3 block, void** args, std::size_t shared, cudaStream_t stream,
                     const LaunchOptions& options = {});
  cudaError_t launch_kernel(Function* function, dim3 grid, dim3 block, void** args, std::size_t shared,
                            cudaStream_t stream, const LaunchOptions& options = {});
  cudaError_t function_attributes(cudaFuncAttributes* attributes, const void* function);
  // CTAs of `function` one SM holds at once, by the device's rule (gpuvp/occupancy.h) with its
  // SASS registers and static shared memory.
  cudaError_t occupancy(int* blocks, const void* function, int block_size, std::size_t shared);
  // cudaOccupancyAvailableDynamicSMemPerBlock: the dynamic shared memory per CTA that still lets
  // `blocks` CTAs of `block_size` threads be resident on one SM.
  cudaError_t available_dynamic_shared(std::size_t* shared, const void* function, int blocks, int block_size);
  void push_configuration(dim3 grid, dim3 block, std::size_t shared, void* stream);
  cudaError_t pop_configuration(dim3* grid, dim3* block, std::size_t* shared, void* stream);

  // ---- Modules loaded at run time (the driver API, sw/cuda_driver_api; runtime_modules.cpp).
  // Loads PTX text (NUL-terminated) or a fatbin container (bare or wrapped) on the device. On
  // failure `log` gets the reason (the platform's file:line:col message for malformed PTX).
  cudaError_t load_image(const void* image, Module** module, std::string* log);
  // Waits for outstanding work, then unloads; the module's functions and globals go with it.
  cudaError_t unload_image(Module* module);
  bool is_loaded_image(const Module* module) const;
  // The kernel `name` of a loaded module (the same Function for the same name); launched with
  // launch_kernel and described by function_attributes like a registered kernel.
  cudaError_t module_function(Function** function, Module& module, const std::string& name);
  bool is_module_function(const Function* function) const;
  cudaError_t module_global(uint64_t* address, std::size_t* bytes, Module& module, const std::string& name);

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
  cudaError_t stream_flags(cudaStream_t stream, unsigned* flags);
  cudaError_t stream_priority(cudaStream_t stream, int* priority);
  cudaError_t stream_id(cudaStream_t stream, unsigned long long* id);
  // A host function in stream order (HostCallback).
  cudaError_t launch_host_function(cudaStream_t stream, HostCallback callback);

  // ---- Stream-ordered allocation.
  MemPool* default_pool() { return &default_pool_; }
  MemPool* current_pool() { return current_pool_; }
  MemPool* pool_of(cudaMemPool_t pool);  // nullptr for an unknown handle
  cudaError_t pool_create(cudaMemPool_t* pool, const cudaMemPoolProps* props);
  cudaError_t pool_destroy(cudaMemPool_t pool);
  cudaError_t set_current_pool(cudaMemPool_t pool);
  cudaError_t malloc_async(void** ptr, std::size_t bytes, MemPool& pool, cudaStream_t stream);
  cudaError_t free_async(void* ptr, cudaStream_t stream);
  cudaError_t pool_trim(MemPool& pool, std::size_t keep_bytes);
  cudaError_t pool_attribute(MemPool& pool, cudaMemPoolAttr attr, void* value, bool set);

 private:
  Stream* stream_of(cudaStream_t stream);  // nullptr for an unknown handle
  Event* event_of(cudaEvent_t event);
  // An IPC event's latest ticket (value0) and what its cell holds (value1); lost: the platform is gone.
  driver::Completion ipc_event_state(const Event& event);
  // Queues (once per ticket) an IpcEventWait for the event's latest ticket on the control queue: its
  // sequence, 0 when there is nothing to wait for, nullopt when the handle or the platform is gone.
  std::optional<uint64_t> ipc_event_wait(Event& event);
  // Queues a command on `stream`'s queue after the legacy-stream dependencies it needs.
  uint64_t submit(Stream& stream, device::Command command, Pending pending);
  uint64_t submit_raw(uint32_t queue, device::Command command, Pending pending);
  driver::Completion call(uint32_t queue, const device::Command& command);  // synchronous
  // Waits, then completes everything that arrived. Host functions queued before `sequence` run
  // first, in submission order (run_host_functions).
  cudaError_t wait_for(uint64_t sequence);
  cudaError_t wait_without_host_functions(uint64_t sequence);
  // Runs the host functions queued before `before` (every one for UINT64_MAX), each once its
  // marker has completed, letting the device run meanwhile; when `poll`, for at most one query
  // quantum (cudaErrorNotReady when one is still unfinished then). Dependencies only ever point
  // from earlier submissions to later ones, so the oldest one's marker can always complete.
  cudaError_t run_host_functions(uint64_t before, bool poll);
  cudaError_t run_host_function(const HostCallback& callback);
  Stream& per_thread_stream();
  // Unmaps the pool's free blocks that no queued work may still use, down to `keep_bytes` kept.
  void release_pool_blocks(MemPool& pool, uint64_t keep_bytes);
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
  // Host access to managed memory (docs/unified-memory.md, "Host access"). Managed pages the host may touch
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
  std::map<const void*, std::unique_ptr<Function>> functions_;  // by host stub (module_function's: by itself)
  std::map<const void*, std::unique_ptr<Variable>> variables_;  // by host shadow (module_global's: by itself)
  std::set<std::string> unsupported_logged_;
  struct LaunchConfig {
    dim3 grid, block;
    std::size_t shared = 0;
    void* stream = nullptr;
  };
  // The <<<...>>> configurations pushed and not yet popped, per host thread: threads launching
  // at the same time must each pop their own.
  std::vector<LaunchConfig>& configurations();

  cudaError_t last_error_ = cudaSuccess;
  cudaError_t sticky_ = cudaSuccess;
  cudaError_t deferred_ = cudaSuccess;  // an asynchronous error reported by the next call
  bool init_attempted_ = false;
  cudaError_t init_error_ = cudaSuccess;
  std::unique_ptr<driver::Driver> driver_;
  // CUDA graphs and stream capture (graph.h): GraphAccess works on these and the members above.
  friend class GraphAccess;
  std::unique_ptr<GraphState> graphs_;
  bool capture_active_ = false;  // some stream captures: stream-ordered calls ask the graph code first

  std::map<uint64_t, Allocation> allocations_;     // device address -> allocation
  std::map<uint64_t, uint64_t> host_allocations_;  // host address -> bytes (pinned)
  struct HostRange {
    uint64_t bytes = 0;
    unsigned flags = 0;
  };
  std::map<uint64_t, HostRange> host_alloc_flags_;  // pointer -> cudaHostAlloc's flags (window or pageable)
  std::map<uint64_t, uint64_t> pageable_pinned_;     // pointer -> bytes: cudaMallocHost beyond the window
  std::map<uint64_t, HostRange> registered_;        // pointer -> cudaHostRegister range
  // Zero copy. Host memory the device maps at the same address (MemMapHost): page-aligned base
  // -> pages and, for registered memory, the window block its pages were moved into (the
  // program's own pages are replaced by a second mapping of that block, so both see one copy).
  struct HostMapping {
    uint64_t bytes = 0;
    uint64_t window = 0;      // host address (window offset) of the pages
    bool registered = false;  // the program's memory aliased onto the window block
    uint64_t device = 0;      // where cudaHostGetDevicePointer's pointers lie (kHostMapBase + slice offset)
  };
  std::map<uint64_t, HostMapping> host_mappings_;
  struct IpcOpened {
    uint64_t base = 0;   // the import's device address (IpcImport)
    uint64_t bytes = 0;
  };
  std::map<uint64_t, IpcOpened> ipc_opened_;  // pointer handed out -> its import
  // Maps [pointer, pointer + bytes) of a pinned allocation or a registration for the device.
  cudaError_t map_for_device(uint64_t pointer, uint64_t bytes);
  // Undoes map_for_device for the mapping at `base` (its memory keeps its values).
  cudaError_t unmap_for_device(uint64_t base);
  bool pageable_pinned_logged_ = false;
  std::map<uint64_t, Pending> pending_;            // sequence -> pending op
  uint64_t last_on_queue_[device::kQueuesPerChannel] = {};
  uint64_t queue_cells_ = 0;                       // host address: one {value, ps} per queue
  uint64_t queue_signal_[device::kQueuesPerChannel] = {};
  Stream legacy_{0, true};
  std::map<Stream*, std::unique_ptr<Stream>> streams_;
  std::map<std::thread::id, std::unique_ptr<Stream>> per_thread_streams_;
  unsigned long long next_stream_id_ = 1;
  std::deque<HostCallback> host_callbacks_;       // queued, not yet run; in submission order
  uint64_t release_cells_ = 0;                    // host address: one {value, ps} release cell per queue
  uint64_t release_value_[device::kQueuesPerChannel] = {};
  std::unique_ptr<CallbackThread> callback_thread_;
  // Host functions must run even when the program never waits on the device (it may wait for
  // them on a host barrier): once host functions are queued, this thread checks every
  // kProgressTick whether the program has submitted or waited since the last check; if not, it
  // waits for them itself (said once on stderr: simulated time then depends on when).
  void progress_loop();
  std::thread progress_thread_;
  std::mutex progress_mutex_;
  std::condition_variable progress_stop_;
  bool progress_stopping_ = false;
  uint64_t activity_ = 0;  // submissions and waits, counted while the runtime is locked
  bool progress_logged_ = false;
  MemPool default_pool_;
  MemPool* current_pool_ = &default_pool_;
  std::map<MemPool*, std::unique_ptr<MemPool>> pools_;  // created pools
  std::map<uint64_t, MemPool*> pool_allocations_;       // address -> pool, live or free in a pool
  std::map<Event*, std::unique_ptr<Event>> events_;
  uint32_t next_queue_ = 1;
  bool has_managed_ = false;
  std::set<uint64_t> mirrored_pages_;  // host pages mapped for managed memory (page addresses)
  std::map<uint64_t, uint8_t> host_pages_;  // host-accessible managed pages: kHostClean / kHostDirty
  bool revoking_ = false;                   // revoke_host_access is pushing dirty pages
  uint64_t reset_count_ = 0;

  // ---- Device runtime (device_runtime.cpp).
  // Maps the device heap (heap_limit_ bytes) and names it to the device with DeviceHeap, before
  // the first launch of a module that calls malloc; fixed from then on, as in CUDA.
  cudaError_t establish_device_heap();
  // What the module's PTX needs from the device runtime (sets Module::uses_device_*).
  static void scan_device_runtime_use(Module& module, const std::string& ptx);
  // The PTX of every prelinked translation unit of architecture `arch` as one module (empty when
  // there is only one): the later units' headers dropped, their string constants renamed apart.
  static std::string link_ptx_units(const Fatbin& fatbin, uint32_t arch);
  // Resolves every kernel of a module that launches kernels from the device, so that child
  // grids are sized by their SASS resources too.
  void resolve_device_launch_targets(Module& module);
  bool is_device_heap(uint64_t address, std::size_t bytes) const {
    return heap_address_ != 0 && address >= heap_address_ && address - heap_address_ <= heap_limit_ &&
           bytes <= heap_limit_ - (address - heap_address_);
  }
  std::size_t heap_limit_ = std::size_t{8} << 20;  // cudaLimitMallocHeapSize: CUDA's default 8 MiB
  uint64_t heap_address_ = 0;                      // 0: not established
  std::size_t stack_limit_ = 1024;
  std::size_t printf_fifo_limit_ = std::size_t{1} << 20;
  std::size_t sync_depth_limit_ = 2;        // cudaLimitDevRuntimeSyncDepth (CUDA's default)
  std::size_t pending_launch_limit_ = 2048; // cudaLimitDevRuntimePendingLaunchCount (CUDA's default)
};

}  // namespace gpuvp::cudart
