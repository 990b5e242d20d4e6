#include "models/gpu/crossbar/crossbar.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/memory/timed_queue.h"

namespace gpuvp::gpu {

using memory::Ring;
using sc_core::sc_time;

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
uint64_t now_ps() { return current_time().value(); }
}  // namespace

// Which cluster port a request came from, so that its reply finds the way back.
// The crossbar owns these tags and recycles them, so a payload destroyed while it carries one
// (simulation torn down mid-flight) must not delete it; a tag still attached when the crossbar
// goes away is handed over to the payload instead (orphaned), which then deletes it.
struct Crossbar::RouteExtension : tlm::tlm_extension<RouteExtension> {
  uint32_t port = 0;
  bool in_use = false;
  bool payload_gone = false;  // its payload was destroyed while carrying it
  bool orphaned = false;      // the crossbar is gone: the payload owns it
  tlm::tlm_extension_base* clone() const override {
    auto* copy = new RouteExtension;
    copy->port = port;
    copy->orphaned = true;  // a clone belongs to whoever cloned the payload
    return copy;
  }
  void copy_from(const tlm::tlm_extension_base& other) override {
    port = static_cast<const RouteExtension&>(other).port;
  }
  void free() override {
    if (orphaned) delete this;
    else payload_gone = true;
  }
};

struct Crossbar::Net {
  struct Packet {
    tlm::tlm_generic_payload* gp = nullptr;
    uint32_t flits = 0;
  };
  struct Flight {
    uint64_t arrival_ps = 0;
    tlm::tlm_generic_payload* gp = nullptr;
  };
  uint32_t inputs = 0, outputs = 0, capacity = 0;
  std::vector<Ring<Packet>> voq;  // [input * outputs + output]
  std::vector<uint32_t> held;     // per input: packets buffered
  std::vector<tlm::tlm_generic_payload*> withheld;  // per input: acceptance withheld
  std::vector<uint32_t> withheld_dst;
  std::vector<uint32_t> pending;  // per output: packets buffered for it
  std::vector<uint32_t> rr;       // per output: input to favour next
  std::vector<uint64_t> link_free_ps;
  std::vector<Ring<Flight>> wire;
  std::vector<char> busy;  // per output: BEGIN_REQ/BEGIN_RESP unanswered downstream
  std::vector<tlm::tlm_generic_payload*> busy_with;  // per output: that payload
  // With a cluster latency (request network only): per input, packets on their way to the
  // buffer and the times their slots come back to the sender. held[] then counts the sender's
  // spent credits: packets on the way, buffered, and slots on their way back.
  std::vector<Ring<Flight>> inbound;
  std::vector<Ring<uint64_t>> credit_back;
  uint32_t first_key = 0;  // wake keys: first_key + output delivers, first_key + outputs arbitrates

  Net(uint32_t in, uint32_t out, uint32_t cap, uint32_t wire_packets) : inputs(in), outputs(out), capacity(cap) {
    voq.reserve(std::size_t{in} * out);
    for (std::size_t k = 0; k < std::size_t{in} * out; ++k) voq.emplace_back(cap);
    held.assign(in, 0);
    withheld.assign(in, nullptr);
    withheld_dst.assign(in, 0);
    pending.assign(out, 0);
    rr.assign(out, 0);
    link_free_ps.assign(out, 0);
    for (uint32_t o = 0; o < out; ++o) {
      wire.emplace_back(wire_packets);
    }
    busy.assign(out, 0);
    busy_with.assign(out, nullptr);
  }
  void add_cluster_latency() {
    for (uint32_t i = 0; i < inputs; ++i) {
      inbound.emplace_back(capacity);
      credit_back.emplace_back(capacity);
    }
  }
};

Crossbar::Crossbar(sc_core::sc_module_name name, const CrossbarParams& params, const memory::AddressMap& map,
                   uint32_t cluster_ports, stats::Registry& stats, const std::string& stats_path,
                   memory::WakeDomain* wakes)
    : sc_core::sc_module(name),
      cluster("cluster"),
      slice("slice"),
      params_(params),
      map_(map),
      clock_("crossbar", static_cast<std::uint64_t>(params.clock_hz)),
      flit_ps_(static_cast<uint64_t>(std::llround(params.flit_bytes / params.port_bandwidth() * 1e12))),
      latency_ps_(static_cast<uint64_t>(std::llround(params.latency_ps))),
      cluster_latency_ps_(static_cast<uint64_t>(std::llround(params.cluster_latency_ps))) {
  if (cluster_ports == 0) throw std::invalid_argument("Crossbar: at least one cluster port");
  nets_[kRequest] = std::make_unique<Net>(cluster_ports, map.slices(), params.input_buffer, params.wire_packets);
  nets_[kReply] = std::make_unique<Net>(map.slices(), cluster_ports, params.input_buffer, params.wire_packets);
  if (cluster_latency_ps_ != 0) nets_[kRequest]->add_cluster_latency();
  cluster.register_nb_transport_fw(this, &Crossbar::cluster_fw);
  slice.register_nb_transport_bw(this, &Crossbar::slice_bw);

  auto& g = stats.group(stats_path);
  const char* dir_name[2] = {"request", "reply"};
  for (int d = 0; d < 2; ++d) {
    const std::string n = dir_name[d];
    packets_[d] = &g.counter(n + "_packets", "packet", n + " packets carried");
    flits_[d] = &g.counter(n + "_flits", "flit", n + " flits carried");
    busy_ps_[d] = &g.counter(n + "_busy_ps", "ps", n + " link serialization time, summed over links");
    withheld_[d] = &g.counter(n + "_withheld", "packet", n + " packets whose acceptance waited for buffer room");
  }
  // One wake queue for both networks (its own process, or the memory side's WakeDomain). Keys:
  // per network its outputs' deliveries, then its arbiter (request network first), then the
  // request network's inputs (arrivals and credits, with a cluster latency); same-time wakes run
  // in key order, so a delivery that frees a wire slot is seen by the arbiter of the same instant.
  nets_[kRequest]->first_key = 0;
  nets_[kReply]->first_key = nets_[kRequest]->outputs + 1;
  first_input_key_ = nets_[kReply]->first_key + nets_[kReply]->outputs + 1;
  const uint32_t keys = first_input_key_ + cluster_ports;
  wakes_ = std::make_unique<memory::WakeQueue>("wake", keys, [this](uint32_t key) {
    if (key >= first_input_key_) return input_due(key - first_input_key_);
    const Dir dir = key < nets_[kReply]->first_key ? kRequest : kReply;
    const uint32_t k = key - nets_[dir]->first_key;
    if (k < nets_[dir]->outputs) deliver(dir, k);
    else arbitrate(dir);
  }, wakes);
}

Crossbar::~Crossbar() {
  for (auto& route : routes_) {
    if (route->in_use && !route->payload_gone) {
      route->orphaned = true;
      route.release();  // now owned by the payload that carries it
    }
  }
}

void Crossbar::end_of_elaboration() {
  if (cluster.size() != nets_[kRequest]->inputs)
    throw std::logic_error("Crossbar: " + std::to_string(cluster.size()) + " cluster initiators bound, " +
                           std::to_string(nets_[kRequest]->inputs) + " ports declared");
  if (slice.size() != map_.slices())
    throw std::logic_error("Crossbar: " + std::to_string(slice.size()) + " slices bound, the address map has " +
                           std::to_string(map_.slices()));
}

uint32_t Crossbar::flits(uint64_t data_bytes) const {
  const uint64_t bytes = params_.header_bytes + data_bytes;
  return static_cast<uint32_t>(std::max<uint64_t>(1, (bytes + params_.flit_bytes - 1) / params_.flit_bytes));
}

void Crossbar::notify_arbiter(Dir dir, uint64_t at_ps) {
  const Net& net = *nets_[dir];
  wakes_->at(net.first_key + net.outputs, std::max(at_ps, now_ps()));
}

void Crossbar::notify_deliver(Dir dir, uint32_t output, uint64_t at_ps) {
  wakes_->at(nets_[dir]->first_key + output, at_ps);
}

bool Crossbar::enter(Dir dir, uint32_t input, tlm::tlm_generic_payload& gp) {
  Net& net = *nets_[dir];
  if (net.held[input] == net.capacity) return false;
  ++net.held[input];
  if (dir == kRequest && cluster_latency_ps_ != 0) {
    net.inbound[input].push(Net::Flight{now_ps() + cluster_latency_ps_, &gp});
    notify_input(input);  // a wake already pending is earlier and stays
  } else {
    buffer(dir, input, gp);
  }
  return true;
}

void Crossbar::buffer(Dir dir, uint32_t input, tlm::tlm_generic_payload& gp) {
  Net& net = *nets_[dir];
  uint32_t dst;
  uint64_t data;
  if (dir == kRequest) {
    dst = map_.slice(gp.get_address());
    data = gp.is_write() ? gp.get_data_length() : 0;
  } else {
    auto* route = gp.get_extension<RouteExtension>();
    dst = route->port;
    gp.clear_extension(route);
    route->in_use = false;
    free_routes_.push_back(route);
    data = gp.is_read() ? gp.get_data_length() : 0;
  }
  net.voq[std::size_t{input} * net.outputs + dst].push(Net::Packet{&gp, flits(data)});
  ++net.pending[dst];
  notify_arbiter(dir, clock_.next_edge(current_time()).value());
}

void Crossbar::notify_input(uint32_t input) {
  Net& net = *nets_[kRequest];
  uint64_t at = kNever;
  if (!net.inbound[input].empty()) at = net.inbound[input].front().arrival_ps;
  if (!net.credit_back[input].empty()) at = std::min(at, net.credit_back[input].front());
  if (at != kNever) wakes_->at(first_input_key_ + input, at);
}

void Crossbar::input_due(uint32_t input) {
  Net& net = *nets_[kRequest];
  const uint64_t now = now_ps();
  // Slots first: a withheld request taken now starts its way to the buffer at once.
  for (auto& back = net.credit_back[input]; !back.empty() && back.front() <= now;) {
    back.pop();
    free_slot(kRequest, input);
  }
  for (auto& in = net.inbound[input]; !in.empty() && in.front().arrival_ps <= now;) {
    tlm::tlm_generic_payload* gp = in.front().gp;
    in.pop();
    buffer(kRequest, input, *gp);
  }
  notify_input(input);
}

void Crossbar::free_slot(Dir dir, uint32_t input) {
  Net& net = *nets_[dir];
  --net.held[input];
  // Room at this input: take the packet whose acceptance was withheld.
  tlm::tlm_generic_payload* w = net.withheld[input];
  if (w == nullptr) return;
  net.withheld[input] = nullptr;
  enter(dir, input, *w);
  sc_time delay = sc_core::SC_ZERO_TIME;
  if (dir == kRequest) {
    tlm::tlm_phase ph = tlm::END_REQ;
    cluster[static_cast<int>(input)]->nb_transport_bw(*w, ph, delay);
  } else {
    tlm::tlm_phase ph = tlm::END_RESP;
    slice[static_cast<int>(input)]->nb_transport_fw(*w, ph, delay);
  }
}

tlm::tlm_sync_enum Crossbar::cluster_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
  const auto port = static_cast<uint32_t>(id);
  if (phase == tlm::BEGIN_REQ) {
    RouteExtension* route;
    if (free_routes_.empty()) {  // warm-up only: tags are recycled
      routes_.push_back(std::make_unique<RouteExtension>());
      route = routes_.back().get();
    } else {
      route = free_routes_.back();
      free_routes_.pop_back();
    }
    route->port = port;
    route->in_use = true;
    gp.set_extension(route);
    if (enter(kRequest, port, gp)) {
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    nets_[kRequest]->withheld[port] = &gp;
    ++*withheld_[kRequest];
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) {
    Net& net = *nets_[kReply];
    net.busy[port] = 0;
    notify_deliver(kReply, port, now_ps());
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR("gpuvp/crossbar", "unexpected phase from a cluster");
  return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum Crossbar::slice_bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
  const auto s = static_cast<uint32_t>(id);
  Net& req = *nets_[kRequest];
  if (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP) {
    // BEGIN_RESP implies END_REQ, but only for the same transaction: a slice may answer an
    // older request while it still withholds END_REQ from the newest.
    if (req.busy[s] != 0 && (phase == tlm::END_REQ || req.busy_with[s] == &gp)) {
      req.busy[s] = 0;
      notify_deliver(kRequest, s, now_ps());
    }
  }
  if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  if (phase == tlm::BEGIN_RESP) {
    if (enter(kReply, s, gp)) return tlm::TLM_COMPLETED;
    nets_[kReply]->withheld[s] = &gp;
    ++*withheld_[kReply];
    return tlm::TLM_ACCEPTED;
  }
  SC_REPORT_ERROR("gpuvp/crossbar", "unexpected phase from a slice");
  return tlm::TLM_COMPLETED;
}

void Crossbar::arbitrate(Dir dir) {
  Net& net = *nets_[dir];
  const uint64_t now = now_ps();
  uint64_t next = kNever;
  for (uint32_t o = 0; o < net.outputs; ++o) {
    if (net.pending[o] == 0 || net.wire[o].full()) continue;  // a delivery wakes us when the wire drains
    if (net.link_free_ps[o] > now) {
      next = std::min(next, net.link_free_ps[o]);
      continue;
    }
    // Round robin from rr[o] (wrapping without a division: this runs per packet).
    auto following = [&net](uint32_t i) { return i + 1 == net.inputs ? 0 : i + 1; };
    uint32_t input = net.rr[o];
    while (net.voq[std::size_t{input} * net.outputs + o].empty()) input = following(input);
    net.rr[o] = following(input);
    auto& q = net.voq[std::size_t{input} * net.outputs + o];
    const Net::Packet p = q.front();
    q.pop();
    --net.pending[o];
    const uint64_t serial = uint64_t{p.flits} * flit_ps_;
    net.link_free_ps[o] = now + serial;
    ++*packets_[dir];
    *flits_[dir] += p.flits;
    *busy_ps_[dir] += serial;
    const bool idle = net.wire[o].empty();
    const uint64_t arrival = now + serial + latency_ps_;
    net.wire[o].push(Net::Flight{arrival, p.gp});
    if (idle) notify_deliver(dir, o, arrival);
    if (net.pending[o] != 0) next = std::min(next, net.link_free_ps[o]);

    if (dir == kRequest && cluster_latency_ps_ != 0) {
      // The slot travels back to the cluster: the sender may use it cluster_latency from now.
      net.credit_back[input].push(now + cluster_latency_ps_);
      notify_input(input);  // a wake already pending is earlier and stays
    } else {
      const bool withheld = net.withheld[input] != nullptr;
      free_slot(dir, input);
      if (withheld && net.pending[o] != 0) next = std::min(next, net.link_free_ps[o]);
    }
  }
  if (next != kNever) notify_arbiter(dir, next);
}

void Crossbar::deliver(Dir dir, uint32_t o) {
  Net& net = *nets_[dir];
  const uint64_t now = now_ps();
  auto& wire = net.wire[o];
  while (net.busy[o] == 0 && !wire.empty() && wire.front().arrival_ps <= now) {
    tlm::tlm_generic_payload* gp = wire.front().gp;
    const bool was_full = wire.full();
    wire.pop();
    if (was_full && net.pending[o] != 0) notify_arbiter(dir, std::max(now, net.link_free_ps[o]));
    sc_time delay = sc_core::SC_ZERO_TIME;
    if (dir == kRequest) {
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      const tlm::tlm_sync_enum s = slice[static_cast<int>(o)]->nb_transport_fw(*gp, ph, delay);
      if (s == tlm::TLM_COMPLETED)
        SC_REPORT_ERROR("gpuvp/crossbar", "a slice completed a request at once; slices must answer in 4 phases");
      if (!(s == tlm::TLM_UPDATED && ph == tlm::END_REQ)) {
        net.busy[o] = 1;
        net.busy_with[o] = gp;
      }
    } else {
      // The cluster latency as an annotated delay: the reply reaches the cluster then, and the SM
      // side knows it that much in advance (its lookahead).
      tlm::tlm_phase ph = tlm::BEGIN_RESP;
      delay = sc_time::from_value(cluster_latency_ps_);
      const tlm::tlm_sync_enum s = cluster[static_cast<int>(o)]->nb_transport_bw(*gp, ph, delay);
      if (!(s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && ph == tlm::END_RESP))) net.busy[o] = 1;
    }
  }
  if (net.busy[o] == 0 && !wire.empty()) notify_deliver(dir, o, wire.front().arrival_ps);
}

}  // namespace gpuvp::gpu
