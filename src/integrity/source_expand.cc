#include "integrity/source_expand.h"

#include <set>
#include <sstream>
#include <utility>

#include "core/files.h"
#include "core/python.h"
#include "core/subprocess.h"
#include "integrity/source_scan.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {

bool IsIncludeLine(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return false;
  i = line.find_first_not_of(" \t", i + 1);
  return i != std::string::npos && line.compare(i, 7, "include") == 0;
}

}  // namespace

Result<std::string> ExpandOwnMacros(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line, kept;
  int lines = 0;
  while (std::getline(in, line)) {
    kept += (IsIncludeLine(line) ? "" : line) + "\n";
    ++lines;
  }
  auto dir = MakeTempDir("anvil-expand-");
  if (!dir.ok()) return dir.status();
  const fs::path source = dir.value() / "source.cc";
  Status written = WriteFileAtomic(source, kept);
  ProcessSpec spec;
  spec.argv = {"g++", "-E", "-x", "c++", "-std=c++17", "-D__CUDACC__", "-D__NVCC__", source.string()};
  spec.deadline = std::chrono::seconds(30);
  spec.output_cap = 16 << 20;
  auto r = written.ok() ? RunProcess(spec) : Result<ProcessResult>(written);
  (void)RemoveTree(dir.value());
  if (!r.ok()) return r.status();
  if (!r.value().Succeeded()) return Status::Error("g++ -E failed: " + TailLines(r.value().err, 3));
  // Follow the line markers (# N "file" ...) back to the input's lines.
  std::vector<std::string> out(lines + 1);
  std::istringstream pre(r.value().out);
  int at = 1;
  bool ours = true;
  while (std::getline(pre, line)) {
    if (line.size() > 2 && line[0] == '#' && line[1] == ' ') {
      std::istringstream marker(line.substr(2));
      std::string file;
      marker >> at >> file;
      ours = file == "\"" + source.string() + "\"";
      continue;
    }
    if (ours && at >= 1 && at <= lines && line.find_first_not_of(" \t") != std::string::npos) {
      out[at] += (out[at].empty() ? "" : " ") + line;
    }
    ++at;
  }
  std::string expanded;
  for (int k = 1; k <= lines; ++k) expanded += out[k] + "\n";
  return expanded;
}

std::vector<RuleHit> ScanExpandedSource(std::string_view text, std::string_view source_name,
                                        const std::vector<RuleHit>& raw_hits) {
  std::vector<RuleHit> hits;
  auto expanded = ExpandOwnMacros(text);
  if (!expanded.ok()) {
    RuleHit h;
    h.rule = "cpp.unexpanded";
    h.severity = "evidence";
    h.source = std::string(source_name);
    h.message = "the source was scanned as written only: " + expanded.message();
    hits.push_back(std::move(h));
    return hits;
  }
  std::set<std::pair<std::string, int>> seen;
  for (const RuleHit& h : raw_hits) seen.insert({h.rule, h.line});
  for (RuleHit& h : ScanNativeSource(expanded.value(), source_name)) {
    if (h.rule == "cpp.token_paste" || seen.count({h.rule, h.line})) continue;
    h.message += " (after the preprocessor: a macro spells it)";
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace anvil
