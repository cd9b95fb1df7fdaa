#include <nlohmann/json.hpp>

#include "verify/verdict.h"

namespace anvil {
namespace {

using nlohmann::json;

json StatsJson(const TimingStats& s) {
  return {{"samples", s.samples}, {"median_ms", s.median_ms}, {"mean_ms", s.mean_ms},
          {"min_ms", s.min_ms},   {"max_ms", s.max_ms},       {"p25_ms", s.p25_ms},
          {"p75_ms", s.p75_ms},   {"iqr_ms", s.iqr_ms},       {"cv", s.cv}};
}

json PolicyJson(const Policy& p) {
  json overrides = json::object();
  for (const auto& [k, v] : p.overrides) overrides[k] = v;
  return {{"name", p.name}, {"version", p.version}, {"overrides", overrides}};
}

json Nullable(double v, bool present) { return present ? json(v) : json(nullptr); }

json CompileJson(const CompileResult& c) {
  json diags = json::array();
  for (const auto& d : c.diagnostics) {
    diags.push_back({{"file", d.file},
                     {"line", d.line},
                     {"column", d.column},
                     {"severity", d.severity},
                     {"message", d.message},
                     {"in_candidate", d.in_candidate}});
  }
  json artifacts = json::object();
  for (const auto& [k, v] : c.artifacts) artifacts[k] = v;
  std::string tail = c.log.size() > 8000 ? c.log.substr(c.log.size() - 8000) : c.log;
  return {{"ran", c.ran},
          {"ok", c.ok},
          {"cached", c.cached},
          {"seconds", c.seconds},
          {"compiler", c.compiler},
          {"diagnostics", diags},
          {"summary", c.summary},
          {"log_path", c.log_path.string()},
          {"log_tail", tail},
          {"artifacts", artifacts},
          {"phase_seconds", c.phase_seconds},
          {"pch", c.pch},
          {"torch_headers", c.torch_headers}};
}

json RunJson(const RunGate& r) {
  return {{"ran", r.ran},
          {"ok", r.ok},
          {"seconds", r.seconds},
          {"deadline_seconds", r.deadline_seconds},
          {"ready_seconds", r.ready_seconds},
          {"timed_out", r.timed_out},
          {"exit_code", r.exit_code},
          {"signal", r.term_signal},
          {"stage", r.stage},
          {"message", r.message},
          {"traceback", r.traceback},
          {"stderr_tail", r.stderr_tail},
          {"trials_completed", r.trials_completed},
          {"sandbox", r.sandbox},
          {"aten_compute", r.aten_compute},
          {"host_compute", r.host_compute},
          {"compute_seen_in", r.compute_seen_in},
          {"tampered", r.tampered},
          {"forged", r.forged},
          {"after_return", r.after_return},
          {"phase_seconds", r.phase_seconds},
          {"trial_data", r.trial_data},
          {"device_alone", r.device_alone}};
}

json TrialJson(const TrialCheck& t) {
  {
    json outputs = json::array();
    for (const auto& o : t.outputs) {
      const CompareResult& r = o.result;
      outputs.push_back({{"name", o.name},
                         {"dtype", o.dtype},
                         {"atol", o.tolerance.atol},
                         {"rtol", o.tolerance.rtol},
                         {"ok", r.ok},
                         {"problem", r.problem},
                         {"elements", r.elements},
                         {"mismatches", r.mismatches},
                         {"nonfinite_mismatches", r.nonfinite_mismatches},
                         {"max_abs_error", r.max_abs_error},
                         {"max_rel_error", r.max_rel_error},
                         {"mean_abs_error", r.mean_abs_error},
                         {"first_mismatch", r.first_mismatch >= 0 ? json(r.first_mismatch) : json(nullptr)},
                         {"first_mismatch_index", r.first_mismatch_index},
                         {"expected_at_first", Nullable(r.expected_at_first, r.first_mismatch >= 0)},
                         {"actual_at_first", Nullable(r.actual_at_first, r.first_mismatch >= 0)}});
    }
    return {{"trial", t.trial}, {"ok", t.ok}, {"problem", t.problem}, {"outputs", outputs}};
  }
}

json CorrectJson(const CorrectGate& c) {
  json trials = json::array();
  for (const auto& t : c.details) trials.push_back(TrialJson(t));
  json held_out = json::array();
  for (std::size_t k = 0; k < c.held_out.size(); ++k) {
    json j = TrialJson(c.held_out[k]);
    j["changed"] = k < c.held_out_sets.size() ? c.held_out_sets[k] : "";
    held_out.push_back(j);
  }
  return {{"ran", c.ran},       {"ok", c.ok},        {"trials", c.trials},
          {"passed", c.passed}, {"details", trials}, {"held_out", held_out}};
}

json LegalJson(const LegalGate& l) {
  json hits = json::array();
  for (const auto& h : l.hits) {
    hits.push_back({{"rule", h.rule},
                    {"severity", h.severity},
                    {"line", h.line},
                    {"column", h.column},
                    {"excerpt", h.excerpt},
                    {"message", h.message},
                    {"source", h.source}});
  }
  return {{"ran", l.ran},
          {"ok", l.ok},
          {"hits", hits},
          {"python_parse_error", l.python_parse_error.empty() ? json(nullptr) : json(l.python_parse_error)}};
}

// null where no trace was wanted (the CPU backend).
json TraceJson(const TraceEvidence& t) {
  if (!t.ran && t.error.empty()) return nullptr;
  json top = json::array();
  for (const auto& k : t.top) {
    top.push_back({{"name", k.name}, {"origin", k.origin}, {"launches", k.launches}, {"total_ms", k.total_ms}});
  }
  return {{"ran", t.ran},
          {"error", t.error.empty() ? json(nullptr) : json(t.error)},
          {"windows", t.windows},
          {"kernels", t.kernels},
          {"dropped", t.dropped},
          {"own_share", Nullable(t.own_share, t.own_share >= 0)},
          {"busy_ms", Nullable(t.busy_ms, t.ran)},
          {"top", top}};
}

json PerfJson(const PerfGate& p) {
  json j = {{"ran", p.ran},
            {"skipped", p.skipped},
            {"warmup", p.warmup},
            {"iters", p.iters},
            {"candidate", p.ran ? StatsJson(p.candidate) : json(nullptr)},
            {"wall", p.ran ? StatsJson(p.wall) : json(nullptr)},
            {"untimed_ms", p.ran ? json(p.untimed_ms) : json(nullptr)},
            {"queued_ms", p.ran && p.queued_ms ? json(*p.queued_ms) : json(nullptr)},
            {"timing_sets", p.timing_sets},
            {"timed_inputs", p.timed_inputs},
            {"rechecked", p.rechecked},
            {"floor_ms", Nullable(p.floor_ms, p.floor_ms > 0)},
            {"trace", TraceJson(p.trace)},
            {"eager", p.eager ? StatsJson(*p.eager) : json(nullptr)},
            {"compile", p.compile ? StatsJson(*p.compile) : json(nullptr)},
            {"eager_error", p.eager_error},
            {"compile_error", p.compile_error},
            {"compile_graphs", p.compile_graphs >= 0 ? json(p.compile_graphs) : json(nullptr)},
            {"speedup_eager", Nullable(p.speedup_eager, p.speedup_eager > 0)},
            {"speedup_compile", Nullable(p.speedup_compile, p.speedup_compile > 0)}};
  return j;
}

}  // namespace

const char* StatusName(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kPass:
      return "pass";
    case VerdictStatus::kCompileError:
      return "compile_error";
    case VerdictStatus::kRuntimeError:
      return "runtime_error";
    case VerdictStatus::kTimeout:
      return "timeout";
    case VerdictStatus::kWrongAnswer:
      return "wrong_answer";
    case VerdictStatus::kCheat:
      return "cheat";
    case VerdictStatus::kInfraError:
      return "infra_error";
  }
  return "infra_error";
}

std::optional<VerdictStatus> StatusFromName(const std::string& name) {
  for (VerdictStatus status :
       {VerdictStatus::kPass, VerdictStatus::kCompileError, VerdictStatus::kRuntimeError, VerdictStatus::kTimeout,
        VerdictStatus::kWrongAnswer, VerdictStatus::kCheat, VerdictStatus::kInfraError}) {
    if (name == StatusName(status)) return status;
  }
  return std::nullopt;
}

std::string VerdictToJson(const Verdict& v, int indent) {
  json j = {{"schema_version", kVerdictSchemaVersion},
            {"status", StatusName(v.status)},
            {"task", {{"name", v.task}, {"path", v.task_path}, {"level", v.level}}},
            {"candidate", {{"path", v.candidate}, {"format", v.format}}},
            {"backend", {{"name", v.backend}, {"device_present", v.device_present}}},
            {"versions", {{"anvil", v.anvil_version}, {"torch", v.torch_version}}},
            {"policy", PolicyJson(v.policy)},
            {"started_at", v.started_at},
            {"seconds", v.seconds},
            {"stage_seconds", v.stage_seconds},
            {"device_wait_seconds", v.device_wait_seconds},
            {"compile_wait_seconds", v.compile_wait_seconds},
            {"server_wait_seconds", v.server_wait_seconds},
            {"work_seconds", v.work_seconds},
            {"gates",
             {{"compile", CompileJson(v.compile)},
              {"run", RunJson(v.run)},
              {"correct", CorrectJson(v.correct)},
              {"legal", LegalJson(v.legal)},
              {"perf", PerfJson(v.perf)}}},
            {"correctness_rate", v.correctness_rate},
            {"reward", v.reward ? json(*v.reward) : json(nullptr)},
            {"feedback", v.feedback},
            {"error", v.error.empty() ? json(nullptr) : json(v.error)}};
  if (!v.task_degenerate.empty()) j["task_degenerate"] = true;
  if (!v.quotas.empty()) j["quotas"] = v.quotas;
  if (v.suspect_candidate) j["suspect_candidate"] = true;
  if (v.infra_retries > 0) j["infra_retries"] = v.infra_retries;
  if (!v.infra_retry_causes.empty()) j["infra_retry_causes"] = v.infra_retry_causes;
  if (v.baseline_compile_seconds > 0) j["baseline_compile_seconds"] = v.baseline_compile_seconds;
  if (!v.baseline_phase_seconds.empty()) j["baseline_phase_seconds"] = v.baseline_phase_seconds;
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace anvil
