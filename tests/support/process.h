// Runs a command the way a user would, for end-to-end tests, with bounded time: stdout and
// stderr captured, the whole process group killed when the deadline passes, so that no test
// can hang.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gpuvp::test {

struct ProcessResult {
  int exit_code = -1;   // 128 + signal when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
};

class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});
  ~Process();  // kills the process group if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int pid() const { return pid_; }
  // Reads output until stdout contains `text`; false on timeout or when the process ended first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);
  // Waits for the process to end (killing its group at the deadline) and returns everything.
  ProcessResult finish(std::chrono::milliseconds timeout);
  const std::string& out() const { return result_.out; }

 private:
  void pump(int timeout_ms);
  int pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  ProcessResult result_;
};

inline ProcessResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env = {}) {
  Process process(argv, env);
  return process.finish(timeout);
}

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string output;  // stdout, then stderr
};

// Runs `command_line` through /bin/sh, killed after `timeout`.
CommandResult run_command(const std::string& command_line,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));

}  // namespace gpuvp::test
