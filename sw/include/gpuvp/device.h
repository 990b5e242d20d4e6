// gpuvp device interface: the one contract between the host software (sw/driver, sw/cudart)
// and the platform (platform/bridge, the GPU's command processor). Plain C++17 structs with
// fixed sizes and offsets, little-endian, no pointers: both sides, and a QEMU guest, map the
// same bytes.
//
// TRANSPORT (both native and QEMU guests): the platform's bridge is an ivshmem *server*
// speaking QEMU's ivshmem server protocol (docs/specs/ivshmem-spec.rst) on a UNIX socket in a
// private directory (mode 0700, socket 0600). Every client (a native libcudart, or QEMU's
// ivshmem-doorbell device) is a peer; the bridge itself is peer kPlatformPeerId and owns
// eventfds like any peer. The shared-memory fd it hands out is the region described below
// (its size is a power of two: QEMU asserts so). Doorbells: a peer rings another peer's
// vector by writing 1 to that peer's eventfd (QEMU guests: Doorbell register =
// (peer_id << 16) | vector).
//   - client -> platform, vector kVectorCommand: "a queue of my channel has new commands"
//   - platform -> client, vector kVectorCompletion: "a completion was posted to my channel"
// Doorbells are hints: both sides also poll (QEMU guests cannot always take interrupts), so a
// lost doorbell costs latency, never correctness.
//
// REGION LAYOUT (offsets from the start of the shared region):
//   [0, 4 KiB)                RegionHeader: magic, version, geometry, liveness, device info
//   [channels_offset, ...)    kMaxChannels x Channel: one per connected program
//   [window_offset, end)      DMA window: host memory the GPU may touch (pinned buffers,
//                             memcpy staging, managed memory, module images, argument
//                             buffers), split evenly among channels. A channel may only name
//                             host addresses inside its own window slice.
//
// ADDRESSES: "host addresses" in commands are byte offsets from the start of the shared region
// (so they mean the same in every process and in the guest). "Device addresses" are GPU
// virtual addresses returned by kMemMap.
//
// ORDERING: each channel has kQueuesPerChannel command queues (CUDA streams map onto them;
// queue 0 is the legacy default stream). A queue executes its commands in order; queues run
// concurrently. Cross-queue ordering uses semaphores (kSemaphoreSignal / kSemaphoreWait), which
// are 64-bit cells in the client's window slice. Every command produces exactly one
// CompletionRecord on the channel's completion ring, in the order the commands finish.
//
// VALIDATION: the platform validates every field of every command. A bad command gets an
// error completion (Status + message) and the platform keeps serving; it never trusts a
// length, offset, index or handle from shared memory. A channel whose ring indices are
// corrupt is put in kChannelFaulted and its client told so by completion (Status::RingCorrupt).
//
// TIME: the host is untimed. Simulated time advances only while a client waits on the GPU: the
// driver says so with kHostWaiting (naming what it waits for) before it blocks, and resumes only
// once that HostWaiting's completion has arrived -- posted after simulated time stopped and the
// instant settled -- so every command takes effect at a simulated time fixed by the command
// stream alone. A client that only asks whether work is done (cudaStreamQuery, cudaEventQuery)
// sends a HostWaiting bounded in simulated time (d, below; the platform's quantum is in
// RegionHeader::query_quantum_ps), so a program that polls without ever blocking still moves its
// work forward, by at most one quantum per query. The platform reports simulated timestamps in
// completions (for cudaEventElapsedTime).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuvp::device {

inline constexpr uint64_t kMagic = 0x5645'4450'5655'5047ull;  // "GPUVPDEV" little-endian
inline constexpr uint32_t kVersion = 5;  // 2: HostWaiting on one sequence (c), completion after settling
                                         // (MemAdvise and HostAccess were added without a bump:
                                         // an older platform answers them InvalidCommand)
                                         // 3: HostWaiting bounded in simulated time (d),
                                         // RegionHeader::query_quantum_ps
                                         // 4: GetFunction carries the kernel's resources
                                         // (GetFunctionArgs::resources)
                                         // 5: LaunchArgs::launch_flags (kLaunchGraphNode)

inline constexpr int64_t kIvshmemProtocolVersion = 0;  // QEMU ivshmem server protocol
inline constexpr int64_t kPlatformPeerId = 0;          // the bridge; clients get 1, 2, ...
inline constexpr uint32_t kVectors = 2;                // eventfds per peer
inline constexpr uint32_t kVectorCommand = 0;          // rung on the platform by clients
inline constexpr uint32_t kVectorCompletion = 1;       // rung on a client by the platform

inline constexpr uint32_t kMaxChannels = 16;
inline constexpr uint32_t kQueuesPerChannel = 8;
inline constexpr uint32_t kQueueEntries = 256;       // power of two
inline constexpr uint32_t kCompletionEntries = 1024; // power of two
inline constexpr uint32_t kMessageBytes = 120;
inline constexpr uint64_t kHeaderBytes = 4096;

// ---------------------------------------------------------------------------------------------
// Region header, written by the platform before it accepts clients.

enum class PlatformState : uint32_t { Starting = 0, Ready = 1, Stopping = 2 };

// What cudaGetDeviceProperties reports, derived by the platform from its configuration.
struct DeviceInfo {
  char name[64];
  uint32_t compute_capability;       // major*10+minor
  uint32_t sm_count;
  uint32_t max_threads_per_sm;
  uint32_t max_ctas_per_sm;
  uint32_t registers_per_sm;
  uint32_t max_threads_per_block;    // 1024
  uint32_t warp_size;                // 32
  uint32_t l2_bytes;
  uint64_t shared_memory_per_sm;
  uint64_t shared_memory_per_block;
  uint64_t global_memory_bytes;
  uint64_t core_clock_khz;
  uint64_t memory_clock_khz;
  uint32_t memory_bus_width_bits;
  uint32_t fp32_lanes_per_sm;        // FP32 FMA per cycle per SM
  uint32_t fp64_lanes_per_sm;        // FP64 FMA per cycle per SM (0: none)
  uint32_t reserved[11];
};
static_assert(sizeof(DeviceInfo) == 192, "DeviceInfo layout is part of the protocol");

struct RegionHeader {
  uint64_t magic;            // kMagic once the header is valid
  uint32_t version;          // kVersion
  uint32_t header_bytes;     // kHeaderBytes
  uint64_t region_bytes;     // whole shared region, a power of two
  uint64_t channels_offset;  // first Channel
  uint64_t channel_bytes;    // sizeof(Channel)
  uint32_t max_channels;     // kMaxChannels
  uint32_t queues_per_channel;
  uint64_t window_offset;       // DMA window start
  uint64_t window_slice_bytes;  // per channel; channel i owns [window_offset + i*slice, +slice)
  uint32_t platform_state;      // PlatformState
  uint32_t platform_pid;
  uint64_t heartbeat;           // incremented by the platform at least every 100 ms while alive
  DeviceInfo device;
  uint64_t query_quantum_ps;    // simulated time one query of unfinished work may let pass
                                // (knob host.query_quantum): the d of a query's HostWaiting
  uint8_t reserved[kHeaderBytes - 80 - sizeof(DeviceInfo) - 8];
};
static_assert(sizeof(RegionHeader) == kHeaderBytes, "RegionHeader is one page");
static_assert(offsetof(RegionHeader, heartbeat) == 72, "RegionHeader layout is part of the protocol");
static_assert(offsetof(RegionHeader, device) == 80, "RegionHeader layout is part of the protocol");
static_assert(offsetof(RegionHeader, query_quantum_ps) == 272, "RegionHeader layout is part of the protocol");

// ---------------------------------------------------------------------------------------------
// Commands: fixed 128-byte records.

enum class Opcode : uint32_t {
  Nop = 0,
  MemMap = 1,           // a: size, b: kind (MemoryKind), c: alignment (0 = 256) -> value0: device address
  MemUnmap = 2,         // a: device address returned by MemMap
  Memcpy = 3,           // a: destination, b: source, c: bytes, d: direction (CopyDirection)
  Memset = 4,           // a: device address, b: bytes, c: byte value (0..255)
  LoadModule = 5,       // a: host address of the PTX text, b: bytes -> value0: module handle
  UnloadModule = 6,     // a: module handle
  GetFunction = 7,      // GetFunctionArgs in the command's body (a: module handle, b: host address
                        // of the name, c: name bytes, d: host address of a kParamLayoutBytes
                        // buffer that receives one ParamLayout per kernel parameter (0: none),
                        // then the kernel's resources as the host read them from its SASS)
                        // -> value0: function handle, value1: (parameter count << 32) | parameter bytes
  GetSymbol = 8,        // a: module handle, b: host address of the name, c: name bytes -> value0: address, value1: size
  Launch = 9,           // LaunchArgs in the command's body
  Prefetch = 10,        // a: device address, b: bytes, c: destination (0 = device, 1 = host)
  SemaphoreSignal = 11, // a: host address of a u64 cell, b: value; writes the value, then the
                        //    simulated time (ps) to the following u64 cell
  SemaphoreWait = 12,   // a: host address of a u64 cell, b: value; the queue stalls until cell >= value
  HostWaiting = 13,     // the client is about to block: simulated time may advance.
                        // a: host address of a u64 cell (0: none), b: value, c: a sequence (0: none),
                        // d: a bound in simulated picoseconds (0: none).
                        //   a != 0: the client blocks until cell >= value;
                        //   a == 0, c != 0: until the command with sequence c has completed (its
                        //     completion is posted; a sequence not in any queue holds at once);
                        //   a == 0, c == 0: until every command it queued before this one has
                        //     completed (the earlier entries of its own queue and, on the other
                        //     queues, every command with a smaller sequence -- so number commands
                        //     in submission order).
                        //   d != 0: OR until simulated time has advanced by d from when the platform
                        //     took the HostWaiting (queries: "let the GPU run for a moment"); the
                        //     condition, and the deadline, are checked in that order.
                        // Taken OUT OF QUEUE ORDER: the platform honours it as soon as it sees it,
                        // on any queue, and lets simulated time advance while the condition does
                        // not hold. Once it holds, simulated time stops there; the platform lets
                        // the current instant's activity settle and only then posts this command's
                        // completion (Ok; value0 = 1 when the condition held when it was posted,
                        // 0 when the bound ended the wait first). A client that resumes only after
                        // that completion therefore issues its next commands at a simulated time
                        // that is a pure function of the command stream (never of how fast the host
                        // ran); every completion of work that finished by then is posted before it.
                        // Simulated time stands still while no client of the platform is waiting.
  Hello = 14,           // first command of a channel: a: client pid; -> value0: channel index.
                        // Turns a Claimed channel Active; anything else on a Claimed channel
                        // gets ChannelUnavailable.
  Goodbye = 15,         // the client is leaving: the platform frees everything the channel owns
                        // and posts the completion; once the client has consumed it (completion
                        // head == tail), or its peer disconnects, the channel becomes Free again
                        // (all ring indices 0, generation + 1).
  MemAdvise = 16,       // cudaMemAdvise on managed memory. a: device address, b: bytes (> 0),
                        // c: advice (MemAdvice), d: location (AdviceLocation; ignored by the
                        // read-mostly advice). The range must lie in one mapping of the channel.
  HostAccess = 17,      // the host is about to access managed memory (the runtime's host-fault
                        // handler): a: device address, b: bytes (> 0), c: HostAccessKind,
                        // d: host address that receives the range's current values (0: none).
                        // The range's managed pages go to the host (or are read-duplicated),
                        // dirty ones written back over PCIe; then the values are copied.
  DeviceHeap = 18,      // in-kernel malloc/free are served from a: device address, b: bytes, a range
                        // inside one MemMap of the channel (cudaLimitMallocHeapSize). Once per
                        // channel: a second one is refused (InvalidCommand). A kernel that calls
                        // malloc before any DeviceHeap gets a default 8 MiB heap the device maps.
  MemMapHost = 19,      // zero copy (cudaHostAlloc / cudaHostRegister, mapped): a: host address (page
                        // aligned, in the channel's window), b: bytes, c: device address to map it at
                        // (page aligned; the runtime passes its own virtual address: unified
                        // addressing) -> value0: the device address. Kernels then read and write the
                        // host's bytes in place (host writes are visible to a running kernel); on the
                        // timing model each access crosses the GMMU's PCIe link. MemUnmap(c) ends it.
                        // (Added without a version bump: an older platform answers InvalidCommand.)
  IpcExport = 20,       // cudaIpcGetMemHandle: a: a device address inside one of the channel's device
                        // (not managed) allocations -> value0: an export id, unique on this platform,
                        // value1: the allocation's base. The export lives as long as the allocation.
  IpcImport = 21,       // cudaIpcOpenMemHandle: a: an export id of ANOTHER channel -> value0: the device
                        // address at which this channel now sees the same memory (same bytes, no
                        // copy), value1: its size. InvalidHandle when the exporter freed the memory
                        // or exited. MemUnmap(value0) closes it; when the exporter frees the memory or
                        // exits first, the import is unmapped (later accesses fault).
  // Inter-process events (cudaIpcGetEventHandle / cudaIpcOpenEventHandle). An exported event's
  // state is its exporter's {value, simulated ps} cell; every program that has the handle records
  // it with a ticket and waits on that cell. (Added without a version bump: an older platform
  // answers InvalidCommand.)
  IpcEventExport = 22,  // a: the event's 16-byte cell in the channel's window, b: the value last
                        // recorded there -> value0: an export id, unique on this platform. The cell
                        // must stay allocated while the channel is open (the runtime keeps it).
  IpcEventImport = 23,  // a: an export id of ANOTHER channel -> Ok, value0: the latest ticket.
                        // InvalidHandle when the exporter has exited or the id names nothing.
  IpcEventTicket = 24,  // a: export id, b: 1 -> value0: a new ticket (the next record's value);
                        // b: 0 -> value0: the latest ticket issued, value1: the value the cell holds
                        // (landed). Taken in queue order: the runtime sends it on its control queue.
  IpcEventSignal = 25,  // a: export id, b: a ticket; in queue order: the exporter's cell takes the
                        // ticket and the simulated time (a ticket below one already signalled
                        // changes nothing).
  IpcEventWait = 26,    // a: export id, b: value; the queue stalls until the exporter's cell holds
                        // at least the value (InvalidHandle when the exporter exits first).
};

// MemAdvise's advice: the numbering of cudaMemoryAdvise.
enum class MemAdvice : uint32_t {
  SetReadMostly = 1,
  UnsetReadMostly = 2,
  SetPreferredLocation = 3,
  UnsetPreferredLocation = 4,
  SetAccessedBy = 5,
  UnsetAccessedBy = 6,
};
enum class AdviceLocation : uint32_t { Device = 0, Host = 1 };
enum class HostAccessKind : uint32_t { Read = 0, Write = 1 };

// GetFunction's optional parameter layout: where each kernel parameter lies in the packed
// argument buffer that Launch takes (LaunchArgs::args_address, args_bytes == parameter bytes).
struct ParamLayout {
  uint32_t offset;  // byte offset in the argument buffer
  uint32_t size;    // bytes
};
static_assert(sizeof(ParamLayout) == 8, "ParamLayout layout is part of the protocol");
inline constexpr uint64_t kParamLayoutBytes = 4096;  // room for 512 parameters

// Where a kernel's resources come from. The host reads them from the SASS image (cubin) of the
// program's fatbin, as a driver fills a launch descriptor; the device validates them and sizes
// occupancy by them (registers per thread, static shared memory, local memory per thread).
enum class ResourceSource : uint32_t {
  NotTold = 0,       // no usable cubin: the platform estimates registers from the PTX and says so
  CubinExact = 1,    // the cubin of the device's own architecture
  CubinNearest = 2,  // the cubin of another minor version of the device's major (one register
                     // file design; a cc 7.0 device running nvcc 13's sm_75 SASS)
};

// Limits the device checks told resources against.
inline constexpr uint32_t kMaxRegistersPerThread = 255;
inline constexpr uint32_t kMaxLocalBytesPerThread = 512 * 1024;  // CUDA's local memory limit per thread

struct KernelResources {
  uint32_t source;                  // ResourceSource; NotTold: every other field is 0
  uint32_t sass_arch;               // the cubin's architecture, major*10+minor (75 = sm_75)
  uint32_t registers_per_thread;    // 1 .. kMaxRegistersPerThread
  uint32_t static_shared_bytes;     // at most the SM's shared memory
  uint32_t local_bytes_per_thread;  // stack frame and spills, at most kMaxLocalBytesPerThread
  uint32_t max_threads_per_block;   // .maxntid / .reqntid product (0: no limit of its own)
};
static_assert(sizeof(KernelResources) == 24, "KernelResources layout is part of the protocol");

struct GetFunctionArgs {
  uint64_t module;          // module handle
  uint64_t name_address;    // host address of the kernel's name
  uint64_t name_bytes;
  uint64_t layout_address;  // host address of a kParamLayoutBytes buffer (0: none)
  KernelResources resources;
};
static_assert(sizeof(GetFunctionArgs) == 56, "GetFunctionArgs layout is part of the protocol");
static_assert(offsetof(GetFunctionArgs, layout_address) == 24, "GetFunctionArgs overlays generic a..d");
static_assert(offsetof(GetFunctionArgs, resources) == 32, "GetFunctionArgs layout is part of the protocol");

// Environment variable through which `gpuvp run` / `gpuvp serve` tell programs the socket path.
inline constexpr const char* kSocketEnvironmentVariable = "GPUVP_SOCKET";

enum class MemoryKind : uint32_t { Device = 0, Managed = 1 };
enum class CopyDirection : uint32_t { HostToDevice = 1, DeviceToHost = 2, DeviceToDevice = 3 };

struct LaunchArgs {
  uint64_t function;            // handle from GetFunction
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
  uint32_t shared_carveout;     // the function's cudaFuncAttributePreferredSharedMemoryCarveout + 1:
                                // 1..101 = 0..100 % of the most shared memory per SM; 0 = no preference
  uint64_t args_address;        // host address of the packed parameter buffer (PTX .param layout)
  uint64_t args_bytes;
  uint64_t printf_address;      // host address of a buffer for the kernel's printf output (0: none)
  uint64_t printf_bytes;        // its capacity; the completion's value0 = bytes written, value1 =
                                // bytes dropped because the buffer was full
  uint32_t max_dynamic_shared_bytes;  // the function's cudaFuncAttributeMaxDynamicSharedMemorySize (0:
                                      // not set); static + dynamic shared above 48 KiB needs it
  uint32_t launch_flags;              // LaunchFlag bits; others are InvalidCommand
};
static_assert(sizeof(LaunchArgs) == 80, "LaunchArgs layout is part of the protocol");
static_assert(offsetof(LaunchArgs, shared_carveout) == 36, "LaunchArgs layout is part of the protocol");
static_assert(offsetof(LaunchArgs, max_dynamic_shared_bytes) == 80 - 8, "LaunchArgs layout is part of the protocol");
// LaunchArgs::launch_flags (version 5).
enum LaunchFlag : uint32_t {
  // cudaLaunchCooperativeKernel: the device refuses (CooperativeLaunchTooLarge) a grid whose CTAs
  // cannot all be resident at once by the occupancy rule (gpuvp/occupancy.h) on every SM,
  // makes them all resident before younger kernels get SMs, and gives the kernel a zeroed grid
  // workspace (8 bytes: u32 size, u32 barrier) whose address it reads from %envreg1 (high word)
  // and %envreg2 (low word), as cooperative_groups' grid sync expects of the driver.
  kLaunchCooperative = 1u << 0,
  // The kernel is a node of a launched CUDA graph: the front end takes it from the uploaded graph,
  // not from a host launch call (gpu.launch.graph_latency replaces gpu.launch.latency).
  kLaunchGraphNode = 1u << 1,
};
inline constexpr uint32_t kKnownLaunchFlags = kLaunchCooperative | kLaunchGraphNode;

// Static + dynamic shared memory a CTA may use without cudaFuncAttributeMaxDynamicSharedMemorySize.
inline constexpr uint32_t kDefaultSharedBytesPerBlock = 48 * 1024;

struct Command {
  uint32_t opcode;     // Opcode
  uint32_t flags;      // 0
  uint64_t sequence;   // chosen by the client, echoed in the completion
  union {
    struct {
      uint64_t a, b, c, d;
    } generic;
    LaunchArgs launch;
    GetFunctionArgs get_function;
    uint8_t raw[112];
  } body;
};
static_assert(sizeof(Command) == 128, "Command is one 128-byte record");

// ---------------------------------------------------------------------------------------------
// Completions.

enum class Status : uint32_t {
  Ok = 0,
  InvalidCommand = 1,        // unknown opcode, bad flags, bad enum value
  InvalidHandle = 2,         // module/function handle not owned by this channel
  InvalidAddress = 3,        // host address outside the channel's window slice, or device
                             // range not mapped by this channel
  OutOfMemory = 4,
  InvalidLaunch = 5,         // illegal grid/block/shared-memory configuration
  IllegalAddress = 6,        // a kernel accessed memory it must not (the message says where)
  KernelTrap = 7,            // trap or __assertfail in a kernel (the message of an assertion
                             // starts with kAssertMessagePrefix)
  ModuleLoadFailed = 8,      // malformed or unsupported PTX (message: file:line:col: ...)
  NotSupported = 9,
  RingCorrupt = 10,          // the channel's indices are inconsistent; the channel is faulted
  ChannelUnavailable = 11,   // no free channel / channel not claimed
  LaunchOutOfResources = 12, // a CTA cannot be resident on an SM by the kernel's told resources
  CooperativeLaunchTooLarge = 13,  // a cooperative grid's CTAs cannot all be resident at once
};

// How a KernelTrap completion's message starts when the trap was a failed device-side assert().
inline constexpr char kAssertMessagePrefix[] = "device-side assert: ";

struct CompletionRecord {
  uint64_t sequence;       // the command's sequence
  uint32_t queue;          // which queue it came from
  uint32_t status;         // Status
  uint64_t value0;
  uint64_t value1;
  uint64_t simulated_ps;   // simulated time at completion
  char message[kMessageBytes];  // NUL-terminated human message for errors
};
static_assert(sizeof(CompletionRecord) == 160, "CompletionRecord layout is part of the protocol");

// ---------------------------------------------------------------------------------------------
// Rings. Single producer, single consumer, free-running 32-bit indices (entry = index % N).
// A command queue: the client produces (writes the entry, then a release-store of `tail`), the
// platform consumes (acquire-load of `tail`, executes, release-store of `head`). The completion
// ring is the reverse. Indices live on their own cache lines.

struct alignas(64) RingIndex {
  uint32_t value;
  uint8_t pad[60];
};
static_assert(sizeof(RingIndex) == 64, "one cache line per index");

struct CommandQueue {
  RingIndex tail;   // written by the client
  RingIndex head;   // written by the platform
  Command entries[kQueueEntries];
};

struct CompletionRing {
  RingIndex tail;   // written by the platform
  RingIndex head;   // written by the client
  CompletionRecord entries[kCompletionEntries];
};

// A Free channel has every ring index at 0. A client claims one (CAS Free -> Claimed), fills
// owner_peer and owner_pid, then queues Hello on queue 0. The platform frees a channel when its
// owner's peer disconnects (even mid-kernel: running work is cancelled, device memory and modules
// are released), after Goodbye, or when a Claimed channel names a peer that is not connected.
// Abandoned: written by another client of the SAME peer (a QEMU guest's supervisor, whose
// programs all share the guest's one peer) when the channel's owner process died without
// Goodbye, followed by a command doorbell. The platform then frees the channel as if its peer
// had disconnected (running work cancelled, memory and modules released, state back to Free).
enum class ChannelState : uint32_t { Free = 0, Claimed = 1, Active = 2, Faulted = 3, Abandoned = 4 };

struct alignas(64) ChannelControl {
  uint32_t state;       // ChannelState; a client claims a Free channel by compare-and-swap to Claimed
  uint32_t owner_peer;  // ivshmem peer id of the owner (the platform checks it against doorbells)
  uint32_t owner_pid;
  uint32_t generation;  // incremented by the platform each time the channel is freed
  uint8_t pad[48];
};
static_assert(sizeof(ChannelControl) == 64, "ChannelControl is one cache line");

struct Channel {
  ChannelControl control;
  CompletionRing completions;
  CommandQueue queues[kQueuesPerChannel];
};

// Bytes of the shared region gpuvp creates by default (a power of two, as QEMU requires). The
// region is a memfd: only pages that are touched take memory.
inline constexpr uint64_t kDefaultRegionBytes = uint64_t{1} << 30;

}  // namespace gpuvp::device
