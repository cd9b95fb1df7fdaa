#include "integrity/source_text.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace anvil {
namespace {

constexpr size_t kMaxRawDelimiter = 16;

}  // namespace

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t begin = 0; begin <= text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string StripCommentsAndLiterals(std::string_view in, std::vector<std::pair<size_t, size_t>>* strings) {
  std::string out(in);
  const size_t n = in.size();
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  auto literal_end = [&](size_t from, char quote) {  // One past the closing quote, or the end of the line.
    size_t j = from + 1;
    while (j < n && in[j] != quote && in[j] != '\n') j += (in[j] == '\\' && j + 1 < n) ? 2 : 1;
    return j < n && in[j] == quote ? j + 1 : j;
  };
  bool line_start = true;
  bool include_line = false;
  size_t i = 0;
  while (i < n) {
    const char c = in[i];
    if (c == '\n') {
      line_start = true;
      include_line = false;
      ++i;
      continue;
    }
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      size_t j = i + 1;
      while (j < n && IsSpace(in[j])) ++j;
      include_line = in.substr(j, 7) == "include";
    }
    line_start = false;
    if (c == '/' && i + 1 < n && (in[i + 1] == '/' || in[i + 1] == '*')) {
      size_t j;
      if (in[i + 1] == '*') {
        const size_t e = in.find("*/", i + 2);
        j = e == std::string_view::npos ? n : e + 2;
      } else {
        j = i;
        while (j < n && in[j] != '\n') j += (in[j] == '\\' && j + 1 < n && in[j + 1] == '\n') ? 2 : 1;
      }
      blank(i, j);
      i = j;
    } else if (c == '"' && !include_line) {
      size_t start = i;
      while (start > 0 && IsIdentChar(in[start - 1])) --start;
      const std::string_view prefix = in.substr(start, i - start);
      const size_t open = in.substr(0, i + 2 + kMaxRawDelimiter).find('(', i + 1);
      size_t j = literal_end(i, '"');
      if (!prefix.empty() && prefix.back() == 'R' && open != std::string_view::npos) {
        const std::string closing = ")" + std::string(in.substr(i + 1, open - i - 1)) + "\"";
        const size_t e = in.find(closing, open + 1);
        j = e == std::string_view::npos ? n : e + closing.size();
      }
      if (strings != nullptr) strings->emplace_back(i, j);
      blank(i, j);
      i = j;
    } else if (c == '\'') {
      const size_t j = literal_end(i, '\'');
      blank(i, j);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !IsIdentChar(in[i - 1]))) {
      size_t j = i + 1;
      while (j < n && (IsIdentChar(in[j]) || in[j] == '.' || in[j] == '\'' ||
                       ((in[j] == '+' || in[j] == '-') && std::strchr("eEpP", in[j - 1]) != nullptr))) {
        ++j;
      }
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> tokens;
  int line = 1;
  size_t line_begin = 0;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      line_begin = ++i;
      continue;
    }
    if (IsSpace(c) || c == '\\') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    const bool ident = IsIdentChar(c);
    if (ident) {
      while (j < s.size() && IsIdentChar(s[j])) ++j;
    } else if (j < s.size() && ((c == ':' && s[j] == ':') || (c == '-' && s[j] == '>') || (c == '#' && s[j] == '#'))) {
      ++j;
    }
    const bool number = std::isdigit(static_cast<unsigned char>(c));
    tokens.push_back({s.substr(i, j - i), line, static_cast<int>(i - line_begin) + 1, ident && !number});
    i = j;
  }
  return tokens;
}

}  // namespace anvil
