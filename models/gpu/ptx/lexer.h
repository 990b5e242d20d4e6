// Tokenizer for PTX text (private). Produces all tokens up front; bounded by input size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvp::ptx::lex {

enum class TokenKind : uint8_t {
  kEnd,
  kIdentifier,  // names, opcodes with their dotted modifiers, %registers, $labels
  kDirective,   // .reg, .global, .b32 ...
  kInteger,     // 42, 0x2A, 052, 0b101 (value in integer)
  kFloat32,     // 0fXXXXXXXX (bits in integer)
  kFloat64,     // 0dXXXXXXXXXXXXXXXX or a decimal float (bits in integer)
  kString,      // "..." (text without quotes)
  kPunct,       // one character: , ; : { } [ ] ( ) + - < > = @ ! |
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  int line = 1;
  int column = 1;
  uint64_t integer = 0;
  char punct = 0;
};

struct LexError {
  int line = 0;
  int column = 0;
  std::string message;
};

// Returns false and fills error on malformed input.
bool tokenize(std::string_view text, std::vector<Token>& tokens, LexError& error);

}  // namespace gpuvp::ptx::lex
