#include "run/worker_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/files.h"
#include "core/json_fields.h"
#include "core/sha256.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {

// "aten.mm.default x3 (op observer)" -> ("aten.mm.default (op observer)", 3); no count: 0.
std::pair<std::string, long long> Counted(const std::string& entry) {
  static const std::regex kCount(" x([0-9]+)");
  std::smatch m;
  if (!std::regex_search(entry, m, kCount)) return {entry, 0};
  return {m.prefix().str() + m.suffix().str(), std::stoll(m[1].str())};
}

// Adds `from` to `to`: the findings are cumulative, so an op seen in several messages is listed once, with the
// largest count any gave.
void AddUnique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& s : from) {
    const auto [key, n] = Counted(s);
    auto same = std::find_if(to.begin(), to.end(), [&](const std::string& t) { return Counted(t).first == key; });
    if (same == to.end()) {
      to.push_back(s);
    } else if (Counted(*same).second < n) {
      *same = s;
    }
  }
}

}  // namespace

void JudgeWorkerReport(const std::vector<std::string>& lines, bool overflowed, const fs::path& out_dir, bool complete,
                       RunOutcome& out) {
  std::set<std::string> sealed;  // Files with a seal.
  std::vector<std::string>& forged = out.forged;
  auto note = [&](const std::string& what) {
    if (std::find(forged.begin(), forged.end(), what) == forged.end()) forged.push_back(what);
  };
  if (overflowed) note("the report channel: more than the worker ever sends");
  std::string last_kind;
  int last_look = -1;
  for (const std::string& line : lines) {
    const nlohmann::json m = nlohmann::json::parse(line, nullptr, false);
    if (!m.is_object()) {
      note("the report channel: a line the worker did not write");
      continue;
    }
    const std::string kind = m.value("kind", "");
    last_kind = kind;
    if (kind == "look") {
      last_look = m.value("call", -1);
    } else if (kind == "looked") {
      // The look is over: a death after it is not the look's (last_kind says so).
    } else if (kind == "ops") {
      AddUnique(out.aten_compute, JsonStrings(m, "compute"));
      AddUnique(out.host_compute, JsonStrings(m, "host"));
      if (out.compute_seen_in.empty() && m.contains("first") && m["first"].is_string()) {
        out.compute_seen_in = m["first"].get<std::string>();
      }
    } else if (kind == "tamper") {
      std::vector<std::string> changed = JsonStrings(m, "changed");
      changed.push_back(m.value("when", "while running"));
      if (out.tampered.empty()) out.tampered = changed;
    } else if (kind == "cheat" && m.value("rule", "") == "run.after_return") {
      out.after_return.push_back(m.value("message", "an output changed after its call returned"));
    } else if (kind == "file") {
      const std::string rel = m.value("file", "");
      sealed.insert(rel);
      auto text = ReadFile(out_dir / rel);
      if (!text.ok() || Sha256Hex(text.value()) != m.value("sha256", "")) note(rel + ": not what the worker wrote");
    } else {
      note("the report channel: a message of kind '" + kind + "'");
    }
  }
  // Killed while the worker read a call's outputs right after the call returned (its signals held): the outputs'
  // memory was not readable then — a handler that finishes the work on the first touch of their pages.
  if (out.term_signal != 0 && last_kind == "look") {
    out.after_return.push_back("the process died (signal " + std::to_string(out.term_signal) +
                               ") as the worker read timed call " + std::to_string(last_look) +
                               "'s outputs right after it returned: their memory was not readable then");
  }
  if (!complete) return;
  std::error_code ec;
  if (fs::exists(out_dir / "kernel_trace.tsv", ec) && !sealed.count("kernel_trace.tsv")) {
    note("kernel_trace.tsv: not written by the worker");
  }
}

}  // namespace anvil
