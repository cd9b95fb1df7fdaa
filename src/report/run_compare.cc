#include "report/run_compare.h"

#include <cmath>
#include <map>
#include <set>

#include "report/metrics.h"
#include "report/metrics_json.h"
#include "report/run_records.h"
#include "report/verdict_records.h"

namespace anvil {
namespace {

using nlohmann::json;

// What one run says of one problem at the turn.
struct Problem {
  std::string sha256;
  int samples = 0;
  bool solved = false;      // Some sample's best attempt passed.
  double best_speedup = 0;  // The highest known eager speedup of a passing sample; 0: none known.
};

struct Side {
  RunInfo info;
  int turn = 1;
  RunMetrics metrics;
  std::map<std::pair<int64_t, std::string>, Problem> problems;  // By (level, name).
};

double EagerSpeedup(const AttemptRow& a) {
  if (!a.verdict_json) return 0;
  return VerdictSpeedup(json::parse(*a.verdict_json, nullptr, false), "speedup_eager").value_or(0.0);
}

Result<Side> Read(RunDb& db, const CompareOptions& options, const std::string& label) {
  Side side;
  auto info = db.Info();
  if (!info.ok()) return Status::Error(label + ": " + info.message());
  side.info = info.value();
  auto by_turn = RecordsByTurn(db);
  if (!by_turn.ok()) return Status::Error(label + ": " + by_turn.message());
  auto turn = NamedTurn(options.turn, static_cast<int>(by_turn.value().size()));
  if (!turn.ok()) return Status::Error(label + ": " + turn.message());
  side.turn = turn.value();
  MetricsOptions mo;
  mo.faster_than = options.faster_than;
  side.metrics = ComputeMetrics(by_turn.value()[side.turn - 1].records, mo);
  auto samples = SamplesAtTurn(db, side.turn);
  if (!samples.ok()) return Status::Error(label + ": " + samples.message());
  for (const SampleAtTurn& s : samples.value()) {
    Problem& p = side.problems[{s.task.level, s.task.name}];
    p.sha256 = s.task.sha256;
    ++p.samples;
    if (s.best && s.best->outcome == "pass") {
      p.solved = true;
      p.best_speedup = std::max(p.best_speedup, EagerSpeedup(*s.best));
    }
  }
  return side;
}

json RunJson(const Side& s, const std::string& label) {
  return {{"run", label},
          {"model", s.info.model},
          {"backend", s.info.backend},
          {"samples", s.info.samples},
          {"turn", s.turn}};
}

std::string Name(const std::pair<int64_t, std::string>& key) {
  return "level " + std::to_string(key.first) + " " + key.second;
}

}  // namespace

Result<json> CompareRuns(RunDb& db_a, const std::string& label_a, RunDb& db_b, const std::string& label_b,
                         const CompareOptions& options) {
  auto a = Read(db_a, options, label_a);
  if (!a.ok()) return a.status();
  auto b = Read(db_b, options, label_b);
  if (!b.ok()) return b.status();
  const Side& A = a.value();
  const Side& B = b.value();
  json warnings = json::array();
  if (A.info.backend != B.info.backend) {
    warnings.push_back("the backends differ (" + A.info.backend + " and " + B.info.backend +
                       "): speedups are of different machines");
  }
  json levels = json::array();
  std::set<int> level_set;
  for (const auto& l : A.metrics.levels) level_set.insert(l.level);
  for (const auto& l : B.metrics.levels) level_set.insert(l.level);
  auto level_of = [](const RunMetrics& m, int level) -> json {
    for (const auto& l : m.levels) {
      if (l.level == level) return LevelJson(l);
    }
    return nullptr;
  };
  for (int level : level_set) {
    levels.push_back({{"level", level}, {"a", level_of(A.metrics, level)}, {"b", level_of(B.metrics, level)}});
  }
  json only_a = json::array(), only_b = json::array(), solved_a = json::array(), solved_b = json::array();
  json speedups = json::array();
  int matched = 0, solved_both = 0;
  double log_sum = 0;
  int logs = 0;
  for (const auto& [key, pa] : A.problems) {
    const auto it = B.problems.find(key);
    if (it == B.problems.end()) {
      only_a.push_back(Name(key));
      continue;
    }
    const Problem& pb = it->second;
    ++matched;
    if (pa.sha256 != pb.sha256) {
      warnings.push_back(Name(key) + ": the task's text differs between the runs (sha256 " + pa.sha256.substr(0, 12) +
                         " and " + pb.sha256.substr(0, 12) + ")");
    }
    if (pa.samples != pb.samples) {
      warnings.push_back(Name(key) + ": " + std::to_string(pa.samples) + " and " + std::to_string(pb.samples) +
                         " samples: Pass@N is over different N");
    }
    if (pa.solved && !pb.solved) solved_a.push_back(Name(key));
    if (pb.solved && !pa.solved) solved_b.push_back(Name(key));
    if (pa.solved && pb.solved) {
      ++solved_both;
      json row = {{"problem", Name(key)},
                  {"a", pa.best_speedup > 0 ? json(pa.best_speedup) : json(nullptr)},
                  {"b", pb.best_speedup > 0 ? json(pb.best_speedup) : json(nullptr)},
                  {"change", nullptr}};
      if (pa.best_speedup > 0 && pb.best_speedup > 0) {
        row["change"] = pb.best_speedup / pa.best_speedup;
        log_sum += std::log(pb.best_speedup / pa.best_speedup);
        ++logs;
      }
      speedups.push_back(std::move(row));
    }
  }
  for (const auto& [key, pb] : B.problems) {
    if (!A.problems.count(key)) only_b.push_back(Name(key));
  }
  return json{{"a", RunJson(A, label_a)},
              {"b", RunJson(B, label_b)},
              {"warnings", warnings},
              {"levels", levels},
              {"overall", {{"a", LevelJson(A.metrics.overall)}, {"b", LevelJson(B.metrics.overall)}}},
              {"problems", {{"matched", matched}, {"only_a", only_a}, {"only_b", only_b}}},
              {"solved", {{"both", solved_both}, {"only_a", solved_a}, {"only_b", solved_b}}},
              {"speedups", speedups},
              {"speedup_change_geomean", logs > 0 ? json(std::exp(log_sum / logs)) : json(nullptr)}};
}

}  // namespace anvil
