#include "models/gpu/ptx/lexer.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuvp::ptx::lex {
namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view text, std::vector<Token>& tokens, LexError& error)
      : text_(text), tokens_(tokens), error_(error) {}

  bool run() {
    while (true) {
      skip_space_and_comments();
      if (failed_) return false;
      if (pos_ >= text_.size()) break;
      if (!next_token()) return false;
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.line = line_;
    end.column = column();
    tokens_.push_back(end);
    return true;
  }

 private:
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  bool fail(int line, int col, std::string message) {
    error_.line = line;
    error_.column = col;
    error_.message = std::move(message);
    failed_ = true;
    return false;
  }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '/' && at(pos_ + 1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && at(pos_ + 1) == '*') {
        int line = line_, col = column();
        pos_ += 2;
        bool closed = false;
        while (pos_ < text_.size()) {
          if (text_[pos_] == '*' && at(pos_ + 1) == '/') {
            pos_ += 2;
            closed = true;
            break;
          }
          advance();
        }
        if (!closed) {
          fail(line, col, "unterminated /* comment");
          return;
        }
      } else {
        return;
      }
    }
  }

  void push(TokenKind kind, size_t start, int line, int col, uint64_t value = 0, char punct = 0) {
    Token token;
    token.kind = kind;
    token.text = text_.substr(start, pos_ - start);
    token.line = line;
    token.column = col;
    token.integer = value;
    token.punct = punct;
    tokens_.push_back(token);
  }

  bool next_token() {
    const size_t start = pos_;
    const int line = line_, col = column();
    const char c = text_[pos_];
    if (is_ident_start(c)) {
      ++pos_;
      // Opcodes carry dotted modifiers, some with "::" (ld.global.L1::no_allocate).
      while (pos_ < text_.size()) {
        char d = text_[pos_];
        if (is_ident_char(d) || d == '.') {
          ++pos_;
        } else if (d == ':' && at(pos_ + 1) == ':') {
          pos_ += 2;
        } else {
          break;
        }
      }
      push(TokenKind::kIdentifier, start, line, col);
      return true;
    }
    if (c == '.' && (is_ident_start(at(pos_ + 1)) || is_digit(at(pos_ + 1)))) {
      ++pos_;
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      push(TokenKind::kDirective, start, line, col);
      return true;
    }
    if (is_digit(c)) return number(start, line, col);
    if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\n') return fail(line, col, "unterminated string literal");
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        ++pos_;
      }
      if (pos_ >= text_.size()) return fail(line, col, "unterminated string literal");
      ++pos_;
      Token token;
      token.kind = TokenKind::kString;
      token.text = text_.substr(start + 1, pos_ - start - 2);
      token.line = line;
      token.column = col;
      tokens_.push_back(token);
      return true;
    }
    static constexpr const char* kPunct = ",;:{}[]()+-<>=@!|";
    if (std::strchr(kPunct, c) != nullptr && c != '\0') {
      ++pos_;
      push(TokenKind::kPunct, start, line, col, 0, c);
      return true;
    }
    if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) {
      return fail(line, col, std::string("unexpected character '") + c + "'");
    }
    return fail(line, col, "unexpected byte 0x" + to_hex(static_cast<unsigned char>(c)));
  }

  static std::string to_hex(unsigned value) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out += kDigits[(value >> 4) & 15];
    out += kDigits[value & 15];
    return out;
  }

  bool number(size_t start, int line, int col) {
    const char c1 = at(pos_ + 1);
    if (text_[pos_] == '0' && (c1 == 'f' || c1 == 'F' || c1 == 'd' || c1 == 'D')) {
      const bool single = (c1 == 'f' || c1 == 'F');
      const size_t digits = single ? 8 : 16;
      pos_ += 2;
      uint64_t bits = 0;
      for (size_t i = 0; i < digits; ++i) {
        int h = hex_value(at(pos_));
        if (h < 0) return fail(line, col, std::string("malformed ") + (single ? "0f" : "0d") +
                                              " float literal: expected " + std::to_string(digits) +
                                              " hex digits");
        bits = (bits << 4) | static_cast<uint64_t>(h);
        ++pos_;
      }
      if (is_ident_char(at(pos_))) return fail(line, col, "malformed float literal");
      push(single ? TokenKind::kFloat32 : TokenKind::kFloat64, start, line, col, bits);
      return true;
    }
    if (text_[pos_] == '0' && (c1 == 'x' || c1 == 'X' || c1 == 'b' || c1 == 'B')) {
      const unsigned base = (c1 == 'x' || c1 == 'X') ? 16 : 2;
      pos_ += 2;
      uint64_t value = 0;
      size_t count = 0;
      while (true) {
        int h = hex_value(at(pos_));
        if (h < 0 || static_cast<unsigned>(h) >= base) break;
        if (value > (~0ULL - static_cast<unsigned>(h)) / base) return fail(line, col, "integer literal out of range");
        value = value * base + static_cast<unsigned>(h);
        ++pos_;
        ++count;
      }
      if (count == 0) return fail(line, col, "malformed integer literal");
      if (at(pos_) == 'U' || at(pos_) == 'u') ++pos_;
      if (is_ident_char(at(pos_))) return fail(line, col, "malformed integer literal");
      push(TokenKind::kInteger, start, line, col, value);
      return true;
    }
    size_t end = pos_;
    while (is_digit(at(end))) ++end;
    bool is_float = false;
    if (at(end) == '.' && is_digit(at(end + 1))) {
      is_float = true;
      ++end;
      while (is_digit(at(end))) ++end;
    }
    if ((at(end) == 'e' || at(end) == 'E') &&
        (is_digit(at(end + 1)) || ((at(end + 1) == '-' || at(end + 1) == '+') && is_digit(at(end + 2))))) {
      is_float = true;
      end += 2;
      while (is_digit(at(end))) ++end;
    }
    if (is_float) {
      std::string literal(text_.substr(pos_, end - pos_));
      double value = std::strtod(literal.c_str(), nullptr);
      uint64_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      pos_ = end;
      if (is_ident_char(at(pos_))) return fail(line, col, "malformed float literal");
      push(TokenKind::kFloat64, start, line, col, bits);
      return true;
    }
    // Decimal (or octal with a leading 0, as in C).
    const unsigned base = (text_[pos_] == '0' && end - pos_ > 1) ? 8 : 10;
    uint64_t value = 0;
    for (size_t i = pos_; i < end; ++i) {
      unsigned d = static_cast<unsigned>(text_[i] - '0');
      if (d >= base) return fail(line, col, "malformed octal literal");
      if (value > (~0ULL - d) / base) return fail(line, col, "integer literal out of range");
      value = value * base + d;
    }
    pos_ = end;
    if (at(pos_) == 'U' || at(pos_) == 'u') ++pos_;
    if (is_ident_char(at(pos_)) || at(pos_) == '.') return fail(line, col, "malformed number");
    push(TokenKind::kInteger, start, line, col, value);
    return true;
  }

  std::string_view text_;
  std::vector<Token>& tokens_;
  LexError& error_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  bool failed_ = false;
};

}  // namespace

bool tokenize(std::string_view text, std::vector<Token>& tokens, LexError& error) {
  tokens.clear();
  Lexer lexer(text, tokens, error);
  return lexer.run();
}

}  // namespace gpuvp::ptx::lex
