#include "cache/byte_size.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace anvil {
namespace {

constexpr std::array<char, 5> kUnits = {'B', 'K', 'M', 'G', 'T'};
constexpr double kStep = 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The power of 1024 a suffix stands for ("", "b", "k", "kb", "kib", ...); -1 when none.
int SuffixPower(std::string_view suffix) {
  std::string lower;
  for (char c : suffix) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.empty() || lower == "b") return 0;
  for (std::size_t power = 1; power < kUnits.size(); ++power) {
    const std::string unit(1, static_cast<char>(std::tolower(kUnits[power])));
    if (lower == unit || lower == unit + "b" || lower == unit + "ib") return static_cast<int>(power);
  }
  return -1;
}

}  // namespace

Result<std::uintmax_t> ParseByteSize(std::string_view text) {
  const std::string_view s = Trim(text);
  const Status bad = Status::Error("'" + std::string(text) +
                                   "' is not a size: give a number of bytes with K, M, G or T after it "
                                   "(powers of 1024), e.g. 50G or 500M");
  std::size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) ++end;
  const std::string number(s.substr(0, end));
  if (number.empty() || number.find('.') != number.rfind('.') || number == ".") return bad;
  const int power = SuffixPower(Trim(s.substr(end)));
  if (power < 0) return bad;
  const double bytes = std::stod(number) * std::pow(kStep, power);
  if (bytes >= static_cast<double>(std::numeric_limits<std::uintmax_t>::max())) {
    return Status::Error("'" + std::string(text) + "' is too large a size");
  }
  return static_cast<std::uintmax_t>(bytes + 0.5);
}

std::string FormatBytes(std::uintmax_t bytes) {
  if (bytes < kStep) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t power = 0;
  while (value >= kStep && power + 1 < kUnits.size()) {
    value /= kStep;
    ++power;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %ciB", value, kUnits[power]);
  return text;
}

}  // namespace anvil
