#include "report/run_records.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "report/verdict_records.h"

namespace anvil {
namespace {

using nlohmann::json;

double NumberOr(const json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// Whether `a` ranks above `b` (both finished; b from an earlier or the same turn).
bool Better(const AttemptRow& a, const AttemptRow& b) {
  if (!a.reward) return false;
  if (!b.reward) return true;
  return *a.reward > *b.reward;
}

SampleRecord Record(const TaskRow& task, const AttemptRow* best, int64_t sample) {
  SampleRecord r;
  r.task = "level " + std::to_string(task.level) + " " + task.name + " " + task.sha256;
  r.level = static_cast<int>(task.level);
  r.problem = static_cast<int>(task.problem.value_or(0));
  r.sample = static_cast<int>(sample);
  if (best == nullptr) {
    r.status = "pending";
    return r;
  }
  r.status = best->outcome.value_or("pending");
  if (best->verdict_json) {
    const json v = json::parse(*best->verdict_json, nullptr, false);
    if (v.is_object()) {
      r.correctness_rate = NumberOr(v, "correctness_rate", 0.0);
      const auto degenerate = v.find("task_degenerate");
      r.degenerate = degenerate != v.end() && degenerate->is_boolean() && degenerate->get<bool>();
      r.speedup_eager = VerdictSpeedup(v, "speedup_eager").value_or(0.0);
      r.speedup_compile = VerdictSpeedup(v, "speedup_compile").value_or(0.0);
    }
  }
  return r;
}

}  // namespace

Result<int> RunTurns(RunDb& db) {
  auto info = db.Info();
  if (!info.ok()) return info.status();
  auto attempts = db.Attempts();
  if (!attempts.ok()) return attempts.status();
  int turns = static_cast<int>(info.value().turns);
  for (const AttemptRow& a : attempts.value()) turns = std::max(turns, static_cast<int>(a.turn));
  return turns;
}

Result<std::vector<SampleAtTurn>> SamplesAtTurn(RunDb& db, int turn) {
  auto tasks = db.Tasks();
  if (!tasks.ok()) return tasks.status();
  auto attempts = db.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<int64_t, TaskRow> task_by_id;
  for (TaskRow& t : tasks.value()) task_by_id[t.id] = std::move(t);
  std::map<int64_t, SampleAtTurn> samples;  // By sample id.
  std::vector<int64_t> order;
  for (const AttemptRow& a : attempts.value()) {
    auto [it, added] = samples.try_emplace(a.sample_id);
    if (added) {
      it->second.task = task_by_id.at(a.task_id);
      it->second.sample = a.sample;
      order.push_back(a.sample_id);
    }
    if (a.turn > turn || a.state != AttemptState::kDone) continue;
    if (!it->second.best || Better(a, *it->second.best)) it->second.best = a;
  }
  std::vector<SampleAtTurn> out;
  for (int64_t id : order) out.push_back(std::move(samples[id]));
  return out;
}

Result<int> NamedTurn(const std::string& text, int turns) {
  if (text == "first") return 1;
  if (text == "last") return turns;
  try {
    std::size_t used = 0;
    const int k = std::stoi(text, &used);
    if (used == text.size() && k >= 1 && k <= turns) return k;
  } catch (const std::exception&) {
  }
  return Status::Error("--turn " + text + ": expected first, last or a turn from 1 to " + std::to_string(turns));
}

Result<std::vector<TurnRecords>> RecordsByTurn(RunDb& db) {
  auto turns = RunTurns(db);
  if (!turns.ok()) return turns.status();
  std::vector<TurnRecords> out;
  for (int k = 1; k <= turns.value(); ++k) {
    auto samples = SamplesAtTurn(db, k);
    if (!samples.ok()) return samples.status();
    TurnRecords t;
    t.turn = k;
    for (const SampleAtTurn& s : samples.value()) {
      const AttemptRow* best = s.best ? &*s.best : nullptr;
      if (best == nullptr) ++t.pending;
      if (best != nullptr && best->outcome == "server_error") ++t.server_errors;
      t.records.push_back(Record(s.task, best, s.sample));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace anvil
