// Comparison of device results against the CPU reference. Exact comparisons are bitwise (so
// -0.0 vs +0.0 and NaN payloads count); tolerant ones take a relative bound that each workload
// justifies where it calls them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/workload.h"

namespace gpuvp::workloads {

class Check {
 public:
  // Bitwise equality, element by element.
  template <typename T>
  void exact(const std::string& label, const std::vector<T>& got, const std::vector<T>& want) {
    static_assert(std::is_trivially_copyable_v<T>, "exact() compares object bytes");
    if (!sizes_match(label, got.size(), want.size())) return;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ++compared_;
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) mismatch(label, i, got[i], want[i]);
    }
  }
  template <typename T>
  void exact(const std::string& label, T got, T want) {
    exact(label, std::vector<T>{got}, std::vector<T>{want});
  }

  // |got - want| <= relative * |want| + absolute, element by element; NaN never passes.
  template <typename T>
  void close(const std::string& label, const std::vector<T>& got, const std::vector<T>& want,
             double relative, double absolute = 0.0) {
    static_assert(std::is_floating_point_v<T>, "close() is for floating point");
    if (!sizes_match(label, got.size(), want.size())) return;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ++compared_;
      const double g = static_cast<double>(got[i]);
      const double w = static_cast<double>(want[i]);
      const double error = std::fabs(g - w);
      const double bound = relative * std::fabs(w) + absolute;
      if (std::fabs(w) > 0.0 && error / std::fabs(w) > max_relative_error_) max_relative_error_ = error / std::fabs(w);
      if (!(error <= bound)) mismatch(label, i, got[i], want[i]);
    }
  }
  template <typename T>
  void close(const std::string& label, T got, T want, double relative, double absolute = 0.0) {
    close(label, std::vector<T>{got}, std::vector<T>{want}, relative, absolute);
  }

  void expect(bool condition, const std::string& message) {
    ++compared_;
    if (!condition) record_failure(message);
  }

  bool passed() const { return failures_ == 0; }

  // `what` describes the run (sizes, launch shape); the check's outcome is appended.
  WorkloadResult result(const std::string& what) const {
    std::ostringstream line;
    line << what << "; ";
    if (passed()) {
      line << compared_ << " values match";
      if (max_relative_error_ > 0.0) line << " (max rel err " << max_relative_error_ << ")";
    } else {
      line << failures_ << " of " << compared_ << " values differ, first: " << first_failures_;
    }
    return {passed(), line.str()};
  }

 private:
  bool sizes_match(const std::string& label, std::size_t got, std::size_t want) {
    if (got == want) return true;
    ++compared_;
    std::ostringstream message;
    message << label << " size " << got << " != " << want;
    record_failure(message.str());
    return false;
  }

  template <typename T>
  void mismatch(const std::string& label, std::size_t index, T got, T want) {
    if (failures_ < kReportedFailures) {
      std::ostringstream message;
      message.precision(17);
      message << label << "[" << index << "] = " << printable(got) << ", expected " << printable(want);
      record_failure(message.str());
    } else {
      ++failures_;
    }
  }
  void record_failure(const std::string& message) {
    if (failures_ < kReportedFailures) first_failures_ += (failures_ == 0 ? "" : "; ") + message;
    ++failures_;
  }
  // Print bytes as numbers, not characters.
  template <typename T>
  static auto printable(T value) {
    if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
      return static_cast<int>(value);
    } else {
      return value;
    }
  }

  static constexpr std::size_t kReportedFailures = 3;  // enough to see a pattern, short enough for one line
  std::size_t compared_ = 0;
  std::size_t failures_ = 0;
  double max_relative_error_ = 0.0;
  std::string first_failures_;
};

inline std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

}  // namespace gpuvp::workloads
