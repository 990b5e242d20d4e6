#include "platform/bridge/bridge.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <set>
#include <utility>

#include "models/gpu/command_processor/transactions.h"

namespace gpuvp::bridge {
namespace {

using device::ChannelState;
using device::Opcode;
using device::Status;

constexpr uint32_t kQueues = device::kQueuesPerChannel;
// Completions a channel may have beyond its full ring before its queues pause. A driver drains its
// ring whenever it waits, so it never has more unread completions than it can have commands queued:
// with this many the pause never touches it (it would come at a simulated time set by how fast the
// host reads), and it still bounds the memory a client that never reads can cost.
constexpr size_t kMaxPendingCompletions = size_t{device::kQueuesPerChannel} * device::kQueueEntries;
constexpr size_t kWorkerStackBytes = 8u << 20;  // the functional executor runs on these stacks
constexpr size_t kServiceStackBytes = 1u << 20;
constexpr uint32_t kOpcodeCount = 27;

const char* const kOpcodeNames[kOpcodeCount] = {
    "nop",         "mem_map",  "mem_unmap", "memcpy",           "memset",         "load_module",
    "unload_module", "get_function", "get_symbol", "launch",     "prefetch",       "semaphore_signal",
    "semaphore_wait", "host_waiting", "hello",   "goodbye",      "mem_advise", "host_access",
    "device_heap", "mem_map_host", "ipc_export", "ipc_import", "ipc_event_export", "ipc_event_import",
    "ipc_event_ticket", "ipc_event_signal", "ipc_event_wait"};
static_assert(static_cast<uint32_t>(Opcode::IpcEventWait) + 1 == kOpcodeCount, "a name for every opcode");

uint32_t u32(ChannelState state) { return static_cast<uint32_t>(state); }

// Why a queue's tail cannot be trusted: more than one ring ahead of (or behind) its head.
std::string tail_out_of_range(uint32_t queue, uint32_t tail, uint32_t head) {
  return "queue " + std::to_string(queue) + ": tail " + std::to_string(tail) + " is not within " +
         std::to_string(device::kQueueEntries) + " entries of head " + std::to_string(head);
}

}  // namespace

device::DeviceInfo make_device_info(const PlatformParams& p) {
  device::DeviceInfo info{};
  std::strncpy(info.name, p.device.name.c_str(), sizeof info.name - 1);
  info.compute_capability = p.device.compute_capability;
  info.sm_count = p.sm.count;
  info.max_threads_per_sm = p.sm.max_threads;
  info.max_ctas_per_sm = p.sm.max_ctas;
  info.registers_per_sm = p.sm.registers;
  info.max_threads_per_block = std::min<uint32_t>(1024, p.sm.max_threads);
  info.warp_size = 32;
  info.l2_bytes = static_cast<uint32_t>(std::min<uint64_t>(p.l2.capacity_bytes(), UINT32_MAX));
  info.shared_memory_per_sm = p.sm.shared_memory_bytes;
  info.shared_memory_per_block = std::min<uint64_t>(48 * 1024, p.sm.shared_memory_bytes);
  info.global_memory_bytes = p.hbm.capacity_bytes;
  info.core_clock_khz = static_cast<uint64_t>(std::llround(p.sm.clock_hz / 1e3));
  info.memory_clock_khz = static_cast<uint64_t>(std::llround(p.hbm.clock_hz / 1e3));
  info.memory_bus_width_bits = static_cast<uint32_t>(p.hbm.stacks * p.hbm.bus_width_bits_per_stack());
  info.fp32_lanes_per_sm = p.sm.fp32_lanes;
  info.fp64_lanes_per_sm = p.sm.fp64_lanes;
  return info;
}

// Carries wake-ups from the I/O thread into the simulation (async_request_update is the one
// thread-safe entry into a SystemC kernel).
class Bridge::Wake : public sc_core::sc_prim_channel {
 public:
  explicit Wake(const char* name) : sc_prim_channel(name) {}
  const sc_core::sc_event& event() const { return event_; }
  void wake() { async_request_update(); }

 private:
  void update() override { event_.notify(sc_core::SC_ZERO_TIME); }
  sc_core::sc_event event_;
};

struct Bridge::Slot {
  enum class Phase { Free, Claimed, Active, Faulted, Closing };
  using Wait = Bridge::Condition;
  Phase phase = Phase::Free;
  int64_t peer = -1;  // owner, known from Hello on
  uint64_t epoch = 0;
  uint32_t in_flight = 0;
  bool draining = false;
  bool goodbye_running = false;
  bool goodbye_done = false;
  std::array<uint32_t, kQueues> head{};
  std::array<uint32_t, kQueues> scanned{};
  std::array<uint32_t, kQueues> released{};  // the queue's workers may fetch up to here
  uint32_t completion_tail = 0;
  std::deque<device::CompletionRecord> pending;
  std::vector<Wait> waits;
  std::set<std::pair<uint32_t, uint32_t>> registered;  // HostWaiting entries (queue, index) already taken
  // Each queue's SemaphoreWait in progress (cell 0: none), woken only once its cell holds the value.
  struct Semaphore {
    uint64_t cell = 0;
    uint64_t value = 0;
    uint64_t ipc_event = 0;  // IpcEventWait: the export whose cell (another channel's) it watches
  };
  std::array<Semaphore, kQueues> semaphores{};
  // When the device's writes into the window (PCIe posted writes, host_access) have all landed.
  // Cells -- SemaphoreWait's and HostWaiting's -- are judged only from then on, so a wall-clock
  // poll never sees a write before its simulated arrival.
  uint64_t writes_land_ps = 0;
  bool writes_landing = false;  // some have not been judged yet
  sc_core::sc_event work[kQueues];
  sc_core::sc_event semaphore_ready[kQueues];
  sc_core::sc_event changed;

  void reset() {
    phase = Phase::Free;
    peer = -1;
    ++epoch;
    goodbye_running = goodbye_done = false;
    head.fill(0);
    scanned.fill(0);
    released.fill(0);
    completion_tail = 0;
    pending.clear();
    waits.clear();
    registered.clear();
    semaphores.fill({});
    writes_land_ps = 0;
    writes_landing = false;
  }
};

struct Bridge::Stats {
  stats::Counter* peers_connected;
  stats::Counter* peers_disconnected;
  stats::Counter* doorbells_received;
  stats::Counter* doorbells_sent;
  stats::Counter* polls;
  stats::Counter* commands;
  stats::Counter* unknown_opcodes;
  stats::Counter* per_opcode[kOpcodeCount];
  stats::Counter* completions;
  stats::Counter* errors;
  stats::Counter* ring_faults;
  stats::Counter* channels_opened;
  stats::Counter* channels_released;
  stats::Counter* channels_abandoned;
  stats::Counter* host_waits;
  stats::Counter* host_waits_bounded;
  stats::Counter* host_waits_expired;

  explicit Stats(stats::Registry& registry) {
    stats::Group& g = registry.group("bridge");
    peers_connected = &g.counter("peers_connected", "peer", "ivshmem clients that connected");
    peers_disconnected = &g.counter("peers_disconnected", "peer", "ivshmem clients whose socket closed");
    doorbells_received = &g.counter("doorbells_received", "doorbell", "command doorbells rung on the platform");
    doorbells_sent = &g.counter("doorbells_sent", "doorbell", "completion doorbells rung on clients");
    polls = &g.counter("polls", "poll", "periodic polls of the command queues (doorbells are hints)");
    commands = &g.counter("commands", "command", "commands fetched from the channels' queues");
    unknown_opcodes = &g.counter("commands_unknown", "command", "commands with an unknown opcode");
    for (uint32_t i = 0; i < kOpcodeCount; ++i) {
      per_opcode[i] = &g.counter(std::string("commands_") + kOpcodeNames[i], "command",
                                 std::string("commands with opcode ") + kOpcodeNames[i]);
    }
    completions = &g.counter("completions", "record", "completion records posted");
    errors = &g.counter("errors", "record", "completion records with an error status");
    ring_faults = &g.counter("ring_faults", "channel", "channels faulted for inconsistent ring indices");
    channels_opened = &g.counter("channels_opened", "channel", "channels opened by Hello");
    channels_released = &g.counter("channels_released", "channel",
                                   "channels returned to Free (Goodbye consumed, or the client disconnected)");
    channels_abandoned = &g.counter("channels_abandoned", "channel",
                                    "channels freed because a client of the same peer marked them Abandoned");
    host_waits = &g.counter("host_waits", "wait", "HostWaiting commands (simulated time advanced for them)");
    host_waits_bounded = &g.counter("host_waits_bounded", "wait",
                                    "HostWaiting commands bounded in simulated time (queries of unfinished work)");
    host_waits_expired = &g.counter("host_waits_expired", "wait",
                                    "bounded HostWaiting commands whose bound ended them before their condition held");
  }
};

Bridge::Bridge(sc_core::sc_module_name name, const PlatformParams& params, stats::Registry& stats)
    : sc_module(name), command_out("command_out"), host_memory("host_memory"), params_(params),
      region_(params.bridge.region_bytes, make_device_info(params),
              static_cast<uint64_t>(std::max<int64_t>(1, std::llround(params.host.query_quantum_ps)))),
      wake_(std::make_unique<Wake>("wake")),
      stats_(std::make_unique<Stats>(stats)) {
  host_memory.register_b_transport(this, &Bridge::host_access);
  host_memory.register_transport_dbg(this, &Bridge::host_debug);
  host_memory.register_get_direct_mem_ptr(this, &Bridge::host_direct);
  for (auto& flag : cancelled_) flag = false;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error("gpuvp bridge: eventfd failed");
  const auto period = std::chrono::milliseconds(
      std::max<int64_t>(1, static_cast<int64_t>(std::llround(params.bridge.poll_interval_ps * 1e-9))));
  server_ = std::make_unique<IvshmemServer>(params.bridge.socket_dir, region_.fd(), device::kVectors, period,
                                            static_cast<IvshmemServer::Listener&>(*this));

  for (uint32_t c = 0; c < device::kMaxChannels; ++c) slots_[c] = std::make_unique<Slot>();
  sc_core::sc_spawn_options service_options;
  service_options.set_stack_size(kServiceStackBytes);
  sc_core::sc_spawn([this] { service(); }, "service", &service_options);
  sc_core::sc_spawn([this] { deadlines(); }, "deadlines", &service_options);
  sc_core::sc_spawn_options worker_options;
  worker_options.set_stack_size(kWorkerStackBytes);
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
    for (uint32_t q = 0; q < kQueues; ++q) {
      const std::string process = "channel" + std::to_string(c) + "_queue" + std::to_string(q);
      sc_core::sc_spawn([this, c, q] { worker(c, q); }, process.c_str(), &worker_options);
    }
  }
}

Bridge::~Bridge() {
  shut_down();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Bridge::start() {
  region_.set_state(device::PlatformState::Ready);
  server_->start();
}

void Bridge::shut_down() {
  if (server_ == nullptr) return;
  region_.set_state(device::PlatformState::Stopping);
  server_.reset();  // joins the I/O thread; clients see their sockets close
}

const std::string& Bridge::socket_path() const {
  static const std::string none;
  return server_ != nullptr ? server_->socket_path() : none;
}

void Bridge::clear_wake() {
  uint64_t value = 0;
  [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &value, sizeof value);
}

void Bridge::request_stop() {
  if (server_ != nullptr) {
    server_->request_stop();
  } else {
    stop_requested_ = true;
  }
}

PlatformActivity Bridge::activity() const {
  PlatformActivity a;
  a.peers_connected = peers_connected_;
  a.peers_seen = peers_seen_;
  a.channels_active = channels_active_;
  a.channels_released = channels_released_;
  a.commands_completed = commands_completed_;
  a.kernels_started = kernels_started_;
  a.doorbells_received = doorbells_total_;
  return a;
}

// ------------------------------------------------------------------ I/O thread

void Bridge::poke() {
  wake_->wake();
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void Bridge::peer_joined(int64_t peer) {
  ++peers_connected_;
  ++peers_seen_;
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    events_.push_back({true, peer});
  }
  poke();
}

void Bridge::peer_left(int64_t peer) {
  --peers_connected_;
  // Stop the dead program's kernels now, even while the simulation thread is inside one.
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
    cancel_now(c, [peer](const device::ChannelControl& control) {
      return load_acquire(control.state) != u32(ChannelState::Free) && int64_t{load_acquire(control.owner_peer)} == peer;
    });
  }
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    events_.push_back({false, peer});
  }
  poke();
}

void Bridge::doorbell(uint32_t vector) {
  if (vector == device::kVectorCommand) {
    ++doorbells_pending_;
    ++doorbells_total_;
    // An abandoned channel's kernels stop now, even while the simulation thread is inside one.
    for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
      cancel_now(c, [](const device::ChannelControl& control) {
        return load_acquire(control.state) == u32(ChannelState::Abandoned);
      });
    }
  }
  poke();
}

void Bridge::cancel_now(uint32_t channel, const std::function<bool(const device::ChannelControl&)>& doomed) {
  const device::ChannelControl& control = region_.channel(channel).control;
  const uint32_t generation = load_acquire(control.generation);
  if (!doomed(control)) return;
  cancelled_[channel] = true;
  // The simulation thread may have released the channel meanwhile (its generation moves first),
  // and another program claimed it: that one's kernels are not to be stopped.
  if (load_acquire(control.generation) != generation) cancelled_[channel] = false;
}

void Bridge::tick() {
  region_.beat();
  tick_pending_ = true;
  poke();
}

void Bridge::stop_asked() {
  stop_requested_ = true;
  poke();
}

// ------------------------------------------------------------------ SystemC side

void Bridge::service() {
  for (;;) {
    service_pass();
    sc_core::wait(wake_->event() | pass_needed_);
  }
}

void Bridge::service_pass() {
  std::vector<IoEvent> events;
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    events.swap(events_);
  }
  for (const IoEvent& event : events) {
    if (event.joined) {
      connected_.insert(std::upper_bound(connected_.begin(), connected_.end(), event.peer), event.peer);
      ++*stats_->peers_connected;
      continue;
    }
    connected_.erase(std::remove(connected_.begin(), connected_.end(), event.peer), connected_.end());
    ++*stats_->peers_disconnected;
    for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
      Slot& s = *slots_[c];
      if (s.phase == Slot::Phase::Free || s.phase == Slot::Phase::Closing) continue;
      const int64_t owner = s.peer >= 0 ? s.peer : int64_t{load_acquire(region_.channel(c).control.owner_peer)};
      if (owner == event.peer) begin_release(c);
    }
  }
  *stats_->doorbells_received += doorbells_pending_.exchange(0);
  const bool ticked = tick_pending_.exchange(false);
  if (ticked) {
    ++*stats_->polls;
  }
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) scan_channel(c);
  // Hand control back to the thread running the simulation now and then (stop conditions).
  if (ticked || stop_requested_) sc_core::sc_pause();
  update_time_gate();
}

void Bridge::update_time_gate() {
  if (!time_may_advance()) sc_core::sc_pause();  // nobody waits: time stands still from here
}

void Bridge::attach(uint32_t channel) {
  Slot& s = *slots_[channel];
  s.reset();
  cancelled_[channel] = false;  // a late doorbell may have marked the previous owner's channel
  s.phase = Slot::Phase::Claimed;
  ++channels_active_;
}

bool Bridge::rings_consistent(uint32_t channel, std::string& problem) {
  Slot& s = *slots_[channel];
  device::Channel& ch = region_.channel(channel);
  for (uint32_t q = 0; q < kQueues; ++q) {
    const uint32_t tail = load_acquire(ch.queues[q].tail.value);
    if (tail - s.head[q] > device::kQueueEntries) {
      problem = tail_out_of_range(q, tail, s.head[q]);
      return false;
    }
    if (load_acquire(ch.queues[q].head.value) != s.head[q]) {
      problem = "queue " + std::to_string(q) + ": head overwritten by the client";
      return false;
    }
  }
  const uint32_t head = load_acquire(ch.completions.head.value);
  if (s.completion_tail - head > device::kCompletionEntries) {
    problem = "completion ring: head " + std::to_string(head) + " is not within " +
              std::to_string(device::kCompletionEntries) + " entries of tail " + std::to_string(s.completion_tail);
    return false;
  }
  if (load_acquire(ch.completions.tail.value) != s.completion_tail) {
    problem = "completion ring: tail overwritten by the client";
    return false;
  }
  return true;
}

void Bridge::scan_channel(uint32_t channel) {
  Slot& s = *slots_[channel];
  device::Channel& ch = region_.channel(channel);
  const uint32_t state = load_acquire(ch.control.state);
  if (state == u32(ChannelState::Abandoned) && s.phase != Slot::Phase::Closing) {
    // Its owner died; another process of the same peer said so (device.h).
    if (s.phase == Slot::Phase::Free) attach(channel);
    ++*stats_->channels_abandoned;
    begin_release(channel);
    return;
  }
  switch (s.phase) {
    case Slot::Phase::Free:
      if (state != u32(ChannelState::Claimed)) return;
      attach(channel);
      break;
    case Slot::Phase::Faulted:
      return;
    case Slot::Phase::Closing:
      if (s.in_flight == 0) finish_release(channel);
      return;
    default:
      break;
  }
  const uint32_t expected = s.phase == Slot::Phase::Claimed ? u32(ChannelState::Claimed) : u32(ChannelState::Active);
  if (state != expected) {
    fault(channel, "channel state changed to " + std::to_string(state) + " behind the platform's back");
    return;
  }
  std::string problem;
  if (!rings_consistent(channel, problem)) {
    fault(channel, problem);
    return;
  }
  flush(channel);
  if (s.goodbye_done) {
    if (s.pending.empty() && load_acquire(ch.completions.head.value) == s.completion_tail) begin_release(channel);
    return;
  }
  // HostWaiting is honoured out of queue order: take every new one, wherever it sits in its queue.
  // The client may move a tail at any moment (also since rings_consistent read it): each tail is
  // read once and judged again here, and the scan never walks backwards or past one ring's worth.
  if (s.phase == Slot::Phase::Active) {
    for (uint32_t q = 0; q < kQueues; ++q) {
      const uint32_t tail = load_acquire(ch.queues[q].tail.value);
      if (tail - s.head[q] > device::kQueueEntries) {
        fault(channel, tail_out_of_range(q, tail, s.head[q]));
        return;
      }
      uint32_t position = static_cast<int32_t>(s.scanned[q] - s.head[q]) > 0 ? s.scanned[q] : s.head[q];
      for (; static_cast<int32_t>(tail - position) > 0; ++position) {
        const device::Command& entry = ch.queues[q].entries[position % device::kQueueEntries];
        if (__atomic_load_n(&entry.opcode, __ATOMIC_RELAXED) == static_cast<uint32_t>(Opcode::HostWaiting) &&
            s.registered.count({q, position}) == 0) {
          device::Command copy;
          std::memcpy(&copy, &entry, sizeof copy);
          if (copy.opcode == static_cast<uint32_t>(Opcode::HostWaiting)) register_wait(channel, q, position, copy);
        }
      }
      s.scanned[q] = position;
    }
  }
  // New commands are handed to the queues' workers only while the client is blocked: a HostWaiting
  // of it is unanswered (or it filled a queue, so its driver waits for room). Everything it queued
  // until then is released in one pass, so what the platform starts together -- and in which order
  // at the current instant -- is a function of the command stream, never of how the client's writes
  // and this thread's passes happened to interleave in wall-clock time. An answered HostWaiting
  // that still sits in its queue behind a running command (it names a command of another queue)
  // blocks nothing: its client is running again.
  // (A Claimed channel's commands -- Hello, or refusals -- never touch the GPU: they go at once.)
  bool client_blocked = !s.waits.empty() || s.phase == Slot::Phase::Claimed;
  for (uint32_t q = 0; q < kQueues && !client_blocked; ++q) {
    client_blocked = load_acquire(ch.queues[q].tail.value) - s.head[q] >= device::kQueueEntries;
  }
  if (client_blocked) {
    for (uint32_t q = 0; q < kQueues; ++q) {
      const uint32_t tail = load_acquire(ch.queues[q].tail.value);
      if (tail == s.head[q]) continue;
      s.released[q] = tail;
      s.work[q].notify(sc_core::SC_ZERO_TIME);
    }
  }
  // Cells are judged once the device's writes into the window have landed (this pass runs then),
  // and what the host wrote counts while it is blocked: a running host's write is taken with the
  // commands it queues before it next waits, never at a pass that wall-clock time happened to bring.
  bool judge_cells = client_blocked;
  if (s.writes_landing) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now < s.writes_land_ps) {
      pass_needed_.notify(sc_core::sc_time::from_value(s.writes_land_ps - now));
      judge_cells = false;
    } else {
      s.writes_landing = false;
      judge_cells = true;
    }
  }
  if (judge_cells) wake_semaphores(channel);
  evaluate_waits(channel);
}

void Bridge::fault(uint32_t channel, const std::string& problem) {
  Slot& s = *slots_[channel];
  device::Channel& ch = region_.channel(channel);
  s.phase = Slot::Phase::Faulted;
  store_release(ch.control.state, u32(ChannelState::Faulted));
  drop_ipc_events(channel);
  cancelled_[channel] = true;
  waiting_clients_ -= static_cast<uint32_t>(s.waits.size());
  s.waits.clear();
  s.pending.clear();
  // The ring cannot be trusted: write the record where our own tail says and move on.
  device::CompletionRecord record{};
  record.status = static_cast<uint32_t>(Status::RingCorrupt);
  record.simulated_ps = sc_core::sc_time_stamp().value();
  std::snprintf(record.message, sizeof record.message, "ring corrupt: %s", problem.c_str());
  ch.completions.entries[s.completion_tail % device::kCompletionEntries] = record;
  ++s.completion_tail;
  store_release(ch.completions.tail.value, s.completion_tail);
  ++*stats_->ring_faults;
  ++*stats_->completions;
  ++*stats_->errors;
  ++commands_completed_;
  const int64_t owner = s.peer >= 0 ? s.peer : int64_t{load_acquire(ch.control.owner_peer)};
  if (server_ != nullptr && server_->ring(owner, device::kVectorCompletion)) ++*stats_->doorbells_sent;
  s.changed.notify(sc_core::SC_ZERO_TIME);
  for (auto& event : s.semaphore_ready) event.notify(sc_core::SC_ZERO_TIME);  // they end
  update_time_gate();
}

void Bridge::begin_release(uint32_t channel) {
  Slot& s = *slots_[channel];
  if (s.phase == Slot::Phase::Free || s.phase == Slot::Phase::Closing) return;
  s.phase = Slot::Phase::Closing;
  drop_ipc_events(channel);
  cancelled_[channel] = true;
  waiting_clients_ -= static_cast<uint32_t>(s.waits.size());
  s.waits.clear();
  if (s.in_flight > 0) {
    // Let its in-flight work run out (cancelled kernels stop at their next memory access).
    s.draining = true;
    ++draining_channels_;
    s.changed.notify(sc_core::SC_ZERO_TIME);
    for (auto& event : s.work) event.notify(sc_core::SC_ZERO_TIME);
    for (auto& event : s.semaphore_ready) event.notify(sc_core::SC_ZERO_TIME);  // they end
  } else {
    finish_release(channel);
  }
  update_time_gate();
}

void Bridge::finish_release(uint32_t channel) {
  Slot& s = *slots_[channel];
  if (s.draining) {
    s.draining = false;
    --draining_channels_;
  }
  if (!s.goodbye_done) {
    // Free what the context owns (device memory, modules) as Goodbye would.
    device::Command goodbye{};
    goodbye.opcode = static_cast<uint32_t>(Opcode::Goodbye);
    device::CompletionRecord record{};
    std::string message;
    forward(channel, 0, goodbye, record, message);
  }
  device::Channel& ch = region_.channel(channel);
  for (uint32_t q = 0; q < kQueues; ++q) {
    store_release(ch.queues[q].tail.value, 0u);
    store_release(ch.queues[q].head.value, 0u);
  }
  store_release(ch.completions.tail.value, 0u);
  store_release(ch.completions.head.value, 0u);
  store_release(ch.control.owner_peer, 0u);
  store_release(ch.control.owner_pid, 0u);
  store_release(ch.control.generation, load_acquire(ch.control.generation) + 1);
  store_release(ch.control.state, u32(ChannelState::Free));  // last: claimable from here on
  s.reset();
  cancelled_[channel] = false;
  ++*stats_->channels_released;
  ++channels_released_;
  --channels_active_;
  update_time_gate();
}

void Bridge::worker(uint32_t channel, uint32_t queue) {
  Slot& s = *slots_[channel];
  device::CommandQueue& ring = region_.channel(channel).queues[queue];
  for (;;) {
    sc_core::wait(s.work[queue]);
    for (;;) {
      if (s.phase != Slot::Phase::Claimed && s.phase != Slot::Phase::Active) break;
      if (s.goodbye_running || s.goodbye_done || s.pending.size() >= kMaxPendingCompletions) break;
      const uint32_t head = s.head[queue];
      const uint32_t tail = load_acquire(ring.tail.value);
      if (tail == head) break;
      if (tail - head > device::kQueueEntries) {  // corrupt: the service faults the channel
        pass_needed_.notify(sc_core::SC_ZERO_TIME);
        break;
      }
      if (static_cast<int32_t>(s.released[queue] - head) <= 0) break;  // not handed over yet (scan_channel)
      device::Command command;
      std::memcpy(&command, &ring.entries[head % device::kQueueEntries], sizeof command);
      ++s.in_flight;
      process(channel, queue, head, command);
      --s.in_flight;
      s.changed.notify(sc_core::SC_ZERO_TIME);
      pass_needed_.notify(sc_core::SC_ZERO_TIME);
      if (s.phase != Slot::Phase::Claimed && s.phase != Slot::Phase::Active) break;  // closing or faulted
      s.head[queue] = head + 1;
      store_release(ring.head.value, head + 1);
    }
  }
}

void Bridge::process(uint32_t channel, uint32_t queue, uint32_t index, const device::Command& command) {
  Slot& s = *slots_[channel];
  ++*stats_->commands;
  if (command.opcode < kOpcodeCount) {
    ++*stats_->per_opcode[command.opcode];
  } else {
    ++*stats_->unknown_opcodes;
  }
  const auto opcode = static_cast<Opcode>(command.opcode);
  if (opcode == Opcode::HostWaiting) {
    // Taken when the scan saw it; otherwise now. Its completion comes when its condition holds.
    if (s.registered.erase({queue, index}) == 0 && s.phase == Slot::Phase::Active) {
      register_wait(channel, queue, index, command);
      s.registered.erase({queue, index});
      evaluate_waits(channel);
    } else if (s.phase != Slot::Phase::Active) {
      complete(channel, queue, command.sequence, Status::ChannelUnavailable, 0, 0, "channel not open: send Hello first");
    }
    return;
  }
  if (s.phase == Slot::Phase::Claimed) {
    if (opcode != Opcode::Hello) {
      complete(channel, queue, command.sequence, Status::ChannelUnavailable, 0, 0, "channel not open: send Hello first");
      return;
    }
    const int64_t owner = load_acquire(region_.channel(channel).control.owner_peer);
    if (!std::binary_search(connected_.begin(), connected_.end(), owner)) {
      complete(channel, queue, command.sequence, Status::ChannelUnavailable, 0, 0,
               "owner_peer " + std::to_string(owner) + " is not a connected ivshmem peer");
      return;
    }
    device::CompletionRecord record{};
    std::string message;
    forward(channel, queue, command, record, message);
    if (record.status == static_cast<uint32_t>(Status::Ok)) {
      s.peer = owner;
      s.phase = Slot::Phase::Active;
      store_release(region_.channel(channel).control.owner_pid, static_cast<uint32_t>(command.body.generic.a));
      store_release(region_.channel(channel).control.state, u32(ChannelState::Active));
      ++*stats_->channels_opened;
    }
    complete(channel, queue, command.sequence, static_cast<Status>(record.status), channel, 0, message);
    return;
  }
  switch (opcode) {
    case Opcode::Hello:
      complete(channel, queue, command.sequence, Status::InvalidCommand, 0, 0, "Hello: the channel is already open");
      return;
    case Opcode::SemaphoreWait:
    case Opcode::IpcEventWait:
      semaphore_wait(channel, queue, command);
      return;
    case Opcode::IpcEventExport:
    case Opcode::IpcEventImport:
    case Opcode::IpcEventTicket:
    case Opcode::IpcEventSignal:
      ipc_event_command(channel, queue, command);
      return;
    case Opcode::Goodbye:
      goodbye(channel, queue, command);
      return;
    default:
      break;
  }
  if (opcode == Opcode::Launch) ++kernels_started_;
  const uint64_t epoch = s.epoch;
  device::CompletionRecord record{};
  std::string message;
  forward(channel, queue, command, record, message);
  if (s.epoch != epoch || s.phase != Slot::Phase::Active) return;  // the channel went away meanwhile
  complete(channel, queue, command.sequence, static_cast<Status>(record.status), record.value0, record.value1, message);
}

void Bridge::forward(uint32_t channel, uint32_t queue, const device::Command& command, device::CompletionRecord& record,
                     std::string& message) {
  device::Command copy = command;
  gpu::CommandExtension extension;
  extension.channel = channel;
  extension.queue = queue;
  extension.cancelled = &cancelled_[channel];
  tlm::tlm_generic_payload payload;
  payload.set_command(tlm::TLM_WRITE_COMMAND);
  payload.set_address(uint64_t{channel} * kQueues + queue);
  payload.set_data_ptr(reinterpret_cast<unsigned char*>(&copy));
  payload.set_data_length(sizeof copy);
  payload.set_streaming_width(sizeof copy);
  payload.set_byte_enable_ptr(nullptr);
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  payload.set_extension(&extension);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  command_out->b_transport(payload, delay);
  payload.clear_extension(&extension);  // stack-owned
  if (delay != sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  if (!payload.is_response_ok()) {
    record.status = static_cast<uint32_t>(Status::InvalidCommand);
    message = "the command processor refused the transaction";
    return;
  }
  record.status = static_cast<uint32_t>(extension.status);
  record.value0 = extension.value0;
  record.value1 = extension.value1;
  message = std::move(extension.message);
}

void Bridge::register_wait(uint32_t channel, uint32_t queue, uint32_t index, const device::Command& command) {
  Slot& s = *slots_[channel];
  s.registered.insert({queue, index});
  const uint64_t cell = command.body.generic.a;
  if (cell != 0 && (cell % 8 != 0 || !region_.in_slice(channel, cell, 8))) {
    complete(channel, queue, command.sequence, Status::InvalidAddress, 0, 0,
             "HostWaiting: cell " + std::to_string(cell) + " is not an aligned u64 in the channel's window");
    return;
  }
  Slot::Wait wait;
  wait.queue = queue;
  wait.index = index;
  wait.sequence = command.sequence;
  wait.cell = cell;
  wait.value = command.body.generic.b;
  wait.target = cell == 0 ? command.body.generic.c : 0;
  const uint64_t bound = command.body.generic.d;
  if (bound != 0) {
    // Counted from now: the instant the client's commands were handed over, itself a function of
    // the command stream (time stood still since its previous wait ended).
    const uint64_t now = sc_core::sc_time_stamp().value();
    wait.deadline_ps = bound > UINT64_MAX - now ? UINT64_MAX : now + bound;
    ++*stats_->host_waits_bounded;
  }
  s.waits.push_back(wait);
  ++waiting_clients_;
  ++*stats_->host_waits;
  if (bound != 0) schedule_deadline();
}

void Bridge::schedule_deadline() {
  uint64_t earliest = UINT64_MAX;
  for (const auto& slot : slots_) {
    for (const Slot::Wait& wait : slot->waits) {
      if (wait.deadline_ps != 0) earliest = std::min(earliest, wait.deadline_ps);
    }
  }
  if (earliest == UINT64_MAX) return;
  const uint64_t now = sc_core::sc_time_stamp().value();
  // An earlier pending notification is kept, a later one replaced (IEEE 1666 notify rules).
  deadline_event_.notify(sc_core::sc_time::from_value(earliest > now ? earliest - now : 0));
}

void Bridge::deadlines() {
  for (;;) {
    sc_core::wait(deadline_event_);
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
      const Slot& s = *slots_[c];
      const bool due = std::any_of(s.waits.begin(), s.waits.end(), [&](const Slot::Wait& w) {
        return w.deadline_ps != 0 && w.deadline_ps <= now;
      });
      if (due) evaluate_waits(c);
    }
    schedule_deadline();
  }
}

bool Bridge::no_pending_entry(uint32_t channel, uint32_t skipped_queue,
                              const std::function<bool(uint64_t sequence)>& counts) const {
  const Slot& s = *slots_[channel];
  for (uint32_t q = 0; q < kQueues; ++q) {
    if (q == skipped_queue) continue;
    const device::CommandQueue& ring = region_.channel(channel).queues[q];
    const uint32_t tail = load_acquire(ring.tail.value);
    if (tail - s.head[q] > device::kQueueEntries) return true;  // corrupt: the scan faults the channel
    for (uint32_t i = s.head[q]; i != tail; ++i) {
      const device::Command& entry = ring.entries[i % device::kQueueEntries];
      if (__atomic_load_n(&entry.opcode, __ATOMIC_RELAXED) == static_cast<uint32_t>(Opcode::HostWaiting)) continue;
      if (counts(__atomic_load_n(&entry.sequence, __ATOMIC_RELAXED))) return false;
    }
  }
  return true;
}

bool Bridge::condition_holds(uint32_t channel, const Condition& wait) const {
  if (wait.cell != 0) {
    return load_acquire(*reinterpret_cast<const uint64_t*>(region_.base() + wait.cell)) >= wait.value;
  }
  if (wait.target != 0) {
    // The one command it names: done once no queue holds it any more (a queue's head moves past
    // an entry only after its completion was posted).
    return no_pending_entry(channel, kQueues, [&](uint64_t sequence) { return sequence == wait.target; });
  }
  // Everything queued before it: earlier entries of its own queue, and on the other queues every
  // entry with a smaller sequence (clients number their commands in submission order).
  return static_cast<int32_t>(slots_[channel]->head[wait.queue] - wait.index) > 0 &&
         no_pending_entry(channel, wait.queue, [&](uint64_t sequence) { return sequence <= wait.sequence; });
}

void Bridge::evaluate_waits(uint32_t channel) {
  Slot& s = *slots_[channel];
  const uint64_t now = sc_core::sc_time_stamp().value();
  for (auto it = s.waits.begin(); it != s.waits.end();) {
    // A bounded wait (a query) also ends when its simulated time is up. A cell counts once the
    // device's writes have landed.
    const bool judged = it->cell == 0 || now >= s.writes_land_ps;
    const bool holds = (judged && condition_holds(channel, *it)) || (it->deadline_ps != 0 && now >= it->deadline_ps);
    if (!holds) {
      ++it;
      continue;
    }
    // Time stops here (one waiter fewer), but the client hears of it only once this instant has
    // settled (post_held_completions): what it submits next then lands on a quiet platform at a
    // simulated time fixed by the command stream, not by how fast it or this thread ran.
    held_.push_back({channel, s.epoch, *it});
    it = s.waits.erase(it);
    --waiting_clients_;
  }
  if (!held_.empty()) sc_core::sc_pause();  // hand the run loop control to post them
  update_time_gate();
}

void Bridge::post_held_completions() {
  std::vector<Held> held;
  held.swap(held_);
  for (const Held& h : held) {
    const Slot& s = *slots_[h.channel];
    if (s.epoch != h.epoch || s.phase != Slot::Phase::Active) continue;  // the channel went away meanwhile
    // Judged now, once the instant has settled: what the client will find in its completions.
    const bool satisfied = condition_holds(h.channel, h.wait);
    if (h.wait.deadline_ps != 0 && !satisfied) ++*stats_->host_waits_expired;
    complete(h.channel, h.wait.queue, h.wait.sequence, Status::Ok, satisfied ? 1 : 0, 0, "");
  }
}

void Bridge::semaphore_wait(uint32_t channel, uint32_t queue, const device::Command& command) {
  Slot& s = *slots_[channel];
  const bool ipc = static_cast<Opcode>(command.opcode) == Opcode::IpcEventWait;
  const uint64_t id = ipc ? command.body.generic.a : 0;
  uint64_t cell = command.body.generic.a;
  const uint64_t value = command.body.generic.b;
  if (ipc) {
    const IpcEvent* event = live_ipc_event(id);
    if (event == nullptr) {
      complete(channel, queue, command.sequence, Status::InvalidHandle, 0, 0,
               "IpcEventWait: event handle " + std::to_string(id) + " names no event (its program has exited?)");
      return;
    }
    cell = event->cell;
  } else if (cell % 8 != 0 || !region_.in_slice(channel, cell, 8)) {
    complete(channel, queue, command.sequence, Status::InvalidAddress, 0, 0,
             "SemaphoreWait: cell " + std::to_string(cell) + " is not an aligned u64 in the channel's window");
    return;
  }
  const auto* word = reinterpret_cast<const uint64_t*>(region_.base() + cell);
  // Woken only once the cell holds the value and the device's writes have landed (scan_channel), never
  // by a mere wall-clock poll: the queue moves on at a simulated instant set by the command stream.
  s.semaphores[queue] = {cell, value, id};
  if (ipc) ++ipc_event_waits_;
  auto end_wait = [&] {
    s.semaphores[queue] = {};
    if (ipc) --ipc_event_waits_;
  };
  while (load_acquire(*word) < value) {
    if (s.phase != Slot::Phase::Active) {  // closing or faulted: no completion
      end_wait();
      return;
    }
    if (ipc && live_ipc_event(id) == nullptr) {  // its exporter left: the cell is gone with it
      end_wait();
      complete(channel, queue, command.sequence, Status::InvalidHandle, 0, 0,
               "IpcEventWait: the program that exported event handle " + std::to_string(id) + " has exited");
      return;
    }
    sc_core::wait(s.semaphore_ready[queue]);
  }
  end_wait();
  complete(channel, queue, command.sequence, Status::Ok, 0, 0, "");
}

void Bridge::wake_semaphores(uint32_t channel) {
  auto wake_if_due = [this](Slot& slot, uint32_t q) {
    const Slot::Semaphore& semaphore = slot.semaphores[q];
    if (semaphore.cell != 0 && load_acquire(*reinterpret_cast<const uint64_t*>(region_.base() + semaphore.cell)) >=
                                   semaphore.value) {
      slot.semaphore_ready[q].notify(sc_core::SC_ZERO_TIME);
    }
  };
  Slot& s = *slots_[channel];
  for (uint32_t q = 0; q < kQueues; ++q) wake_if_due(s, q);
  // Other programs' IpcEventWaits may watch a cell in this channel's window.
  if (ipc_event_waits_ == 0) return;
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
    if (c == channel) continue;
    for (uint32_t q = 0; q < kQueues; ++q) {
      const Slot::Semaphore& semaphore = slots_[c]->semaphores[q];
      if (semaphore.ipc_event != 0 && region_.in_slice(channel, semaphore.cell, 8)) wake_if_due(*slots_[c], q);
    }
  }
}

Bridge::IpcEvent* Bridge::live_ipc_event(uint64_t id) {
  const auto it = ipc_events_.find(id);
  if (it == ipc_events_.end()) return nullptr;
  const Slot& exporter = *slots_[it->second.channel];
  if (exporter.epoch != it->second.epoch || exporter.phase != Slot::Phase::Active) return nullptr;
  return &it->second;
}

void Bridge::ipc_event_command(uint32_t channel, uint32_t queue, const device::Command& command) {
  const auto opcode = static_cast<Opcode>(command.opcode);
  const uint64_t a = command.body.generic.a;
  const uint64_t b = command.body.generic.b;
  auto fail = [&](Status status, const std::string& why) { complete(channel, queue, command.sequence, status, 0, 0, why); };
  if (opcode == Opcode::IpcEventExport) {
    if (a % 16 != 0 || !region_.in_slice(channel, a, 16)) {
      fail(Status::InvalidAddress, "IpcEventExport: cell " + std::to_string(a) + " is not 16 aligned bytes in the channel's window");
      return;
    }
    for (const auto& [id, event] : ipc_events_) {  // exporting an event twice gives the same handle
      if (event.channel == channel && event.cell == a && live_ipc_event(id) != nullptr) {
        complete(channel, queue, command.sequence, Status::Ok, id, 0, "");
        return;
      }
    }
    const uint64_t id = next_ipc_event_++;
    ipc_events_[id] = IpcEvent{channel, slots_[channel]->epoch, a, b, b};
    complete(channel, queue, command.sequence, Status::Ok, id, 0, "");
    return;
  }
  IpcEvent* event = live_ipc_event(a);
  const std::string name = "event handle " + std::to_string(a);
  if (event == nullptr) {
    fail(Status::InvalidHandle, name + " names no event (its program has exited?)");
    return;
  }
  switch (opcode) {
    case Opcode::IpcEventImport:
      if (event->channel == channel) {
        fail(Status::InvalidHandle, "IpcEventImport: " + name + " was made by this program");
        return;
      }
      complete(channel, queue, command.sequence, Status::Ok, event->issued, 0, "");
      return;
    case Opcode::IpcEventTicket: {
      if (b > 1) {
        fail(Status::InvalidCommand, "IpcEventTicket: b must be 0 (latest) or 1 (new), not " + std::to_string(b));
        return;
      }
      if (b == 1) ++event->issued;
      const uint64_t landed = load_acquire(*reinterpret_cast<const uint64_t*>(region_.base() + event->cell));
      complete(channel, queue, command.sequence, Status::Ok, event->issued, landed, "");
      return;
    }
    case Opcode::IpcEventSignal: {
      if (b == 0 || b > event->issued) {
        fail(Status::InvalidCommand, "IpcEventSignal: " + std::to_string(b) + " is not a ticket issued for " + name);
        return;
      }
      if (b <= event->signalled) {  // a later record has already been signalled
        complete(channel, queue, command.sequence, Status::Ok, 0, 0, "");
        return;
      }
      event->signalled = b;
      // The device writes the exporter's cell, as a SemaphoreSignal of the exporter would.
      device::Command signal = command;
      signal.opcode = static_cast<uint32_t>(Opcode::SemaphoreSignal);
      signal.body.generic.a = event->cell;
      device::CompletionRecord record{};
      std::string message;
      const uint32_t exporter = event->channel;
      const uint64_t epoch = slots_[channel]->epoch;
      forward(exporter, queue, signal, record, message);
      if (slots_[channel]->epoch != epoch) return;  // this channel went away meanwhile
      complete(channel, queue, command.sequence, static_cast<Status>(record.status), 0, 0, message);
      return;
    }
    default:
      fail(Status::InvalidCommand, "not an IPC event command");
  }
}

void Bridge::drop_ipc_events(uint32_t channel) {
  bool dropped = false;
  for (auto it = ipc_events_.begin(); it != ipc_events_.end();) {
    if (it->second.channel == channel) {
      it = ipc_events_.erase(it);
      dropped = true;
    } else {
      ++it;
    }
  }
  if (!dropped || ipc_event_waits_ == 0) return;
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) {  // their waiters end with an error
    for (uint32_t q = 0; q < kQueues; ++q) {
      if (slots_[c]->semaphores[q].ipc_event != 0) slots_[c]->semaphore_ready[q].notify(sc_core::SC_ZERO_TIME);
    }
  }
}

void Bridge::goodbye(uint32_t channel, uint32_t queue, const device::Command& command) {
  Slot& s = *slots_[channel];
  s.goodbye_running = true;  // no queue fetches more; let what runs finish
  while (s.in_flight > 1) {
    if (s.phase != Slot::Phase::Active) return;
    sc_core::wait(s.changed);
  }
  drop_ipc_events(channel);
  device::CompletionRecord record{};
  std::string message;
  forward(channel, queue, command, record, message);
  waiting_clients_ -= static_cast<uint32_t>(s.waits.size());
  s.waits.clear();
  complete(channel, queue, command.sequence, static_cast<Status>(record.status), 0, 0, message);
  s.goodbye_running = false;
  s.goodbye_done = true;  // the channel is freed once the client has consumed this completion
  update_time_gate();
}

void Bridge::complete(uint32_t channel, uint32_t queue, uint64_t sequence, Status status, uint64_t value0,
                      uint64_t value1, const std::string& message) {
  Slot& s = *slots_[channel];
  device::CompletionRecord record{};
  record.sequence = sequence;
  record.queue = queue;
  record.status = static_cast<uint32_t>(status);
  record.value0 = value0;
  record.value1 = value1;
  record.simulated_ps = sc_core::sc_time_stamp().value();
  std::strncpy(record.message, message.c_str(), sizeof record.message - 1);
  if (message.size() >= sizeof record.message) {  // cut: say so
    std::memcpy(record.message + sizeof record.message - 4, "...", 4);
  }
  s.pending.push_back(record);
  ++*stats_->completions;
  if (status != Status::Ok) ++*stats_->errors;
  ++commands_completed_;
  flush(channel);
  s.changed.notify(sc_core::SC_ZERO_TIME);
}

void Bridge::flush(uint32_t channel) {
  Slot& s = *slots_[channel];
  if (s.pending.empty()) return;
  device::CompletionRing& ring = region_.channel(channel).completions;
  const uint32_t head = load_acquire(ring.head.value);
  bool posted = false;
  while (!s.pending.empty() && s.completion_tail - head < device::kCompletionEntries) {
    ring.entries[s.completion_tail % device::kCompletionEntries] = s.pending.front();
    s.pending.pop_front();
    ++s.completion_tail;
    posted = true;
  }
  if (!posted) return;
  store_release(ring.tail.value, s.completion_tail);
  const int64_t owner = s.peer >= 0 ? s.peer : int64_t{load_acquire(region_.channel(channel).control.owner_peer)};
  if (server_ != nullptr && server_->ring(owner, device::kVectorCompletion)) ++*stats_->doorbells_sent;
  if (s.pending.size() < kMaxPendingCompletions) {
    for (auto& event : s.work) event.notify(sc_core::SC_ZERO_TIME);
  }
}

const gpu::DmaExtension* Bridge::host_access_allowed(const tlm::tlm_generic_payload& payload) const {
  gpu::DmaExtension* extension = nullptr;
  payload.get_extension(extension);
  if (extension == nullptr || payload.get_byte_enable_ptr() != nullptr ||
      payload.get_streaming_width() != payload.get_data_length() ||
      !region_.in_slice(extension->channel, payload.get_address(), payload.get_data_length()) ||
      cancelled_[extension->channel]) {
    return nullptr;
  }
  return extension;
}

unsigned int Bridge::host_debug(tlm::tlm_generic_payload& payload) {
  if (host_access_allowed(payload) == nullptr || !payload.is_read()) return 0;  // reads only: probes
  std::memcpy(payload.get_data_ptr(), region_.base() + payload.get_address(), payload.get_data_length());
  return payload.get_data_length();
}

bool Bridge::host_direct(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  // The whole slice of the channel named by the payload's DmaExtension, read and write.
  const gpu::DmaExtension* extension = host_access_allowed(payload);
  if (extension == nullptr) return false;
  const uint64_t begin = region_.slice_begin(extension->channel);
  dmi.set_dmi_ptr(region_.base() + begin);
  dmi.set_start_address(begin);
  dmi.set_end_address(begin + region_.slice_bytes() - 1);
  dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
  return true;
}

void Bridge::host_access(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const gpu::DmaExtension* extension = host_access_allowed(payload);
  if (extension == nullptr) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const uint64_t address = payload.get_address();
  const uint64_t length = payload.get_data_length();
  uint8_t* host = region_.base() + address;
  if (payload.is_read()) {
    std::memcpy(payload.get_data_ptr(), host, length);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } else if (payload.is_write()) {
    if (length == 8 && address % 8 == 0) {  // semaphores: one atomic store the host can poll
      uint64_t value;
      std::memcpy(&value, payload.get_data_ptr(), sizeof value);
      store_release(*reinterpret_cast<uint64_t*>(host), value);
    } else {
      __atomic_thread_fence(__ATOMIC_RELEASE);
      std::memcpy(host, payload.get_data_ptr(), length);
    }
    // Semaphores and HostWaiting cells see it when it lands (the link annotated its arrival).
    Slot& s = *slots_[extension->channel];
    s.writes_land_ps = std::max<uint64_t>(s.writes_land_ps, sc_core::sc_time_stamp().value() + delay.value());
    s.writes_landing = true;
    pass_needed_.notify(delay);
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace gpuvp::bridge
