#include "service/service_metrics.h"

#include <cmath>
#include <cstdio>

namespace anvil {
namespace {

// Seconds, from a cache hit (milliseconds) to a slow compile or a hang (minutes).
std::vector<double> LatencyBounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
}

std::string Number(double x) {
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string Labels(const std::string& labels, const std::string& more) {
  if (labels.empty() && more.empty()) return "";
  if (labels.empty()) return "{" + more + "}";
  if (more.empty()) return "{" + labels + "}";
  return "{" + labels + "," + more + "}";
}

void Line(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name + Labels(labels, "") + " " + Number(value) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string& out) const {
  unsigned long long cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = "le=\"" + (i < bounds_.size() ? Number(bounds_[i]) : std::string("+Inf")) + "\"";
    out += name + "_bucket" + Labels(labels, le) + " " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum" + Labels(labels, "") + " " + Number(sum_) + "\n";
  out += name + "_count" + Labels(labels, "") + " " + std::to_string(count_) + "\n";
}

void ServiceMetrics::CountVerdict(const Verdict& v, bool cached) {
  std::lock_guard<std::mutex> lock(mu_);
  ++verdicts_[StatusName(v.status)];
  if (cached) {
    ++cache_hits_;
    return;
  }
  for (const auto& [stage, seconds] : v.stage_seconds) {
    stages_.try_emplace(stage, LatencyBounds()).first->second.Observe(seconds);
  }
  stages_.try_emplace("verdict", LatencyBounds()).first->second.Observe(v.seconds);
}

void ServiceMetrics::CountRequest(const std::string& route, int code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, code}];
  latency_.try_emplace(route, LatencyBounds()).first->second.Observe(seconds);
}

std::string ServiceMetrics::Render(const ServiceLoad& load, int sync_waiting) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out += "# HELP anvil_verdicts_total Verdicts made, by status.\n# TYPE anvil_verdicts_total counter\n";
  for (const char* status :
       {"pass", "compile_error", "runtime_error", "timeout", "wrong_answer", "cheat", "infra_error"}) {
    auto it = verdicts_.find(status);
    Line(out, "anvil_verdicts_total", std::string("status=\"") + status + "\"",
         it == verdicts_.end() ? 0 : static_cast<double>(it->second));
  }
  out +=
      "# HELP anvil_verdict_cache_hits_total Verdicts the verdict cache answered (in anvil_verdicts_total too).\n"
      "# TYPE anvil_verdict_cache_hits_total counter\n";
  Line(out, "anvil_verdict_cache_hits_total", "", static_cast<double>(cache_hits_));
  out += "# HELP anvil_jobs Jobs the service holds now, by state.\n# TYPE anvil_jobs gauge\n";
  Line(out, "anvil_jobs", "state=\"queued\"", static_cast<double>(load.queued));
  Line(out, "anvil_jobs", "state=\"running\"", static_cast<double>(load.evaluating));
  out +=
      "# HELP anvil_sync_requests_waiting /v1/evaluate calls waiting for their verdict.\n"
      "# TYPE anvil_sync_requests_waiting gauge\n";
  Line(out, "anvil_sync_requests_waiting", "", sync_waiting);
  out +=
      "# HELP anvil_slots_in_use Compile slots (node-wide) and run slots (all devices) in use.\n"
      "# TYPE anvil_slots_in_use gauge\n";
  Line(out, "anvil_slots_in_use", "kind=\"compile\"", load.lanes.compiles);
  Line(out, "anvil_slots_in_use", "kind=\"run\"", load.lanes.runs);
  out +=
      "# HELP anvil_slots Compile and run slots there are (0 when evaluations take no lanes).\n"
      "# TYPE anvil_slots gauge\n";
  Line(out, "anvil_slots", "kind=\"compile\"", load.lanes.compile_slots);
  Line(out, "anvil_slots", "kind=\"run\"", load.lanes.run_slots);
  out +=
      "# HELP anvil_stage_seconds Wall seconds of each verdict's stages, and of the whole verdict.\n"
      "# TYPE anvil_stage_seconds histogram\n";
  for (const auto& [stage, h] : stages_) h.Render("anvil_stage_seconds", "stage=\"" + stage + "\"", out);
  out +=
      "# HELP anvil_http_requests_total HTTP requests answered, by route and code.\n"
      "# TYPE anvil_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    Line(out, "anvil_http_requests_total", "route=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"",
         static_cast<double>(n));
  }
  out +=
      "# HELP anvil_http_request_seconds Seconds from a request's arrival to its answer, by route.\n"
      "# TYPE anvil_http_request_seconds histogram\n";
  for (const auto& [route, h] : latency_) h.Render("anvil_http_request_seconds", "route=\"" + route + "\"", out);
  return out;
}

}  // namespace anvil
