// A parsed and decoded PTX module: the public view (kernels, their parameters, module
// variables). The decoded instruction stream itself lives in the private internal form.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvp::ptx {

namespace ir {
struct Program;
}

// Malformed PTX or an instruction the executor does not support. what() reads
// "file:line:col: message" so editors and CI logs can jump to it.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, int line, int column, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  // The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

// One .param of a kernel, laid out as the PTX declares it (offsets follow alignment).
struct KernelParam {
  std::string name;
  uint32_t offset = 0;     // byte offset in the parameter buffer
  uint32_t size = 0;       // bytes
  uint32_t alignment = 1;  // bytes
};

struct Kernel {
  std::string name;                 // the .entry name (mangled, as in the PTX)
  std::vector<KernelParam> params;  // in declaration order
  uint32_t param_bytes = 0;         // size of the whole parameter buffer
  uint32_t static_shared_bytes = 0;
  int max_threads_per_cta = 0;      // .maxntid product, 0 when not given
  uint32_t function_index = 0;      // internal: index of the function in the module
  // It, or a function it calls, has texture or surface instructions (whose timing is
  // approximate: see texture.h).
  bool uses_textures = false;
};

// A module-scope .global or .const variable.
struct ModuleVariable {
  enum class Space { kGlobal, kConst };
  std::string name;
  Space space = Space::kGlobal;
  uint64_t size = 0;
  uint32_t alignment = 1;
  std::vector<uint8_t> initializer;  // empty: zero-initialised
};

class Module {
 public:
  // Parses and decodes a whole module. Throws ParseError ("file:line:col: message") for
  // malformed input or unsupported instructions; never crashes or hangs on bad input.
  static Module parse(std::string_view text, std::string_view file_name = "<ptx>");

  const Kernel* find_kernel(std::string_view entry_name) const;  // nullptr when absent
  const std::vector<Kernel>& kernels() const;
  const std::vector<ModuleVariable>& variables() const;
  const std::string& file_name() const;
  uint32_t ptx_version_major() const;
  uint32_t ptx_version_minor() const;
  const std::string& target() const;  // e.g. "sm_75"

  // Internal form for the executor.
  const ir::Program& program() const { return *program_; }

 private:
  explicit Module(std::shared_ptr<const ir::Program> program);
  std::shared_ptr<const ir::Program> program_;  // immutable, shared by copies
};

}  // namespace gpuvp::ptx
