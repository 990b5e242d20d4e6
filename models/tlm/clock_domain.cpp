#include "models/tlm/clock_domain.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuvp {

namespace {
__extension__ typedef unsigned __int128 u128;  // n * ticks_per_second exceeds 64 bits

std::uint64_t checked(u128 v) {
    if (v > std::numeric_limits<std::uint64_t>::max())
        throw std::overflow_error("ClockDomain: time beyond the 64-bit tick range");
    return static_cast<std::uint64_t>(v);
}
}  // namespace

ClockDomain::ClockDomain(std::string name, std::uint64_t frequency_hz)
    : name_(std::move(name)), frequency_hz_(frequency_hz) {
    const double res_s = sc_core::sc_get_time_resolution().to_seconds();
    ticks_per_second_ = static_cast<std::uint64_t>(std::llround(1.0 / res_s));
    if (frequency_hz_ == 0)
        throw std::invalid_argument("ClockDomain '" + name_ + "': frequency must be > 0 Hz");
    if (frequency_hz_ > ticks_per_second_)
        throw std::invalid_argument("ClockDomain '" + name_ +
                                    "': frequency exceeds the simulation time resolution");
    max_fast_cycle_ = std::numeric_limits<std::uint64_t>::max() / ticks_per_second_;
}

sc_core::sc_time ClockDomain::period() const {
    return sc_core::sc_time::from_value(ticks_per_second_ / frequency_hz_);
}

// Each function takes a 64-bit path when its product cannot overflow (every run shorter than
// ~18 ms of simulated time at 1 ps, i.e. nearly all): the same integer result without the
// 128-bit division, which is a libgcc call on the memory side's hot paths.
sc_core::sc_time ClockDomain::time_of_cycle(std::uint64_t n) const {
    if (n <= std::numeric_limits<std::uint64_t>::max() / ticks_per_second_)
        return sc_core::sc_time::from_value(n * ticks_per_second_ / frequency_hz_);
    return sc_core::sc_time::from_value(
        checked(static_cast<u128>(n) * ticks_per_second_ / frequency_hz_));
}

std::uint64_t ClockDomain::cycle_at(const sc_core::sc_time& t) const {
    // largest n with floor(n*T/f) <= v  <=>  n*T < (v+1)*f
    const std::uint64_t v64 = t.value();
    if (v64 < std::numeric_limits<std::uint64_t>::max() / frequency_hz_)
        return ((v64 + 1) * frequency_hz_ - 1) / ticks_per_second_;
    const u128 v = v64;
    return checked(((v + 1) * frequency_hz_ - 1) / ticks_per_second_);
}

std::uint64_t ClockDomain::next_cycle(const sc_core::sc_time& t) const {
    // smallest n with floor(n*T/f) >= v  <=>  n*T >= v*f
    const std::uint64_t v64 = t.value();
    if (v64 < (std::numeric_limits<std::uint64_t>::max() - ticks_per_second_) / frequency_hz_)
        return (v64 * frequency_hz_ + ticks_per_second_ - 1) / ticks_per_second_;
    const u128 v = v64;
    return checked((v * frequency_hz_ + ticks_per_second_ - 1) / ticks_per_second_);
}

sc_core::sc_time ClockDomain::next_edge(const sc_core::sc_time& t) const {
    return time_of_cycle(next_cycle(t));
}

sc_core::sc_time ClockDomain::delay_until(const sc_core::sc_time& t, std::uint64_t cycles) const {
    return time_of_cycle(next_cycle(t) + cycles) - t;
}

}  // namespace gpuvp
