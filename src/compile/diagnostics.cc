#include "compile/diagnostics.h"

#include <array>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <utility>

namespace anvil {
namespace {

// Context lines kept per diagnostic; template spew beyond this is noise.
constexpr std::size_t kMaxContextLines = 8;
// Line and column numbers longer than this are not numbers we believe.
constexpr std::size_t kMaxNumberDigits = 9;
constexpr char kEscape = '\x1b';

constexpr std::string_view kError = "error";
constexpr std::string_view kWarning = "warning";
constexpr std::string_view kNote = "note";
constexpr std::string_view kFatal = "fatal";
// Severity for kinds we recognize and skip (clang/nvcc remarks, ptxas info).
constexpr std::string_view kSkip = "";

struct SeverityWord {
  std::string_view word;
  std::string_view severity;
};
// Longest first so "fatal error" wins over "error".
constexpr std::array<SeverityWord, 7> kSeverityWords = {{
    {"catastrophic error", kFatal},
    {"internal error", kFatal},
    {"fatal error", kFatal},
    {"error", kError},
    {"warning", kWarning},
    {"note", kNote},
    {"remark", kSkip},
}};

// `ptxas error   : msg` and friends.
constexpr std::array<std::string_view, 7> kCudaTools = {"ptxas", "nvcc",     "nvlink",  "fatbinary",
                                                        "cicc",  "cudafe++", "nvdisasm"};
constexpr std::array<SeverityWord, 4> kCudaToolSeverities = {
    {{"error", kError}, {"fatal", kFatal}, {"warning", kWarning}, {"info", kSkip}}};

// Linker complaints that appear without any recognizable prefix.
constexpr std::array<std::string_view, 3> kLinkerBodies = {"undefined reference to ", "multiple definition of ",
                                                           "undefined symbol: "};

// Column-0 lines that end a diagnostic's context rather than extend it.
constexpr std::array<std::string_view, 6> kSummaryPrefixes = {
    "In file included from ", "Remark:", "FAILED:", "ninja:", "Traceback", "compilation terminated"};
constexpr std::array<std::string_view, 3> kSummaryInfixes = {" generated.", "detected in the compilation of", ": In "};

// Paths whose notes are dropped: toolchain, CUDA and Python-package headers.
constexpr std::array<std::string_view, 3> kSystemPrefixes = {"/usr/", "/opt/", "/lib/"};
constexpr std::array<std::string_view, 3> kSystemInfixes = {"/site-packages/", "/dist-packages/", "/include/c++/"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string_view Basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Drops ANSI color sequences (ESC '[' ... final letter) that -fdiagnostics-color adds.
std::string StripAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == kEscape && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !((line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= 'a' && line[i] <= 'z'))) {
        ++i;
      }
      continue;
    }
    out.push_back(line[i]);
  }
  return out;
}

// Parses up to kMaxNumberDigits digits at the start of `s`; returns how many were read.
std::size_t ParseNumber(std::string_view s, int* value) {
  std::size_t n = 0;
  int v = 0;
  while (n < s.size() && IsDigit(s[n]) && n < kMaxNumberDigits) {
    v = v * 10 + (s[n] - '0');
    ++n;
  }
  if (n < s.size() && IsDigit(s[n])) return 0;  // Too long to be a line number.
  *value = v;
  return n;
}

// Parses "error: msg", "fatal error: msg", "warning #177-D: msg", ... at the
// start of `rest`. Returns false when `rest` names no severity; sets
// *severity to kSkip for kinds that are recognized but not reported.
bool ParseSeverity(std::string_view rest, std::string_view* severity, std::string_view* message) {
  rest = TrimLeft(rest);
  for (const SeverityWord& sw : kSeverityWords) {
    if (!rest.starts_with(sw.word)) continue;
    std::string_view r = rest.substr(sw.word.size());
    if (r.starts_with(" #")) {  // nvcc diagnostic number, e.g. "#177-D".
      std::size_t end = 2;
      while (end < r.size() && r[end] != ':' && !IsSpace(r[end])) ++end;
      r.remove_prefix(end);
    }
    if (!r.starts_with(':')) return false;
    *severity = sw.severity;
    *message = TrimLeft(r.substr(1));
    return true;
  }
  return false;
}

struct Location {
  std::string_view file;
  int line = 0;
  int column = 0;
  std::string_view rest;  // What follows the location.
};

// gcc/clang: "file:line:col: rest" or "file:line: rest".
bool ParseGccLocation(std::string_view text, Location* loc) {
  for (std::size_t colon = text.find(':'); colon != std::string_view::npos; colon = text.find(':', colon + 1)) {
    if (colon == 0 || colon + 1 >= text.size() || !IsDigit(text[colon + 1])) continue;
    int line = 0;
    std::size_t pos = colon + 1;
    const std::size_t line_digits = ParseNumber(text.substr(pos), &line);
    if (line_digits == 0) continue;
    pos += line_digits;
    if (pos >= text.size() || text[pos] != ':') continue;
    ++pos;
    int column = 0;
    const std::size_t column_digits = ParseNumber(text.substr(pos), &column);
    if (column_digits > 0 && pos + column_digits < text.size() && text[pos + column_digits] == ':') {
      pos += column_digits + 1;
    } else {
      column = 0;
    }
    loc->file = text.substr(0, colon);
    loc->line = line;
    loc->column = column;
    loc->rest = text.substr(pos);
    return true;
  }
  return false;
}

// nvcc front end: "file(line): rest".
bool ParseNvccLocation(std::string_view text, Location* loc) {
  for (std::size_t close = text.find("): "); close != std::string_view::npos; close = text.find("): ", close + 1)) {
    std::size_t open = close;
    while (open > 0 && IsDigit(text[open - 1])) --open;
    if (open == close || open < 2 || text[open - 1] != '(') continue;
    int line = 0;
    if (ParseNumber(text.substr(open, close - open), &line) != close - open) continue;
    loc->file = text.substr(0, open - 1);
    loc->line = line;
    loc->column = 0;
    loc->rest = text.substr(close + 3);
    return true;
  }
  return false;
}

// "ptxas error   : msg", "nvcc fatal   : msg", "nvlink error   : msg".
bool ParseCudaTool(std::string_view text, std::string_view* severity, std::string_view* message) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return false;
  bool known = false;
  for (std::string_view tool : kCudaTools) known = known || text.substr(0, space) == tool;
  if (!known) return false;
  std::string_view rest = TrimLeft(text.substr(space));
  for (const SeverityWord& sw : kCudaToolSeverities) {
    if (!rest.starts_with(sw.word)) continue;
    std::string_view r = TrimLeft(rest.substr(sw.word.size()));
    if (!r.starts_with(':')) return false;
    *severity = sw.severity;
    *message = TrimLeft(r.substr(1));
    return true;
  }
  return false;
}

// "/usr/bin/ld: ...", "ld.lld: ...", "x86_64-linux-gnu-ld: ..."; returns what follows.
bool ParseLinkerPrefix(std::string_view text, std::string_view* rest) {
  const std::size_t sep = text.find(": ");
  if (sep == std::string_view::npos) return false;
  const std::string_view tool = text.substr(0, sep);
  if (Contains(tool, " ")) return false;
  const std::string_view base = Basename(tool);
  const bool is_ld = base == "ld" || base.starts_with("ld.") || base.ends_with("-ld") || Contains(base, "-ld.");
  if (!is_ld) return false;
  *rest = text.substr(sep + 2);
  return true;
}

// "collect2: error: ...", "g++: error: ...", "cc1plus: fatal error: ...".
bool ParseToolPrefix(std::string_view text, std::string_view* severity, std::string_view* message) {
  const std::size_t sep = text.find(": ");
  if (sep == std::string_view::npos || sep == 0) return false;
  if (Contains(text.substr(0, sep), " ")) return false;
  return ParseSeverity(text.substr(sep + 2), severity, message);
}

bool IsSummaryLine(std::string_view text) {
  for (std::string_view p : kSummaryPrefixes) {
    if (text.starts_with(p)) return true;
  }
  for (std::string_view p : kSummaryInfixes) {
    if (Contains(text, p)) return true;
  }
  // ninja progress: "[3/7] ...".
  if (text.starts_with('[')) {
    std::size_t i = 1;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i > 1 && i < text.size() && text[i] == '/') return true;
  }
  return false;
}

// "                 from main.cpp:1:" continues an "In file included from" header.
bool IsIncludeContinuation(std::string_view text) {
  const std::string_view t = TrimLeft(text);
  return t.starts_with("from ") && (t.ends_with(":") || t.ends_with(","));
}

bool IsSystemPath(std::string_view file) {
  for (std::string_view p : kSystemPrefixes) {
    if (file.starts_with(p)) return true;
  }
  for (std::string_view p : kSystemInfixes) {
    if (Contains(file, p)) return true;
  }
  return false;
}

bool IsErrorSeverity(std::string_view severity) { return severity == kError || severity == kFatal; }

Diagnostic MakeDiagnostic(std::string_view file, int line, int column, std::string_view severity, std::string message) {
  Diagnostic d;
  d.file = std::string(file);
  d.line = line;
  d.column = column;
  d.severity = std::string(severity);
  d.message = std::move(message);
  return d;
}

// Line-by-line state machine over one log.
class LogParser {
 public:
  std::vector<Diagnostic> Run(std::string_view log) {
    while (!log.empty()) {
      const std::size_t nl = log.find('\n');
      const std::string_view raw = log.substr(0, nl);
      log.remove_prefix(nl == std::string_view::npos ? log.size() : nl + 1);
      if (raw.find(kEscape) != std::string_view::npos) {
        const std::string clean = StripAnsi(raw);
        HandleLine(TrimRight(clean));
      } else {
        HandleLine(TrimRight(raw));
      }
    }
    return std::move(diags_);
  }

 private:
  void HandleLine(std::string_view text) {
    if (text.empty()) {
      open_ = false;
      linker_function_.clear();
      return;
    }
    if (IsSpace(text.front())) {
      if (open_ && !IsIncludeContinuation(text)) AddContext(text);
      return;
    }
    std::string_view severity;
    std::string_view message;
    std::string_view linker_rest;
    Location loc;
    if (ParseLinkerPrefix(text, &linker_rest)) {
      HandleLinker(linker_rest);
      return;
    }
    if ((ParseGccLocation(text, &loc) || ParseNvccLocation(text, &loc)) &&
        ParseSeverity(loc.rest, &severity, &message)) {
      linker_function_.clear();
      Add(MakeDiagnostic(loc.file, loc.line, loc.column, severity, std::string(message)));
      return;
    }
    for (std::string_view body : kLinkerBodies) {
      if (Contains(text, body)) {
        Add(MakeDiagnostic("", 0, 0, kError, WithLinkerFunction(text)));
        return;
      }
    }
    if (ParseCudaTool(text, &severity, &message) || ParseToolPrefix(text, &severity, &message)) {
      linker_function_.clear();
      Add(MakeDiagnostic("", 0, 0, severity, std::string(message)));
      return;
    }
    linker_function_.clear();
    // clang prints the source line unindented right after a located diagnostic.
    if (open_ && diags_.back().context.empty() && diags_.back().line > 0 && !IsSummaryLine(text) &&
        !ParseGccLocation(text, &loc)) {
      AddContext(text);
      return;
    }
    open_ = false;
  }

  // `rest` is what follows "/usr/bin/ld: ".
  void HandleLinker(std::string_view rest) {
    std::string_view severity;
    std::string_view message;
    if (rest.ends_with(":") && (Contains(rest, "in function") || Contains(rest, "In function"))) {
      // "/tmp/cc.o: in function `main':" heads the references that follow.
      linker_function_ = std::string(rest);
      open_ = false;
      return;
    }
    if (ParseSeverity(rest, &severity, &message)) {
      Add(MakeDiagnostic("", 0, 0, severity, std::string(message)));
      return;
    }
    Add(MakeDiagnostic("", 0, 0, kError, WithLinkerFunction(rest)));
  }

  std::string WithLinkerFunction(std::string_view text) const {
    if (linker_function_.empty()) return std::string(text);
    return linker_function_ + " " + std::string(text);
  }

  void Add(Diagnostic d) {
    if (d.severity == kSkip) {
      open_ = false;
      return;
    }
    diags_.push_back(std::move(d));
    open_ = true;
  }

  void AddContext(std::string_view text) {
    std::vector<std::string>& context = diags_.back().context;
    if (context.size() < kMaxContextLines) context.emplace_back(text);
  }

  std::vector<Diagnostic> diags_;
  bool open_ = false;            // diags_.back() may still take context lines.
  std::string linker_function_;  // Pending "x.o: in function `f':" header.
};

std::string DedupeKey(const Diagnostic& d) {
  std::string key;
  key.reserve(d.file.size() + d.severity.size() + d.message.size() + 32);
  key.append(d.file).push_back('\0');
  key.append(std::to_string(d.line)).push_back('\0');
  key.append(std::to_string(d.column)).push_back('\0');
  key.append(d.severity).push_back('\0');
  key.append(d.message);
  return key;
}

void MapToCandidate(Diagnostic* d, const std::vector<SourceMap>& maps) {
  if (d->file.empty() || d->line <= 0) return;
  const std::string_view base = Basename(d->file);
  for (const SourceMap& m : maps) {
    if (Basename(m.generated_file) != base) continue;
    if (d->line < m.first_line || d->line >= m.first_line + m.line_count) continue;
    d->file = m.candidate_file;
    d->line = m.candidate_first_line + (d->line - m.first_line);
    d->in_candidate = true;
    return;
  }
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return lines;
}

}  // namespace

std::vector<Diagnostic> ParseDiagnostics(std::string_view log) { return LogParser().Run(log); }

std::vector<Diagnostic> MapAndDedupe(std::vector<Diagnostic> diags, const std::vector<SourceMap>& maps,
                                     const DiagnosticOptions& options) {
  for (Diagnostic& d : diags) MapToCandidate(&d, maps);

  // Each group is a non-note followed by the notes that explain it.
  std::vector<std::vector<Diagnostic>> groups;
  std::unordered_set<std::string> seen;
  bool head_dropped = false;
  for (Diagnostic& d : diags) {
    const bool is_note = d.severity == kNote;
    if (is_note && (!options.include_notes || head_dropped || (!d.in_candidate && IsSystemPath(d.file)))) {
      continue;
    }
    const bool duplicate = !seen.insert(DedupeKey(d)).second;
    if (!is_note) head_dropped = duplicate;
    if (duplicate) continue;
    if (!is_note || groups.empty()) groups.emplace_back();
    groups.back().push_back(std::move(d));
  }

  std::vector<bool> group_is_error;
  group_is_error.reserve(groups.size());
  for (const std::vector<Diagnostic>& group : groups) {
    group_is_error.push_back(IsErrorSeverity(group.front().severity));
  }
  std::vector<Diagnostic> out;
  for (bool errors : {true, false}) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (group_is_error[g] != errors) continue;
      std::vector<Diagnostic>& group = groups[g];
      for (Diagnostic& d : group) {
        if (out.size() >= options.max_diagnostics) return out;
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

std::string FormatDiagnostics(const std::vector<Diagnostic>& diags, std::string_view candidate_text_for_excerpts) {
  constexpr int kLineNumberWidth = 5;
  const std::vector<std::string_view> lines = SplitLines(candidate_text_for_excerpts);
  std::string out;
  for (const Diagnostic& d : diags) {
    if (!d.file.empty()) {
      out += d.file;
      if (d.line > 0) out += ":" + std::to_string(d.line);
      if (d.line > 0 && d.column > 0) out += ":" + std::to_string(d.column);
      out += ": ";
    }
    out += d.severity + ": " + d.message + "\n";

    const bool excerpt = d.in_candidate && d.line >= 1 && static_cast<std::size_t>(d.line) <= lines.size();
    if (!excerpt) {
      for (const std::string& c : d.context) out += c + "\n";
      continue;
    }
    const std::string_view source = lines[d.line - 1];
    char number[16];
    std::snprintf(number, sizeof(number), "%*d", kLineNumberWidth, d.line);
    out += std::string(number) + " | " + std::string(source) + "\n";
    if (d.column >= 1 && static_cast<std::size_t>(d.column) <= source.size() + 1) {
      out += std::string(kLineNumberWidth, ' ') + " | ";
      for (int i = 0; i + 1 < d.column; ++i) out.push_back(source[i] == '\t' ? '\t' : ' ');
      out += "^\n";
    }
  }
  return out;
}

}  // namespace anvil
