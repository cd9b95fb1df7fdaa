// What the reward service counts, in Prometheus' text format for GET
// /metrics: verdicts by status, HTTP requests by route and code, stage
// latencies and the requests' own as histograms, and gauges of what it holds
// now (jobs by state, compile and run slots in use). Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "service/evaluation_service.h"
#include "verify/verdict.h"

namespace anvil {

// A Prometheus histogram: cumulative buckets by upper bound, a sum and a count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // `name{labels,le="..."} n` lines, then _sum and _count; `labels` is "" or
  // `key="value",...` without braces.
  void Render(const std::string& name, const std::string& labels, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::vector<unsigned long long> counts_;  // Per bucket (not cumulative); the last is +Inf.
  double sum_ = 0;
  unsigned long long count_ = 0;
};

class ServiceMetrics {
 public:
  // A verdict made: its status and its stage times; or one the verdict cache
  // answered (its status alone counts, and the hit).
  void CountVerdict(const Verdict& verdict, bool cached = false);
  // An HTTP request answered: its route ("/v1/evaluate"), code and seconds.
  void CountRequest(const std::string& route, int code, double seconds);
  // The text of GET /metrics, with the service's load now.
  std::string Render(const ServiceLoad& load, int sync_waiting);

 private:
  std::mutex mu_;
  std::map<std::string, unsigned long long> verdicts_;  // By status.
  unsigned long long cache_hits_ = 0;
  std::map<std::pair<std::string, int>, unsigned long long> requests_;  // By (route, code).
  std::map<std::string, Histogram> stages_;                             // By stage.
  std::map<std::string, Histogram> latency_;                            // By route.
};

}  // namespace anvil
