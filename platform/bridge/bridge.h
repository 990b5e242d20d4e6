// The bridge: gpuvp's host interface. It is the ivshmem server (ivshmem_server.h), owns the
// shared region (shared_region.h) and serves the channels in it: it fetches commands from the
// queues of every open channel (doorbells are hints, it also polls), checks the rings, turns each
// command into a TLM transaction to the command processor, posts the completion and rings the
// client. DMA from the GPU reaches the shared region through `host_memory`, bounded by the
// channel's window slice.
//
//   command_out -> gpu::CommandProcessor::command_in   (one b_transport per command)
//   host_memory <- uvm::PcieLink::host_out              (GPU DMA; TLM_ADDRESS_ERROR outside the slice;
//                                                        debug reads answer 0 bytes there)
//
// Queue-level commands stay here: HostWaiting (out of queue order, device.h), SemaphoreWait
// (stalls its queue), Hello/Goodbye (channel life cycle). Each queue is served by its own
// SystemC thread, so queues run concurrently and each runs its commands in order.
//
// THREADS AND TIME: the I/O thread of the ivshmem server never touches SystemC; it queues what
// happened and wakes the simulation with async_request_update (and an eventfd for the thread
// that runs the simulation, see PlatformServer). Simulated time may advance only while a client
// waits (HostWaiting not yet satisfied) or a departing channel still has work in flight; the
// thread running the simulation asks time_may_advance() and otherwise runs only the current
// instant's activity, then sleeps on wake_fd(). A satisfied HostWaiting stops time at once but
// its completion is held back until the instant has settled (holding_completions()), so the
// client -- which resumes only on that completion -- never races simulated work. A HostWaiting
// bounded in simulated time (a query, device.h) is also satisfied when its bound is reached: a
// timed event ends it there, and it settles and completes like any other.
// Nothing that wall-clock time brings (a poll tick, a doorbell) may change what the device does:
// a client's commands are released only while it waits (an answered HostWaiting still sitting in
// its queue does not count); a SemaphoreWait moves on when the device's write to its cell lands
// (the PCIe link's annotated arrival) or, for a cell the host wrote, when the host next waits;
// HostWaiting cells are judged only once the device's writes have landed.
//
// Statistics: group "bridge" — peers, doorbells, commands per opcode, completions, errors, ring
// faults, channels opened and released, host waits (bounded ones, and those their bound ended).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "gpuvp/device.h"
#include "platform/bridge/ivshmem_server.h"
#include "platform/bridge/platform_server.h"
#include "platform/bridge/shared_region.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {
class DmaExtension;
}

namespace gpuvp::bridge {

// What programs see in the region header: the device as the configuration describes it.
device::DeviceInfo make_device_info(const PlatformParams& params);

class Bridge : public sc_core::sc_module, private IvshmemServer::Listener {
 public:
  tlm_utils::simple_initiator_socket<Bridge> command_out;
  tlm_utils::simple_target_socket<Bridge> host_memory;

  // Creates the region and the socket; clients are accepted once start() is called.
  Bridge(sc_core::sc_module_name name, const PlatformParams& params, stats::Registry& stats);
  ~Bridge() override;
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  void start();  // starts the I/O thread; the region header says Ready
  void shut_down();  // region header says Stopping; the I/O thread ends, clients are disconnected

  const std::string& socket_path() const;
  uint64_t region_bytes() const { return region_.bytes(); }

  // For the thread that runs the simulation (the same thread as every SystemC process).
  int wake_fd() const { return wake_fd_; }
  void clear_wake();
  bool time_may_advance() const { return waiting_clients_ > 0 || draining_channels_ > 0; }
  // Satisfied HostWaiting commands whose completions wait for the current instant to settle
  // (device.h): the thread running the simulation posts them once no activity is left at the
  // current time (or at once while time may advance for another client anyway).
  bool holding_completions() const { return !held_.empty(); }
  void post_held_completions();
  bool stop_requested() const { return stop_requested_.load(); }
  void clear_stop() { stop_requested_ = false; }
  void request_stop();  // thread-safe, async-signal-safe
  PlatformActivity activity() const;

 private:
  struct Slot;
  struct Stats;
  class Wake;
  struct IoEvent {
    bool joined;
    int64_t peer;
  };
  // A HostWaiting's condition (device.h).
  struct Condition {
    uint32_t queue = 0;
    uint32_t index = 0;
    uint64_t sequence = 0;
    uint64_t cell = 0;
    uint64_t value = 0;
    uint64_t target = 0;       // a sequence (cell == 0), 0: everything queued before
    uint64_t deadline_ps = 0;  // bounded (d != 0): simulated time at which it ends anyway; 0: none
  };
  struct Held {
    uint32_t channel;
    uint64_t epoch;
    Condition wait;
  };

  // IvshmemServer::Listener (I/O thread).
  void peer_joined(int64_t peer) override;
  void peer_left(int64_t peer) override;
  void doorbell(uint32_t vector) override;
  void tick() override;
  void stop_asked() override;
  void poke();
  // Stops `channel`'s kernels at once if `doomed` says so of its control block, unless the channel
  // was released meanwhile.
  void cancel_now(uint32_t channel, const std::function<bool(const device::ChannelControl&)>& doomed);

  // SystemC side.
  void service();
  void service_pass();
  void worker(uint32_t channel, uint32_t queue);
  void scan_channel(uint32_t channel);
  bool rings_consistent(uint32_t channel, std::string& problem);
  void attach(uint32_t channel);
  void fault(uint32_t channel, const std::string& problem);
  void begin_release(uint32_t channel);
  void finish_release(uint32_t channel);
  void process(uint32_t channel, uint32_t queue, uint32_t index, const device::Command& command);
  void register_wait(uint32_t channel, uint32_t queue, uint32_t index, const device::Command& command);
  void evaluate_waits(uint32_t channel);
  bool condition_holds(uint32_t channel, const Condition& wait) const;
  // Whether no command still in the channel's queues (but `skipped_queue`'s; HostWaitings aside)
  // has a sequence that `counts`.
  bool no_pending_entry(uint32_t channel, uint32_t skipped_queue,
                        const std::function<bool(uint64_t sequence)>& counts) const;
  void deadlines();          // SystemC thread: ends bounded HostWaitings whose time is up
  void schedule_deadline();  // deadline_event_ at the earliest bound of any waiting client
  void semaphore_wait(uint32_t channel, uint32_t queue, const device::Command& command);
  void wake_semaphores(uint32_t channel);  // the SemaphoreWaits whose cells now hold their values
  // Inter-process events (device.h IpcEvent*): exported cells, tickets, signals and waits.
  // An exported event: its cell lives in the exporter's window; tickets order the records of every
  // program that holds the handle.
  struct IpcEvent {
    uint32_t channel = 0;
    uint64_t epoch = 0;      // the exporter's, while it stays open
    uint64_t cell = 0;       // {value, simulated ps} in the exporter's window
    uint64_t issued = 0;     // the latest ticket handed out
    uint64_t signalled = 0;  // the highest ticket written to the cell
  };
  IpcEvent* live_ipc_event(uint64_t id);  // nullptr once its exporter has left
  void ipc_event_command(uint32_t channel, uint32_t queue, const device::Command& command);
  void drop_ipc_events(uint32_t channel);  // the channel leaves: its exports end, their waiters wake
  void goodbye(uint32_t channel, uint32_t queue, const device::Command& command);
  // Runs `command` on the command processor; fills status/values/message.
  void forward(uint32_t channel, uint32_t queue, const device::Command& command, device::CompletionRecord& record,
               std::string& message);
  void complete(uint32_t channel, uint32_t queue, uint64_t sequence, device::Status status, uint64_t value0,
                uint64_t value1, const std::string& message);
  void flush(uint32_t channel);
  void update_time_gate();
  void host_access(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned int host_debug(tlm::tlm_generic_payload& payload);  // untimed reads: window probes
  // A direct pointer to the channel's window slice (zero-copy mappings of host memory).
  bool host_direct(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi);
  // The access's DMA extension when it may touch the region (its channel's slice, not cancelled).
  const gpu::DmaExtension* host_access_allowed(const tlm::tlm_generic_payload& payload) const;

  PlatformParams params_;
  SharedRegion region_;
  std::unique_ptr<Wake> wake_;
  std::unique_ptr<IvshmemServer> server_;
  int wake_fd_ = -1;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> tick_pending_{false};
  std::atomic<uint64_t> doorbells_pending_{0};
  std::mutex events_mutex_;
  std::vector<IoEvent> events_;  // guarded by events_mutex_
  std::array<std::atomic<bool>, device::kMaxChannels> cancelled_{};

  // SystemC side only.
  std::vector<int64_t> connected_;  // sorted peer ids
  std::array<std::unique_ptr<Slot>, device::kMaxChannels> slots_;
  sc_core::sc_event pass_needed_;  // something changed: run a service pass
  sc_core::sc_event deadline_event_;  // the earliest bound of a bounded HostWaiting is reached
  uint32_t waiting_clients_ = 0;    // unsatisfied HostWaiting commands
  std::vector<Held> held_;          // satisfied HostWaiting commands, completion not yet posted
  uint32_t draining_channels_ = 0;  // departing channels with work still in flight
  std::map<uint64_t, IpcEvent> ipc_events_;  // export id -> exported event (ordered: deterministic)
  uint64_t next_ipc_event_ = 1;
  uint32_t ipc_event_waits_ = 0;  // IpcEventWaits in progress, on any channel
  std::unique_ptr<Stats> stats_;

  // Thread-safe activity counters.
  std::atomic<uint64_t> peers_connected_{0}, peers_seen_{0}, channels_active_{0}, channels_released_{0},
      commands_completed_{0}, kernels_started_{0}, doorbells_total_{0};
};

}  // namespace gpuvp::bridge
