#include "integrity/kernel_trace.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "core/files.h"
#include "core/stats.h"

namespace anvil {
namespace {

// The margin a call's busy time may exceed its events by: CUPTI and CUDA
// events are separate clocks (the kernels of an honest call run between its
// events, so its busy time is at most its event time). In 52 honest verdicts
// on the H200 the median busy time was 12-40 us under the median event time
// (the launch is inside the events); 20 us of slack let a forger of a 19 us
// kernel through (tests/gpu/redteam/d8_forged_event_native.cu), 5 us does not.
constexpr double kEventSlack = 1.10;
constexpr double kEventSlackMs = 0.005;
// The margin the traced calls' median busy time may exceed the untraced
// calls' median event time by: the trace slows kernels by ~1-3 %, and the two
// halves ran different input sets.
constexpr double kSplitSlack = 1.15;
constexpr double kSplitSlackMs = 0.005;
// Foreign (non-plumbing) GPU time the share rule ignores: noise.
constexpr double kForeignFloorMs = 0.02;
constexpr std::size_t kTopKernels = 12;
constexpr std::size_t kNamedInMessage = 3;

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

bool ParseU64(const std::string& s, uint64_t& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtoull(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ContainsAny(const std::string& s, std::initializer_list<const char*> needles) {
  for (const char* n : needles) {
    if (s.find(n) != std::string::npos) return true;
  }
  return false;
}

std::string FullDemangled(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                &std::free);
  return status == 0 && d ? d.get() : name;
}

std::string Demangled(const std::string& name) {
  std::string out = FullDemangled(name);
  return out.size() > 160 ? out.substr(0, 157) + "..." : out;
}

const char* OriginName(KernelOrigin o) {
  switch (o) {
    case KernelOrigin::kOwn:
      return "own";
    case KernelOrigin::kPlumbing:
      return "plumbing";
    case KernelOrigin::kVendor:
      return "vendor";
    case KernelOrigin::kOther:
      return "other";
  }
  return "other";
}

double Ms(const TraceRecord& r) { return r.end > r.start ? static_cast<double>(r.end - r.start) / 1e6 : 0.0; }

// Time some record ran inside [begin, end], overlaps counted once.
double BusyMs(std::vector<const TraceRecord*> in, uint64_t begin, uint64_t end) {
  std::sort(in.begin(), in.end(), [](auto* a, auto* b) { return a->start < b->start; });
  uint64_t busy = 0, cursor = begin;
  for (const TraceRecord* r : in) {
    const uint64_t s = std::max(r->start, cursor);
    const uint64_t e = std::min(r->end, end);
    if (e > s) {
      busy += e - s;
      cursor = e;
    }
  }
  return static_cast<double>(busy) / 1e6;
}

RuleHit Cheat(const char* rule, std::string message) {
  RuleHit h;
  h.rule = rule;
  h.severity = "cheat";
  h.source = "kernel trace";
  h.message = std::move(message);
  return h;
}

std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamedInMessage; ++i) {
    out += (i ? ", " : "") + names[i];
  }
  if (names.size() > kNamedInMessage) out += " and " + std::to_string(names.size() - kNamedInMessage) + " more";
  return out;
}

}  // namespace

Result<KernelTrace> ParseKernelTrace(const std::string& text) {
  KernelTrace trace;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitTabs(line);
    auto bad = [&] { return Status::Error("kernel trace line " + std::to_string(number) + " is malformed: " + line); };
    if (f[0] == "E" && f.size() == 2) {
      trace.error = f[1];
    } else if (f[0] == "N" && f.size() == 2) {
      trace.note = f[1];
    } else if (f[0] == "P" && f.size() == 3) {
      trace.l2_calls.push_back(f[2]);
    } else if (f[0] == "D" && f.size() == 2) {
      if (!ParseU64(f[1], trace.dropped)) return bad();
    } else if (f[0] == "W" && f.size() == 4) {
      TraceWindow w;
      if (!ParseU64(f[1], w.begin) || !ParseU64(f[2], w.end)) return bad();
      w.label = f[3];
      trace.windows.push_back(std::move(w));
    } else if ((f[0] == "K" || f[0] == "M") && f.size() == 6) {
      TraceRecord r;
      uint64_t stream = 0, extra = 0;
      if (!ParseU64(f[1], r.start) || !ParseU64(f[2], r.end) || !ParseU64(f[3], stream) || !ParseU64(f[4], extra)) {
        return bad();
      }
      r.stream = static_cast<uint32_t>(stream);
      r.name = f[5];
      if (f[0] == "K") {
        r.persisting = extra != 0;
      } else {
        r.kind = r.name == "memset" ? TraceRecord::Kind::kMemset : TraceRecord::Kind::kMemcpy;
        r.bytes = extra;
      }
      trace.records.push_back(std::move(r));
    } else {
      return bad();
    }
  }
  return trace;
}

Result<KernelTrace> ReadKernelTrace(const std::filesystem::path& file) {
  auto text = ReadFile(file);
  if (!text.ok()) return text.status();
  return ParseKernelTrace(text.value());
}

namespace {

// "a::(anonymous namespace)::b::f(int)" -> "b::f(int)": what is left of a
// demangled name once namespaces of internal linkage (and any module prefix
// before them) are dropped; the name itself when it has none.
std::string WithoutInternalScope(const std::string& demangled) {
  std::string s = demangled;
  for (const char* marker : {"(anonymous namespace)::", "_INTERNAL_"}) {
    const auto pos = s.rfind(marker);
    if (pos == std::string::npos) continue;
    s = s.substr(pos + std::strlen(marker));
    if (std::strcmp(marker, "_INTERNAL_") == 0) s = s.substr(std::min(s.size(), s.find("::") + 2));
  }
  return s;
}

}  // namespace

OwnKernels::OwnKernels(const std::vector<std::string>& defined_functions) {
  for (const std::string& f : defined_functions) {
    if (f.find("__device_stub__") != std::string::npos) continue;
    exact_.insert(f);
    // Internal linkage: the host says _ZL..., the device _Z... or a prefixed name.
    if (f.starts_with("_ZL")) exact_.insert("_Z" + f.substr(3));
    const std::string d = FullDemangled(f);
    if (d.find('(') != std::string::npos) demangled_.insert(WithoutInternalScope(d));
  }
}

bool OwnKernels::Contains(const std::string& kernel_name) const {
  if (exact_.count(kernel_name)) return true;
  // Only a name of internal linkage may match by its last components: a global
  // foo(float*) elsewhere is not the candidate's static one.
  if (!kernel_name.starts_with("_Z") ||
      (kernel_name.find("_INTERNAL_") == std::string::npos && kernel_name.find("_GLOBAL__N_") == std::string::npos)) {
    return false;
  }
  const std::string d = WithoutInternalScope(FullDemangled(kernel_name));
  return d.find('(') != std::string::npos && demangled_.count(d) > 0;
}

KernelOrigin ClassifyKernel(const TraceRecord& r, const OwnKernels& own) {
  if (r.kind != TraceRecord::Kind::kKernel) return KernelOrigin::kPlumbing;
  if (own.Contains(r.name)) return KernelOrigin::kOwn;
  const std::string n = Lower(r.name);
  const bool aten = ContainsAny(n, {"2at6native", "at::native", "2at4cuda", "c10"});
  if (aten) {
    return ContainsAny(n, {"fill", "copy", "memset", "zero"}) ? KernelOrigin::kPlumbing : KernelOrigin::kOther;
  }
  if (ContainsAny(n, {"cublas", "cudnn", "cutlass", "xmma", "gemm", "gemv", "nvjet", "cufft", "fft2d", "fft_",
                      "cusparse", "cusolver", "implicit_convolve", "explicit_convolve", "winograd", "cudnn"})) {
    return KernelOrigin::kVendor;
  }
  return KernelOrigin::kOther;
}

std::vector<RuleHit> JudgeKernelTrace(const KernelTrace& trace, const OwnKernels& own_symbols,
                                      const std::vector<double>& event_ms, TraceEvidence& ev) {
  std::vector<RuleHit> hits;
  ev = TraceEvidence();
  ev.dropped = trace.dropped;
  ev.windows = static_cast<int>(trace.windows.size());
  if (!trace.error.empty()) {
    ev.error = "the kernel trace did not start: " + trace.error;
    return hits;
  }
  if (trace.windows.empty()) {
    ev.error = "the candidate's process marked no call in its kernel trace";
    return hits;
  }
  const bool any_kernel = std::any_of(trace.records.begin(), trace.records.end(),
                                      [](const TraceRecord& r) { return r.kind == TraceRecord::Kind::kKernel; });
  if (!any_kernel) {
    ev.error = "CUPTI recorded no kernel at all, not even the harness's: the trace is not judged";
    return hits;
  }
  ev.ran = true;
  const bool complete = trace.dropped == 0;
  if (!complete) {
    ev.error = "CUPTI dropped " + std::to_string(trace.dropped) +
               " records: whether every call ran the candidate's kernels, and only inside calls, was not judged";
  }

  std::vector<TraceWindow> windows = trace.windows;
  std::sort(windows.begin(), windows.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  // The window a record started in, or -1.
  auto window_of = [&](const TraceRecord& r) -> int {
    auto it = std::upper_bound(windows.begin(), windows.end(), r.start,
                               [](uint64_t t, const TraceWindow& w) { return t < w.begin; });
    if (it == windows.begin()) return -1;
    --it;
    return r.start <= it->end ? static_cast<int>(it - windows.begin()) : -1;
  };

  std::vector<std::vector<const TraceRecord*>> in_window(windows.size());
  std::vector<std::string> outside, vendor, persisting;
  std::map<std::string, TraceKernelSummary> by_name;
  for (const TraceRecord& r : trace.records) {
    const int w = window_of(r);
    const KernelOrigin origin = ClassifyKernel(r, own_symbols);
    const bool suspect = origin == KernelOrigin::kOwn || origin == KernelOrigin::kVendor;
    // Before the first call the model was being built: a kernel there (a
    // weight re-layout in __init__) is the candidate's business.
    if (w < 0) {
      if (suspect && r.start >= windows.front().begin) outside.push_back(Demangled(r.name));
      continue;
    }
    in_window[w].push_back(&r);
    if (r.kind != TraceRecord::Kind::kKernel) continue;
    ++ev.kernels;
    if (origin == KernelOrigin::kVendor) vendor.push_back(Demangled(r.name));
    if (r.persisting) persisting.push_back(Demangled(r.name));
    TraceKernelSummary& s = by_name[r.name];
    s.origin = OriginName(origin);
    s.launches += 1;
    s.total_ms += Ms(r);
  }
  auto unique = [](std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  unique(outside);
  unique(vendor);
  unique(persisting);

  for (auto& [name, s] : by_name) {
    s.name = Demangled(name);
    ev.top.push_back(s);
  }
  std::sort(ev.top.begin(), ev.top.end(), [](auto& a, auto& b) { return a.total_ms > b.total_ms; });
  if (ev.top.size() > kTopKernels) ev.top.resize(kTopKernels);

  // Every trial and call must run the candidate's own kernels.
  if (complete && !own_symbols.empty()) {
    std::vector<std::string> without;
    int calls = 0;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      ++calls;
      const bool own = std::any_of(in_window[w].begin(), in_window[w].end(), [&](const TraceRecord* r) {
        return ClassifyKernel(*r, own_symbols) == KernelOrigin::kOwn;
      });
      if (!own) without.push_back(windows[w].label);
    }
    if (!without.empty()) {
      hits.push_back(Cheat("trace.no_own_kernel",
                           "none of the candidate's own kernels ran in " + std::to_string(without.size()) + " of " +
                               std::to_string(calls) + " calls (" + NameList(without) +
                               "): their outputs came from elsewhere — a replay, a copy, torch or a library"));
    }
  }
  if (!vendor.empty()) {
    hits.push_back(Cheat("trace.vendor_kernel",
                         "library kernels the candidate's build does not define ran in its "
                         "calls: " +
                             NameList(vendor)));
  }
  if (complete && !outside.empty()) {
    hits.push_back(Cheat("trace.outside_call",
                         "the candidate's kernels ran outside its calls (launched by a thread between calls, or "
                         "still queued after one): " +
                             NameList(outside)));
  }
  if (!persisting.empty()) {
    hits.push_back(Cheat("trace.l2_persist",
                         "kernels ran with a persisting-L2 access policy window (data kept in L2 across the timing "
                         "flush): " +
                             NameList(persisting)));
  } else if (!trace.l2_calls.empty()) {
    std::vector<std::string> calls = trace.l2_calls;
    std::sort(calls.begin(), calls.end());
    calls.erase(std::unique(calls.begin(), calls.end()), calls.end());
    hits.push_back(Cheat("trace.l2_persist",
                         "the candidate's process asked for persisting L2 (data kept in L2 across the timing flush): " +
                             NameList(calls)));
  }

  // The timed calls: whose GPU time it was, and whether the events saw it.
  std::vector<double> shares, busy;
  std::vector<bool> traced(event_ms.size(), false);
  int mismatched = 0, timed = 0;
  std::string example;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const std::string& label = windows[w].label;
    if (!label.starts_with("call_")) continue;
    const int k = std::atoi(label.c_str() + 5);
    double own = 0, foreign = 0;
    for (const TraceRecord* r : in_window[w]) {
      const KernelOrigin o = ClassifyKernel(*r, own_symbols);
      if (o == KernelOrigin::kOwn) own += Ms(*r);
      if (o == KernelOrigin::kVendor || o == KernelOrigin::kOther) foreign += Ms(*r);
    }
    if (own + foreign > 0) shares.push_back(foreign < kForeignFloorMs ? 1.0 : own / (own + foreign));
    const double b = BusyMs(in_window[w], windows[w].begin, windows[w].end);
    busy.push_back(b);
    if (k >= 0 && k < static_cast<int>(event_ms.size())) {
      ++timed;
      traced[k] = true;
      if (b > event_ms[k] * kEventSlack + kEventSlackMs) {
        ++mismatched;
        if (example.empty()) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "%s: kernels busy %.4g ms, events %.4g ms", label.c_str(), b, event_ms[k]);
          example = buf;
        }
      }
    }
  }
  if (!shares.empty()) ev.own_share = ComputeStats(shares).median_ms;
  if (!busy.empty()) ev.busy_ms = ComputeStats(busy).median_ms;
  if (!own_symbols.empty() && ev.own_share >= 0 && ev.own_share < 0.5) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "in the median timed call the candidate's own kernels took only %.0f%% of the GPU time that "
                  "was not plumbing (fills, copies): most of the work ran in kernels it did not write",
                  ev.own_share * 100);
    hits.push_back(Cheat("trace.foreign_time", buf));
  }
  if (timed > 0 && mismatched * 2 > timed) {
    hits.push_back(Cheat("trace.event_mismatch",
                         std::to_string(mismatched) + " of " + std::to_string(timed) +
                             " timed calls kept the GPU busy much longer than their CUDA events measured (" + example +
                             "): work ran outside the timed stream's events"));
  }
  // The calls whose times count are the ones the trace did not watch: their
  // events must tell the same story as the watched calls' kernels.
  std::vector<double> untraced_events;
  for (std::size_t k = 0; k < event_ms.size(); ++k) {
    if (!traced[k]) untraced_events.push_back(event_ms[k]);
  }
  if (timed > 0 && !untraced_events.empty()) {
    const double watched = ComputeStats(busy).median_ms;
    const double unwatched = ComputeStats(untraced_events).median_ms;
    if (watched > unwatched * kSplitSlack + kSplitSlackMs) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "the %d timed calls the trace watched kept the GPU busy %.4g ms (median), but the %zu calls it "
                    "did not watch, whose times count, reported %.4g ms: their times were forged, or the candidate "
                    "runs differently when it is watched",
                    timed, watched, untraced_events.size(), unwatched);
      hits.push_back(Cheat("trace.untraced_time", buf));
    }
  }
  // The device's work for the whole process: every kernel and copy the trace
  // saw, and each timed call it did not watch at the watched calls' median.
  std::vector<const TraceRecord*> all;
  all.reserve(trace.records.size());
  for (const TraceRecord& r : trace.records) all.push_back(&r);
  ev.work_ms = BusyMs(std::move(all), 0, UINT64_MAX) + static_cast<double>(untraced_events.size()) * ev.busy_ms;
  return hits;
}

}  // namespace anvil
