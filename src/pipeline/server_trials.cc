#include "pipeline/server_trials.h"

#include <cmath>
#include <string>

namespace anvil {
namespace {

// A number the server sent, or its text for NaN and the infinities.
double Number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const nlohmann::json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
  }
  return std::nan("");
}

OutputCheck FromServer(const nlohmann::json& o) {
  OutputCheck c;
  c.name = o.value("name", std::string());
  c.dtype = o.value("dtype", std::string());
  c.tolerance.atol = Number(o, "atol");
  c.tolerance.rtol = Number(o, "rtol");
  CompareResult& r = c.result;
  r.ok = o.value("ok", false);
  r.problem = o.value("problem", std::string(r.ok ? "" : "values"));
  r.elements = o.value("elements", int64_t{0});
  r.mismatches = o.value("mismatches", int64_t{0});
  r.nonfinite_mismatches = o.value("nonfinite_mismatches", int64_t{0});
  r.max_abs_error = Number(o, "max_abs_error");
  r.max_rel_error = Number(o, "max_rel_error");
  r.mean_abs_error = Number(o, "mean_abs_error");
  r.first_mismatch = o.value("first_mismatch", int64_t{-1});
  if (o.contains("first_mismatch_index") && o["first_mismatch_index"].is_array()) {
    for (const auto& i : o["first_mismatch_index"]) {
      if (i.is_number_integer()) r.first_mismatch_index.push_back(i.get<int64_t>());
    }
  }
  r.expected_at_first = Number(o, "expected_at_first");
  r.actual_at_first = Number(o, "actual_at_first");
  return c;
}

// "shape: out0 is [8, 1024] where the reference's is [16, 1024]" -> the kind
// and the output's name; any other text is an output count problem.
void WorkerProblem(const std::string& text, TrialCheck& t) {
  for (const char* kind : {"shape", "dtype"}) {
    const std::string prefix = std::string(kind) + ": ";
    if (text.rfind(prefix, 0) == 0) {
      OutputCheck c;
      c.name = text.substr(prefix.size(), text.find(' ', prefix.size()) - prefix.size());
      c.result.problem = kind;
      t.problem = kind;
      t.outputs.push_back(std::move(c));
      return;
    }
  }
  t.problem = "output count";
}

}  // namespace

std::vector<TrialCheck> TrialChecksFromServer(const nlohmann::json& results, int trials) {
  std::vector<TrialCheck> checks(static_cast<std::size_t>(std::max(trials, 0)));
  for (int k = 0; k < trials; ++k) {
    checks[k].trial = k;
    checks[k].problem = "missing";
  }
  if (!results.is_array()) return checks;
  for (const auto& r : results) {
    if (!r.is_object() || !r.contains("trial") || !r["trial"].is_number_integer()) continue;
    const int k = r["trial"].get<int>();
    if (k < 0 || k >= trials) continue;
    TrialCheck t;
    t.trial = k;
    const std::string problem = r.value("problem", std::string());
    const bool compared = r.contains("outputs") && r["outputs"].is_array() && !r["outputs"].empty();
    if (!compared) {
      WorkerProblem(problem, t);
    } else {
      t.ok = true;
      for (const auto& o : r["outputs"]) {
        OutputCheck c = o.is_object() ? FromServer(o) : OutputCheck{};
        if (!c.result.ok && t.ok) {
          t.ok = false;
          t.problem = c.result.problem.empty() ? "values" : c.result.problem;
        }
        t.outputs.push_back(std::move(c));
      }
    }
    checks[k] = std::move(t);
  }
  return checks;
}

}  // namespace anvil
