#include "report/html_report.h"

#include <map>
#include <set>
#include <tuple>

#include "core/base64.h"
#include "core/files.h"
#include "core/gzip.h"
#include "core/sha256.h"
#include "gen/chat_json.h"
#include "pipeline/verdict_log.h"
#include "report/metrics.h"
#include "report/metrics_json.h"
#include "report/report_page.h"
#include "report/verdict_records.h"

namespace anvil {
namespace {

using nlohmann::json;

std::string CspHash(std::string_view text) { return "'sha256-" + Base64(HexBytes(Sha256Hex(text))) + "'"; }

void ReplaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

json OptionalJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json OptionalJson(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

// The text the model answered for an attempt, or null when none was recorded.
json AnswerText(RunDb& db, const AttemptRow& a) {
  auto answered = db.LastAnswered(a.id);
  if (!answered.ok() || !answered.value()) return nullptr;
  auto response = ParseChatResponse(answered.value()->response);
  const auto choice = static_cast<std::size_t>(answered.value()->choice);
  if (!response.ok() || choice >= response.value().choices.size()) return answered.value()->response;
  return response.value().choices[choice].content;
}

json Speedup(const json& verdict, const char* key) {
  const auto speedup = VerdictSpeedup(verdict, key);
  return speedup ? json(*speedup) : json(nullptr);
}

// An attempt's numbers, drawn at load.
json AttemptJson(const AttemptRow& a, const json& verdict) {
  return {{"turn", a.turn},
          {"state", AttemptStateName(a.state)},
          {"outcome", OptionalJson(a.outcome)},
          {"reward", OptionalJson(a.reward)},
          {"cached", a.cached},
          {"speedup_eager", Speedup(verdict, "speedup_eager")},
          {"speedup_compile", Speedup(verdict, "speedup_compile")}};
}

// An attempt's texts, read when its page opens.
json AttemptText(RunDb& db, const AttemptRow& a, const json& verdict, const std::map<std::string, double>* stages) {
  json feedback = nullptr;
  if (verdict.is_object() && verdict.contains("feedback") && verdict["feedback"].is_string()) {
    feedback = verdict["feedback"];
  }
  return {{"format", OptionalJson(a.format)},
          {"code", OptionalJson(a.code)},
          {"feedback", feedback},
          {"response", AnswerText(db, a)},
          {"stages", stages ? json(*stages) : json::object()},
          {"verdict", verdict}};
}

}  // namespace

Result<ReportData> RunReportData(RunDb& db, const std::string& run_label, const ReportOptions& options) {
  auto info = db.Info();
  if (!info.ok()) return info.status();
  auto by_turn = RecordsByTurn(db);
  if (!by_turn.ok()) return by_turn.status();
  const json metrics = RunMetricsJson(info.value(), by_turn.value(), run_label, {}, options.faster_than);
  auto tasks = db.Tasks();
  if (!tasks.ok()) return tasks.status();
  auto attempts = db.Attempts();
  if (!attempts.ok()) return attempts.status();
  auto stage_times = db.StageTimes();
  if (!stage_times.ok()) return stage_times.status();
  ReportData report;
  json task_list = json::array();
  std::map<int64_t, std::size_t> task_index;
  for (const TaskRow& t : tasks.value()) {
    task_index[t.id] = task_list.size();
    task_list.push_back({{"name", t.name},
                         {"level", t.level},
                         {"problem", t.problem ? json(*t.problem) : json(nullptr)},
                         {"sha256", t.sha256}});
  }
  report.texts.assign(task_list.size() + 1, json::array());  // The last: attempts of no known task.
  json samples = json::array();
  std::map<int64_t, std::size_t> sample_index;
  std::map<std::string, double> stage_seconds;
  for (const AttemptRow& a : attempts.value()) {
    const auto known = task_index.find(a.task_id);
    auto [it, added] = sample_index.try_emplace(a.sample_id, samples.size());
    if (added) {
      samples.push_back({{"task", known != task_index.end() ? json(known->second) : json(nullptr)},
                         {"sample", a.sample},
                         {"prime_echo", OptionalJson(a.prime_echo)},
                         {"attempts", json::array()}});
    }
    json verdict = a.verdict_json ? json::parse(*a.verdict_json, nullptr, false) : json(nullptr);
    if (verdict.is_discarded()) verdict = nullptr;
    const auto stages = stage_times.value().find(a.id);
    const bool timed = stages != stage_times.value().end();
    if (timed) {
      for (const auto& [stage, seconds] : stages->second) stage_seconds[stage] += seconds;
    }
    const std::size_t chunk = known != task_index.end() ? known->second : task_list.size();
    json attempt = AttemptJson(a, verdict);
    attempt["text"] = {chunk, report.texts[chunk].size()};
    report.texts[chunk].push_back(AttemptText(db, a, verdict, timed ? &stages->second : nullptr));
    samples[it->second]["attempts"].push_back(std::move(attempt));
  }
  report.data = {{"anvil_report", 1},
                 {"metrics", metrics},
                 {"tasks", task_list},
                 {"stage_seconds", stage_seconds},
                 {"samples", samples}};
  return report;
}

Result<ReportData> FolderReportData(const std::filesystem::path& verdicts, const std::string& run_label,
                                    const ReportOptions& options) {
  auto lines = ReadVerdictLines(verdicts, "anvil report");
  if (!lines.ok()) return lines.status();
  // The file's last verdict of each candidate, in (level, problem, sample) order.
  std::map<std::tuple<int, int, int>, std::pair<SampleRecord, json>> latest;
  std::set<std::string> backends;
  for (const VerdictLine& l : lines.value()) {
    if (!l.ok) continue;
    json j = json::parse(l.text, nullptr, false);
    std::string backend;
    auto rec = RecordFromVerdictLine(j, backend);
    if (!rec) continue;
    backends.insert(backend);
    const SampleRecord& r = rec->second;
    latest[{r.level, r.problem, r.sample}] = {r, std::move(j)};
  }
  if (latest.empty()) {
    return Status::Error(verdicts.string() +
                         " holds no verdict of a KernelBench-named candidate: judge the folder first (anvil "
                         "kernelbench --run DIR)");
  }
  std::vector<SampleRecord> records;
  int samples_per_problem = 0;
  for (const auto& [key, entry] : latest) {
    records.push_back(entry.first);
    samples_per_problem = std::max(samples_per_problem, std::get<2>(key) + 1);
  }
  MetricsOptions mo;
  mo.faster_than = options.faster_than;
  const RunMetrics metrics = ComputeMetrics(records, mo);
  json levels = json::array();
  for (const auto& l : metrics.levels) levels.push_back(LevelJson(l));
  json turn = {
      {"turn", 1}, {"pending", 0}, {"server_errors", 0}, {"levels", levels}, {"overall", LevelJson(metrics.overall)}};
  AddDegenerateJson(records, mo, turn);
  std::string backend;
  for (const auto& b : backends) backend += (backend.empty() ? "" : ", ") + b;

  ReportData report;
  json tasks = json::array(), samples = json::array();
  std::map<std::pair<int, int>, std::size_t> task_index;
  std::map<std::string, double> stage_seconds;
  for (const auto& [key, entry] : latest) {
    const auto& [r, v] = entry;
    auto [it, added] = task_index.try_emplace({r.level, r.problem}, tasks.size());
    if (added) {
      const json& task = v.value("task", json::object());
      std::string name = "problem " + std::to_string(r.problem);
      if (task.is_object() && task.contains("path") && task["path"].is_string()) {
        name = std::filesystem::path(task["path"].get<std::string>()).stem().string();
      }
      tasks.push_back({{"name", name}, {"level", r.level}, {"problem", r.problem}, {"sha256", nullptr}});
      report.texts.push_back(json::array());
    }
    json stages = v.contains("stage_seconds") && v["stage_seconds"].is_object() ? v["stage_seconds"] : json::object();
    for (const auto& [stage, seconds] : stages.items()) {
      if (seconds.is_number()) stage_seconds[stage] += seconds.get<double>();
    }
    const json& cand = v.value("candidate", json::object());
    json code = nullptr;
    if (auto text = ReadFile(cand.value("path", std::string())); text.ok()) code = text.value();
    json& chunk = report.texts[it->second];
    samples.push_back({{"task", it->second},
                       {"sample", r.sample},
                       {"prime_echo", nullptr},
                       {"attempts", json::array({{{"turn", 1},
                                                  {"state", "done"},
                                                  {"outcome", r.status},
                                                  {"reward", v.value("reward", json(nullptr))},
                                                  {"cached", v.value("cached", false)},
                                                  {"speedup_eager", Speedup(v, "speedup_eager")},
                                                  {"speedup_compile", Speedup(v, "speedup_compile")},
                                                  {"text", {it->second, chunk.size()}}}})}});
    chunk.push_back({{"format", cand.value("format", json(nullptr))},
                     {"code", code},
                     {"feedback", v.value("feedback", json(nullptr))},
                     {"response", nullptr},
                     {"stages", stages},
                     {"verdict", v}});
  }
  report.data = {{"anvil_report", 1},
                 {"metrics",
                  {{"run", run_label},
                   {"model", "KernelBench folder"},
                   {"prompt", "-"},
                   {"backend", backend},
                   {"samples", samples_per_problem},
                   {"faster_than", options.faster_than},
                   {"turns", json::array({turn})}}},
                 {"tasks", tasks},
                 {"stage_seconds", stage_seconds},
                 {"samples", samples}};
  return report;
}

std::string ScriptSafeJson(const json& data) {
  std::string text = data.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  // Outside strings JSON has none of these; inside one, a \u escape reads as the character itself.
  ReplaceAll(text, "<", "\\u003c");
  ReplaceAll(text, ">", "\\u003e");
  ReplaceAll(text, "&", "\\u0026");
  return text;
}

namespace {

// A page template filled: its policy (its one script and the style by hash), style, script, text chunks and data.
std::string Page(std::string page, const std::string& script, const std::string& chunks, const json& data) {
  const std::string csp = "default-src 'none'; script-src " + CspHash(script) + "; style-src " +
                          CspHash(kReportPageCss) + "; img-src data:; base-uri 'none'; form-action 'none'";
  // Each placeholder once, in the order of the page; the data last, so nothing it holds is read as one.
  auto put = [&page](std::string_view key, const std::string& value) {
    const std::size_t at = page.find(key);
    if (at != std::string::npos) page.replace(at, key.size(), value);
  };
  put("@CSP@", csp);
  put("@STYLE@", kReportPageCss);
  put("@SCRIPT@", script);
  put("@TEXTS@", chunks);
  put("@DATA@", ScriptSafeJson(data));
  return page;
}

}  // namespace

Result<std::string> ReportPage(const ReportData& report) {
  // Each text chunk compressed, in an element of its own that nothing runs: base64 has no character that
  // could end it.
  std::string chunks;
  for (std::size_t k = 0; k < report.texts.size(); ++k) {
    auto gz = Gzip(report.texts[k].dump(-1, ' ', false, json::error_handler_t::replace));
    if (!gz.ok()) return gz.status();
    chunks += "<script type=\"application/x-anvil-gzip-base64\" id=\"anvil-text-" + std::to_string(k) + "\">" +
              Base64(gz.value()) + "</script>\n";
  }
  return Page(kReportPageHtml, kReportPageJs, chunks, report.data);
}

std::string ComparePage(const json& comparison) { return Page(kComparePageHtml, kComparePageJs, "", comparison); }

}  // namespace anvil
