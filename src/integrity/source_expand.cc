#include "integrity/source_expand.h"

#include <set>
#include <sstream>
#include <utility>

#include "core/files.h"
#include "core/python.h"
#include "core/subprocess.h"
#include "integrity/compiler_sandbox.h"
#include "integrity/source_scan.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {

// The directive a line holds ("include", "error"), or "".
std::string Directive(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos) return "";
  std::size_t end = i;
  while (end < line.size() && std::isalpha(static_cast<unsigned char>(line[end]))) ++end;
  return line.substr(i, end - i);
}

// `g++ -E` over `text` (written to a file of its own) with `flags`; the
// preprocessed output and the file's path, which its line markers name.
Result<std::pair<std::string, std::string>> Preprocess(const std::string& text, std::vector<std::string> flags,
                                                       const IncludeDirs& includes) {
  auto dir = MakeTempDir("anvil-expand-");
  if (!dir.ok()) return dir.status();
  const fs::path source = dir.value() / "source.cc";
  Status written = WriteFileAtomic(source, text);
  std::vector<fs::path> reads(includes.begin(), includes.end());
  auto box = CompilerSandbox::Make({reads, {dir.value()}});
  ProcessSpec spec;
  spec.argv = {"g++", "-E", "-x", "c++", "-std=c++17"};
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  for (const auto& inc : includes) {
    spec.argv.push_back("-isystem");
    spec.argv.push_back(inc.string());
  }
  spec.argv.push_back(source.string());
  spec.deadline = std::chrono::seconds(30);
  spec.output_cap = 64 << 20;
  if (box.ok()) spec.sandbox = box.value().sandbox();
  auto r = !written.ok() ? Result<ProcessResult>(written)
           : !box.ok()   ? Result<ProcessResult>(box.status())
                         : RunProcess(spec);
  (void)RemoveTree(dir.value());
  if (!r.ok()) return r.status();
  if (!r.value().Succeeded()) return Status::Error("g++ -E failed: " + TailLines(r.value().err, 3));
  return std::make_pair(std::move(r.value().out), source.string());
}

// The output lines that came from `file`, folded back onto its `lines` lines
// by the line markers (# N "file" ...).
std::string OwnLines(const std::string& preprocessed, const std::string& file, int lines) {
  std::vector<std::string> out(lines + 1);
  std::istringstream pre(preprocessed);
  std::string line;
  int at = 1;
  bool ours = true;
  while (std::getline(pre, line)) {
    if (line.size() > 2 && line[0] == '#' && line[1] == ' ') {
      std::istringstream marker(line.substr(2));
      std::string name;
      marker >> at >> name;
      ours = name == "\"" + file + "\"";
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

}  // namespace

Result<std::string> ExpandOwnMacros(const NativeSource& source, const IncludeDirs& includes, bool device) {
  std::istringstream in(source.text);
  std::string line, own, with_includes;
  int lines = 0;
  while (std::getline(in, line)) {
    const std::string directive = Directive(line);
    const bool blind = directive == "error" || directive == "warning";
    own += (blind || directive == "include" ? "" : line) + "\n";
    with_includes += (blind ? "" : line) + "\n";
    ++lines;
  }
  std::vector<std::string> flags = source.defines;
  if (source.cuda) {
    flags.insert(flags.end(), {"-D__CUDACC__", "-D__NVCC__"});
    if (device) flags.push_back("-D__CUDA_ARCH__=900");
  }
  auto pre = Preprocess(own, flags, {});
  if (!pre.ok()) {
    // Its includes give the macros an #if may need; its own lines are still all that is kept.
    auto full = Preprocess(with_includes, flags, includes);
    if (!full.ok()) return Status::Error(pre.message());
    pre = std::move(full);
  }
  return OwnLines(pre.value().first, pre.value().second, lines);
}

std::vector<RuleHit> ScanExpandedSource(const NativeSource& source, const std::vector<RuleHit>& raw_hits,
                                        const IncludeDirs& includes) {
  std::vector<RuleHit> hits;
  std::set<std::pair<std::string, int>> seen;
  for (const RuleHit& h : raw_hits) seen.insert({h.rule, h.line});
  for (bool device : source.cuda ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
    auto expanded = ExpandOwnMacros(source, includes, device);
    if (!expanded.ok()) {
      RuleHit h;
      h.rule = "cpp.unexpanded";
      h.severity = "evidence";
      h.source = source.name;
      h.message = "the source was scanned as written only: " + expanded.message();
      hits.push_back(std::move(h));
      return hits;
    }
    for (RuleHit& h : ScanNativeSource(expanded.value(), source.name)) {
      if (h.rule == "cpp.token_paste" || !seen.insert({h.rule, h.line}).second) continue;
      h.message += device ? " (after the preprocessor, in CUDA's device pass: a macro spells it)"
                          : " (after the preprocessor: a macro spells it)";
      hits.push_back(std::move(h));
    }
  }
  return hits;
}

}  // namespace anvil
