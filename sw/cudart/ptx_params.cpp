#include "sw/cudart/ptx_params.h"

#include <cctype>
#include <cstring>

namespace gpuvp::cudart {
namespace {

uint32_t type_bytes(const std::string& type) {
  // .u8 .s16 .b32 .f64 .pred ...
  if (type == ".pred") return 1;
  std::size_t i = 2;
  while (i < type.size() && !std::isdigit(static_cast<unsigned char>(type[i]))) ++i;
  if (i >= type.size()) return 0;
  const unsigned long bits = std::strtoul(type.c_str() + i, nullptr, 10);
  return static_cast<uint32_t>(bits / 8);
}

bool is_type(const std::string& token) {
  static const char* const kPrefixes[] = {".u", ".s", ".b", ".f"};
  if (token == ".pred") return true;
  for (const char* prefix : kPrefixes) {
    if (token.rfind(prefix, 0) == 0 && token.size() > 2 && std::isdigit(static_cast<unsigned char>(token[2]))) return true;
  }
  return false;
}

std::vector<std::string> split_tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

// Removes // and /* */ comments.
std::string strip_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      out.push_back('\n');
    } else if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < text.size() && !(text[i] == '*' && text[i + 1] == '/')) ++i;
      ++i;
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

bool parse_param(const std::string& decl, PtxParam& param) {
  // ".param .align 8 .b8 name[16]" | ".param .u64 .ptr .global .align 4 name" | ".param .u32 name"
  const std::vector<std::string> tokens = split_tokens(decl);
  if (tokens.empty() || tokens[0] != ".param") return false;
  uint32_t explicit_align = 0;
  uint32_t element = 0;
  std::string name;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token == ".align" && i + 1 < tokens.size()) {
      explicit_align = static_cast<uint32_t>(std::strtoul(tokens[i + 1].c_str(), nullptr, 10));
      ++i;
    } else if (is_type(token)) {
      element = type_bytes(token);
    } else if (!token.empty() && token[0] != '.') {
      name = token;
    }
  }
  if (element == 0 || name.empty()) return false;
  uint32_t count = 1;
  const std::size_t bracket = name.find('[');
  if (bracket != std::string::npos) {
    count = static_cast<uint32_t>(std::strtoul(name.c_str() + bracket + 1, nullptr, 10));
  }
  param.size = element * count;
  // A .ptr's .align describes the pointee; the parameter itself aligns to its type.
  const bool pointer = decl.find(".ptr") != std::string::npos;
  param.align = explicit_align != 0 && !pointer ? explicit_align : element;
  if (param.align == 0) param.align = 1;
  return true;
}

}  // namespace

std::map<std::string, PtxEntry> parse_ptx_entries(const std::string& ptx) {
  std::map<std::string, PtxEntry> entries;
  const std::string text = strip_comments(ptx);
  std::size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string::npos) {
    pos += 6;
    if (pos >= text.size() || std::isspace(static_cast<unsigned char>(text[pos])) == 0) continue;
    std::size_t name_begin = pos;
    while (name_begin < text.size() && std::isspace(static_cast<unsigned char>(text[name_begin])) != 0) ++name_begin;
    std::size_t name_end = name_begin;
    while (name_end < text.size() && text[name_end] != '(' && text[name_end] != '{' &&
           std::isspace(static_cast<unsigned char>(text[name_end])) == 0) {
      ++name_end;
    }
    const std::string name = text.substr(name_begin, name_end - name_begin);
    std::size_t cursor = name_end;
    while (cursor < text.size() && std::isspace(static_cast<unsigned char>(text[cursor])) != 0) ++cursor;
    PtxEntry entry;
    if (cursor < text.size() && text[cursor] == '(') {
      const std::size_t close = text.find(')', cursor);
      if (close == std::string::npos) break;
      const std::string list = text.substr(cursor + 1, close - cursor - 1);
      std::size_t start = 0;
      uint32_t offset = 0;
      uint32_t max_align = 1;
      bool ok = true;
      while (start <= list.size()) {
        std::size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string decl = list.substr(start, comma - start);
        if (decl.find_first_not_of(" \t\r\n") != std::string::npos) {
          PtxParam param;
          if (!parse_param(decl, param)) {
            ok = false;
            break;
          }
          offset = (offset + param.align - 1) / param.align * param.align;
          param.offset = offset;
          offset += param.size;
          if (param.align > max_align) max_align = param.align;
          entry.params.push_back(param);
        }
        start = comma + 1;
      }
      if (!ok) continue;
      entry.param_bytes = (offset + max_align - 1) / max_align * max_align;
      pos = close;
    }
    entries[name] = std::move(entry);
  }
  return entries;
}

void pack_arguments(const PtxEntry& entry, void* const* args, std::vector<uint8_t>& out) {
  out.assign(entry.param_bytes, 0);
  for (std::size_t i = 0; i < entry.params.size(); ++i) {
    const PtxParam& param = entry.params[i];
    if (args != nullptr && args[i] != nullptr) std::memcpy(out.data() + param.offset, args[i], param.size);
  }
}

}  // namespace gpuvp::cudart
