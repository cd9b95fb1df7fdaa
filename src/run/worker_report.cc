#include "run/worker_report.h"

#include <algorithm>
#include <fstream>
#include <map>
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

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// What in folder `rel` does not match its seal `tensors`: "" when all does.
std::string CheckSeal(const fs::path& out_dir, const std::string& rel, const nlohmann::json& tensors) {
  const nlohmann::json manifest = ReadJsonObject(out_dir / rel / "tensors.json");
  std::map<std::string, nlohmann::json> entries;
  if (manifest.contains("tensors") && manifest["tensors"].is_array()) {
    for (const auto& e : manifest["tensors"]) {
      if (e.is_object() && e.contains("name") && e["name"].is_string()) entries[e["name"].get<std::string>()] = e;
    }
  }
  for (const auto& t : tensors) {
    if (!t.is_object()) return rel + ": a malformed seal";
    const std::string name = t.value("name", "");
    auto it = entries.find(name);
    if (it == entries.end() || !it->second.contains("file")) return rel + "/" + name + ": not written";
    if (it->second.value("shape", nlohmann::json()) != t.value("shape", nlohmann::json())) {
      return rel + "/" + name + ": its shape changed";
    }
    const std::string file = it->second.value("file", "");
    const int64_t itemsize = t.value("itemsize", int64_t{0});
    std::ifstream in(out_dir / rel / file, std::ios::binary);
    if (!in) return rel + "/" + file + ": missing";
    for (const auto& point : t.value("points", nlohmann::json::array())) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number_integer() || !point[1].is_string()) {
        return rel + ": a malformed seal";
      }
      const int64_t index = point[0].get<int64_t>();
      std::string bytes(static_cast<std::size_t>(std::max<int64_t>(itemsize, 0)), '\0');
      in.seekg(index * itemsize);
      in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!in || Hex(bytes) != point[1].get<std::string>()) {
        return rel + "/" + file + ": element " + std::to_string(index) + " is not what the worker wrote";
      }
    }
  }
  return "";
}

bool IsOutputFolder(const std::string& name) {
  return name.starts_with("trial_") || name.starts_with("held_out_") || name.starts_with("recheck_");
}

}  // namespace

void JudgeWorkerReport(const std::vector<std::string>& lines, bool overflowed, const fs::path& out_dir, bool complete,
                       RunOutcome& out) {
  std::set<std::string> sealed;  // Folders and files with at least one seal.
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
    } else if (kind == "seal") {
      const std::string rel = m.value("dir", "");
      if (!IsOutputFolder(rel) || rel.find('/') != std::string::npos) {
        note("the report channel: a seal of " + rel);
        continue;
      }
      sealed.insert(rel);
      if (std::string bad = CheckSeal(out_dir, rel, m.value("tensors", nlohmann::json::array())); !bad.empty()) {
        note(bad);
      }
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
  for (const auto& entry : fs::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool output = entry.is_directory(ec) && IsOutputFolder(name) && fs::exists(entry.path() / "tensors.json", ec);
    if ((output || name == "kernel_trace.tsv") && !sealed.count(name)) note(name + ": not written by the worker");
  }
}

}  // namespace anvil
