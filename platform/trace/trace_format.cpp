#include "platform/trace/trace_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstring>
#include <set>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::trace {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "compact traces are little-endian as stored in memory");

constexpr char kMagic[8] = {'G', 'P', 'U', 'V', 'P', 'T', 'R', '1'};
enum Tag : uint8_t { kLink = 1, kKernelName = 2, kCounterTrack = 3, kTransaction = 4, kSpan = 5, kCounter = 6 };

// Process ids in the JSON: the GPU (kernels, counters), one per SM, one per link.
constexpr uint64_t kGpuPid = 1;
constexpr uint64_t kSmPid = 100;
constexpr uint64_t kLinkPid = 100000;

class File {
 public:
  explicit File(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (file_ == nullptr) throw TraceError(path + ": cannot open the trace file for writing");
  }
  ~File() {
    if (file_ != nullptr) std::fclose(file_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  void write(const void* data, size_t bytes) {
    if (std::fwrite(data, 1, bytes, file_) != bytes) failed_ = true;
  }
  void close() {
    const bool bad = failed_ || std::fclose(file_) != 0;
    file_ = nullptr;
    if (bad) throw TraceError(path_ + ": error writing the trace file");
  }

 private:
  std::string path_;
  std::FILE* file_;
  bool failed_ = false;
};

// Short text built in place (snprintf), appended to a buffer flushed in large pieces.
class Buffer {
 public:
  explicit Buffer(File& file) : file_(file) { text_.reserve(kFlushAt + 4096); }
  void add(const char* text, size_t n) {
    text_.append(text, n);
    if (text_.size() >= kFlushAt) flush();
  }
  void add(const std::string& text) { add(text.data(), text.size()); }
  __attribute__((format(printf, 2, 3))) void printf(const char* format, ...) {
    char line[2048];
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n >= 0 && static_cast<size_t>(n) < sizeof line) {
      add(line, static_cast<size_t>(n));
    } else if (n > 0) {  // longer than the line buffer (a long kernel name): format again in full
      std::string text(static_cast<size_t>(n) + 1, '\0');
      std::vsnprintf(text.data(), text.size(), format, again);
      add(text.data(), static_cast<size_t>(n));
    }
    va_end(again);
  }
  void flush() {
    file_.write(text_.data(), text_.size());
    text_.clear();
  }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  File& file_;
  std::string text_;
};

// ps as microseconds with six decimals: exact, and the same text on every run.
std::string us(uint64_t ps) {
  char text[48];
  std::snprintf(text, sizeof text, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The part of a socket path after the last two dots' owner, e.g. "core.sm_3.mem" -> "sm_3.mem".
std::string short_name(const std::string& path) {
  const size_t last = path.rfind('.');
  if (last == std::string::npos || last == 0) return path;
  const size_t before = path.rfind('.', last - 1);
  return before == std::string::npos ? path : path.substr(before + 1);
}

const char* command_name(uint8_t c) {
  switch (c) {
    case 0: return "read";
    case 1: return "write";
    default: return "ignore";
  }
}

const char* status_name(int8_t s) {
  switch (s) {
    case 1: return "OK";
    case 0: return "INCOMPLETE";
    case -1: return "GENERIC_ERROR";
    case -2: return "ADDRESS_ERROR";
    case -3: return "COMMAND_ERROR";
    case -4: return "BURST_ERROR";
    case -5: return "BYTE_ENABLE_ERROR";
    default: return "?";
  }
}

class JsonTraceWriter : public TraceWriter {
 public:
  explicit JsonTraceWriter(const std::string& path) : file_(path), out_(file_) {
    out_.add(std::string("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpuvp\"},\"traceEvents\":[\n"));
  }

  void link(uint32_t id, const std::string& initiator, const std::string& target, const std::string& kind) override {
    links_[id] = Link{initiator, target, kind};
  }
  void kernel_name(uint64_t id, const std::string& name) override { kernels_[id] = name; }
  void counter_track(uint32_t id, const std::string& name, const std::string& unit) override {
    counters_[id] = {name, unit};
  }

  void transaction(const TransactionRecord& r) override {
    const uint64_t pid = kLinkPid + r.link;
    lanes_[pid].insert(r.lane);
    separator();
    out_.printf("{\"ph\":\"X\",\"cat\":\"tlm\",\"name\":\"%s 0x%" PRIx64 "\",\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":%s,"
                "\"dur\":%s,\"args\":{\"command\":\"%s\",\"address\":\"0x%" PRIx64 "\",\"size\":%u,"
                "\"status\":\"%s\",\"latency_ns\":%s,\"begin_req_us\":%s,\"end_req_us\":%s,\"begin_resp_us\":%s,"
                "\"end_us\":%s",
                command_name(r.command), r.address, pid, r.lane, us(r.begin_ps).c_str(),
                us(r.end_ps - r.begin_ps).c_str(), command_name(r.command), r.address, r.length, status_name(r.status),
                ns(r.begin_resp_ps - r.begin_ps).c_str(), us(r.begin_ps).c_str(), us(r.end_req_ps).c_str(),
                us(r.begin_resp_ps).c_str(), us(r.end_ps).c_str());
    if (r.byte_enables != kNoId) out_.printf(",\"byte_enables\":%u", r.byte_enables);
    if (r.has_extension != 0) {
      out_.printf(",\"kind\":\"%s\",\"sector_mask\":\"0x%x\"", to_string(static_cast<AccessKind>(r.kind)),
                  static_cast<unsigned>(r.sector_mask));
      if (r.sm != kNoId) out_.printf(",\"sm\":%u", r.sm);
      if (r.warp != kNoId) out_.printf(",\"warp\":%u", r.warp);
      if (r.cta != kNoId) out_.printf(",\"cta\":%u", r.cta);
      if (r.kernel_id != 0) out_.printf(",\"kernel\":%" PRIu64, r.kernel_id);
    }
    out_.add("}}", 2);
    // Phases inside the transaction, nested in its span: waiting for END_REQ, and the
    // response's handshake when it took time.
    if (r.end_req_ps > r.begin_ps) {
      out_.printf(",\n{\"ph\":\"X\",\"cat\":\"tlm\",\"name\":\"request\",\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":%s,"
                  "\"dur\":%s}",
                  pid, r.lane, us(r.begin_ps).c_str(), us(r.end_req_ps - r.begin_ps).c_str());
    }
    if (r.end_ps > r.begin_resp_ps) {
      out_.printf(",\n{\"ph\":\"X\",\"cat\":\"tlm\",\"name\":\"response\",\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":%s,"
                  "\"dur\":%s}",
                  pid, r.lane, us(r.begin_resp_ps).c_str(), us(r.end_ps - r.begin_resp_ps).c_str());
    }
  }

  void span(const SpanRecord& r) override {
    separator();
    const auto name = kernels_.find(r.kernel_id);
    const std::string kernel = name != kernels_.end() ? name->second : "kernel " + std::to_string(r.kernel_id);
    if (r.sm == kNoId) {
      has_kernels_ = true;
      out_.printf("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":%s,\"pid\":%" PRIu64 ",\"tid\":0,\"ts\":%s,\"dur\":%s,"
                  "\"args\":{\"kernel\":%" PRIu64 "}}",
                  json_string(kernel).c_str(), kGpuPid, us(r.begin_ps).c_str(), us(r.end_ps - r.begin_ps).c_str(),
                  r.kernel_id);
    } else {
      const uint64_t pid = kSmPid + r.sm;
      lanes_[pid].insert(r.lane);
      out_.printf("{\"ph\":\"X\",\"cat\":\"cta\",\"name\":%s,\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":%s,\"dur\":%s,"
                  "\"args\":{\"kernel\":%" PRIu64 ",\"cta\":%" PRIu64 ",\"sm\":%u}}",
                  json_string("cta " + std::to_string(r.cta)).c_str(), pid, r.lane, us(r.begin_ps).c_str(),
                  us(r.end_ps - r.begin_ps).c_str(), r.kernel_id, r.cta, r.sm);
    }
  }

  void counter(const CounterRecord& r) override {
    const auto track = counters_.find(r.track);
    if (track == counters_.end()) return;
    separator();
    out_.printf("{\"ph\":\"C\",\"name\":%s,\"pid\":%" PRIu64 ",\"ts\":%s,\"args\":{%s:%.6g}}",
                json_string(track->second.first).c_str(), kGpuPid, us(r.ts_ps).c_str(),
                json_string(track->second.second).c_str(), r.value);
  }

  void finish() override {
    // Names and order of the processes and threads, after the events (viewers accept any order).
    metadata(kGpuPid, 0, "gpu", "kernels", 0, true);
    for (const auto& [pid, lanes] : lanes_) {
      std::string process;
      std::string thread;
      if (pid >= kLinkPid) {
        const Link& l = links_[static_cast<uint32_t>(pid - kLinkPid)];
        process = l.kind + ": " + short_name(l.initiator) + " -> " + short_name(l.target);
        thread = "lane ";
      } else {
        process = "sm_" + std::to_string(pid - kSmPid);
        thread = "ctas ";
      }
      for (const uint32_t lane : lanes) {
        metadata(pid, lane, process, thread + std::to_string(lane), pid, lane == *lanes.begin());
      }
    }
    out_.add(std::string("\n]}\n"));
    out_.flush();
    file_.close();
  }

 private:
  struct Link {
    std::string initiator, target, kind;
  };

  static std::string ns(uint64_t ps) {
    char text[48];
    std::snprintf(text, sizeof text, "%" PRIu64 ".%03" PRIu64, ps / 1000, ps % 1000);
    return text;
  }

  void separator() {
    if (!first_) out_.add(",\n", 2);
    first_ = false;
  }

  // `first`: the process's first thread, which also names and orders the process.
  void metadata(uint64_t pid, uint32_t tid, const std::string& process, const std::string& thread, uint64_t order,
                bool first) {
    if (first) {
      separator();
      out_.printf("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu64 ",\"args\":{\"name\":%s}}", pid,
                  json_string(process).c_str());
      separator();
      out_.printf("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRIu64 ",\"args\":{\"sort_index\":%" PRIu64
                  "}}",
                  pid, order);
    }
    separator();
    out_.printf("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu64 ",\"tid\":%u,\"args\":{\"name\":%s}}", pid,
                tid, json_string(thread).c_str());
  }

  File file_;
  Buffer out_;
  bool first_ = true;
  bool has_kernels_ = false;
  std::map<uint32_t, Link> links_;
  std::map<uint64_t, std::string> kernels_;
  std::map<uint32_t, std::pair<std::string, std::string>> counters_;
  // pid -> the lanes its records used (a recorder's are 0..n-1; a file's may name any, and only
  // those get thread names, so a stray lane number costs one line, not billions)
  std::map<uint64_t, std::set<uint32_t>> lanes_;
};

class CompactTraceWriter : public TraceWriter {
 public:
  explicit CompactTraceWriter(const std::string& path) : file_(path), out_(file_) { out_.add(kMagic, sizeof kMagic); }

  void link(uint32_t id, const std::string& initiator, const std::string& target, const std::string& kind) override {
    tag(kLink);
    raw(id);
    text(initiator);
    text(target);
    text(kind);
  }
  void kernel_name(uint64_t id, const std::string& name) override {
    tag(kKernelName);
    raw(id);
    text(name);
  }
  void counter_track(uint32_t id, const std::string& name, const std::string& unit) override {
    tag(kCounterTrack);
    raw(id);
    text(name);
    text(unit);
  }
  void transaction(const TransactionRecord& r) override {
    tag(kTransaction);
    raw(r);
  }
  void span(const SpanRecord& r) override {
    tag(kSpan);
    raw(r);
  }
  void counter(const CounterRecord& r) override {
    tag(kCounter);
    raw(r);
  }
  void finish() override {
    out_.flush();
    file_.close();
  }

 private:
  void tag(Tag t) { out_.add(reinterpret_cast<const char*>(&t), 1); }
  template <typename T>
  void raw(const T& value) {
    out_.add(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void text(const std::string& s) {
    raw(static_cast<uint32_t>(s.size()));
    out_.add(s.data(), s.size());
  }

  File file_;
  Buffer out_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw TraceError(path + ": cannot open the trace file");
  }
  ~Reader() { std::fclose(file_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // False at a clean end of file.
  bool tag(uint8_t& t) {
    const size_t n = std::fread(&t, 1, 1, file_);
    offset_ += n;
    return n == 1;
  }
  template <typename T>
  void raw(T& value) {
    bytes(&value, sizeof value);
  }
  std::string text() {
    uint32_t size = 0;
    raw(size);
    if (size > (1u << 20)) fail("a name longer than 1 MiB");
    std::string s(size, '\0');
    bytes(s.data(), size);
    return s;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw TraceError(path_ + ": not a gpuvp compact trace: " + why + " at byte " + std::to_string(offset_));
  }

 private:
  void bytes(void* data, size_t size) {
    if (std::fread(data, 1, size, file_) != size) fail("the file ends inside a record");
    offset_ += size;
  }
  std::string path_;
  std::FILE* file_;
  uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<TraceWriter> make_json_writer(const std::string& path) { return std::make_unique<JsonTraceWriter>(path); }
std::unique_ptr<TraceWriter> make_compact_writer(const std::string& path) {
  return std::make_unique<CompactTraceWriter>(path);
}
std::unique_ptr<TraceWriter> make_writer(const std::string& path) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return json ? make_json_writer(path) : make_compact_writer(path);
}

void convert_compact_trace(const std::string& path, TraceWriter& out) {
  Reader in(path);
  char magic[sizeof kMagic] = {};
  uint8_t first = 0;
  if (!in.tag(first)) in.fail("the file is empty");
  magic[0] = static_cast<char>(first);
  for (size_t i = 1; i < sizeof magic; ++i) {
    uint8_t c = 0;
    if (!in.tag(c)) in.fail("the header is cut short");
    magic[i] = static_cast<char>(c);
  }
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) in.fail("wrong magic (expected GPUVPTR1)");
  uint8_t t = 0;
  while (in.tag(t)) {
    switch (t) {
      case kLink: {
        uint32_t id = 0;
        in.raw(id);
        std::string initiator = in.text();
        std::string target = in.text();
        out.link(id, initiator, target, in.text());
        break;
      }
      case kKernelName: {
        uint64_t id = 0;
        in.raw(id);
        out.kernel_name(id, in.text());
        break;
      }
      case kCounterTrack: {
        uint32_t id = 0;
        in.raw(id);
        std::string name = in.text();
        out.counter_track(id, name, in.text());
        break;
      }
      case kTransaction: {
        TransactionRecord r;
        in.raw(r);
        out.transaction(r);
        break;
      }
      case kSpan: {
        SpanRecord r;
        in.raw(r);
        out.span(r);
        break;
      }
      case kCounter: {
        CounterRecord r;
        in.raw(r);
        out.counter(r);
        break;
      }
      default:
        in.fail("unknown record tag " + std::to_string(t));
    }
  }
  out.finish();
}

}  // namespace gpuvp::trace
