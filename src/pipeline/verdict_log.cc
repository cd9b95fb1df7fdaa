#include "pipeline/verdict_log.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "verify/policy.h"

namespace anvil {
namespace fs = std::filesystem;

Result<std::vector<VerdictLine>> ReadVerdictLines(const fs::path& file, const std::string& who) {
  std::vector<VerdictLine> lines;
  std::error_code ec;
  if (!fs::exists(file, ec)) return lines;
  auto text = ReadFile(file);
  if (!text.ok()) return text.status();
  const std::string& s = text.value();
  std::size_t start = 0;
  int number = 0;
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    const bool complete = end != std::string::npos;
    if (!complete) end = s.size();
    VerdictLine l;
    l.line = ++number;
    l.text = s.substr(start, end - start);
    start = end + 1;
    if (l.text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(l.text, nullptr, /*allow_exceptions=*/false);
    l.ok = !j.is_discarded() && j.is_object();
    if (!complete) {
      if (j.is_discarded()) {
        std::fprintf(stderr,
                     "%s: warning: %s:%d: dropping a truncated last line (an interrupted write); that candidate "
                     "is evaluated again\n",
                     who.c_str(), file.c_str(), l.line);
        fs::resize_file(file, s.size() - l.text.size(), ec);
        if (ec) return Status::Error("cannot truncate " + file.string() + ": " + ec.message());
        break;
      }
      std::ofstream(file, std::ios::app) << "\n";  // A whole verdict without its newline.
    }
    lines.push_back(std::move(l));
  }
  return lines;
}

std::string JobKey(const fs::path& task, const fs::path& candidate) {
  std::error_code ec;
  return fs::absolute(task, ec).lexically_normal().string() + "\t" +
         fs::absolute(candidate, ec).lexically_normal().string();
}

std::string VerdictPolicyId(const nlohmann::json& verdict) {
  const auto policy = verdict.find("policy");
  if (policy == verdict.end() || !policy->is_object()) return Policy().Id();
  const auto name = policy->find("name");
  const auto version = policy->find("version");
  if (name == policy->end() || !name->is_string() || version == policy->end() || !version->is_number_integer()) {
    return "";
  }
  Policy named;
  named.name = name->get<std::string>();
  named.version = version->get<int>();
  return named.Id();
}

Result<std::vector<std::string>> FinishedJobs(const fs::path& file, const std::string& backend,
                                              const std::string& policy_id, const std::string& who) {
  auto lines = ReadVerdictLines(file, who);
  if (!lines.ok()) return lines.status();
  std::vector<std::string> keys;
  for (const VerdictLine& l : lines.value()) {
    const nlohmann::json j = l.ok ? nlohmann::json::parse(l.text) : nlohmann::json();
    const bool verdict = l.ok && j.value("status", "") != "" && j.contains("task") && j["task"].is_object() &&
                         j["task"].value("path", "") != "" && j.contains("candidate") && j["candidate"].is_object() &&
                         j["candidate"].value("path", "") != "";
    if (!verdict) {
      std::fprintf(stderr, "%s: warning: %s:%d: not a verdict; ignored\n", who.c_str(), file.c_str(), l.line);
      continue;
    }
    const bool same_backend =
        j.contains("backend") && j["backend"].is_object() && j["backend"].value("name", "") == backend;
    if (!same_backend || VerdictPolicyId(j) != policy_id || j["status"] == "infra_error") continue;
    keys.push_back(JobKey(j["task"]["path"].get<std::string>(), j["candidate"]["path"].get<std::string>()));
  }
  return keys;
}

}  // namespace anvil
