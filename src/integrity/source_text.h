// The lexical layer of the C++/CUDA source scan (source_scan.h): lines, comments and literals blanked at
// their byte offsets, and tokens. Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anvil {

// The lines of `text`, without their newlines (views into it).
std::vector<std::string_view> SplitLines(std::string_view text);

bool IsIdentChar(char c);
bool IsSpace(char c);  // Horizontal space: not a newline.

// Blanks comments and string/character literals (newlines and byte offsets are kept), except the path of an
// #include. pp-numbers are skipped whole, so digit separators (1'000) are not read as character literals.
// `strings` gets each string literal's [begin, end) in `in`.
std::string StripCommentsAndLiterals(std::string_view in, std::vector<std::pair<size_t, size_t>>* strings);

struct Token {
  std::string_view text;
  int line = 0;
  int column = 0;
  bool ident = false;
};

// The tokens of `s` (a text StripCommentsAndLiterals made): identifiers, numbers, `::`, `->`, `##` and single
// punctuation characters, with their 1-based line and column.
std::vector<Token> Tokenize(std::string_view s);

}  // namespace anvil
