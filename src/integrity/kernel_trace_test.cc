#include "integrity/kernel_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace anvil {
namespace {

constexpr const char* kOwn = "_Z10add_kernelPKfPfi";
constexpr const char* kFill =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_";
constexpr const char* kCublas = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32";
constexpr const char* kAtenAdd = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEEEEviT0_";

// Builds the recorder's file: a harness fill before each window, then what
// each window holds, 1 ms apart (times in microseconds for readability).
struct TraceText {
  std::string text;
  void Kernel(uint64_t start_us, uint64_t end_us, const std::string& name, int persisting = 0) {
    text += "K\t" + std::to_string(start_us * 1000) + "\t" + std::to_string(end_us * 1000) + "\t7\t" +
            std::to_string(persisting) + "\t" + name + "\n";
  }
  void Copy(uint64_t start_us, uint64_t end_us) {
    text += "M\t" + std::to_string(start_us * 1000) + "\t" + std::to_string(end_us * 1000) + "\t7\t4096\tmemcpy\n";
  }
  void Window(uint64_t begin_us, uint64_t end_us, const std::string& label) {
    text += "W\t" + std::to_string(begin_us * 1000) + "\t" + std::to_string(end_us * 1000) + "\t" + label + "\n";
  }
};

// trial_0 at 1000 us, call_0.. at 2000, 3000, ... each running `kernel` for
// `kernel_us` (a harness fill and an input copy before each).
TraceText Honest(int calls, const std::string& kernel = kOwn, uint64_t kernel_us = 100) {
  TraceText t;
  t.Kernel(100, 110, kOwn);  // __init__ ran the kernel once (a weight re-layout): fine.
  for (int k = 0; k <= calls; ++k) {
    const uint64_t base = 1000 * (k + 1);
    t.Kernel(base - 300, base - 250, kFill);
    t.Copy(base - 200, base - 150);
    t.Kernel(base + 10, base + 10 + kernel_us, kernel);
    t.Window(base, base + 150, k == 0 ? "trial_0" : "call_" + std::to_string(k - 1));
  }
  t.text += "D\t0\n";
  return t;
}

std::vector<double> Events(int calls, double ms) { return std::vector<double>(calls, ms); }

bool Has(const std::vector<RuleHit>& hits, const std::string& rule) {
  return std::any_of(hits.begin(), hits.end(), [&](const RuleHit& h) { return h.rule == rule; });
}

std::vector<RuleHit> Judge(const std::string& text, const std::vector<double>& events, TraceEvidence& ev) {
  auto trace = ParseKernelTrace(text);
  EXPECT_TRUE(trace.ok()) << trace.message();
  return JudgeKernelTrace(trace.value(), OwnKernels({kOwn, "launch_add"}), events, ev);
}

TEST(KernelTraceTest, HonestCandidatePassesAndTheEvidenceSaysWhatRan) {
  TraceEvidence ev;
  auto hits = Judge(Honest(5).text, Events(5, 0.105), ev);
  EXPECT_TRUE(hits.empty()) << hits[0].rule << ": " << hits[0].message;
  EXPECT_TRUE(ev.ran);
  EXPECT_EQ(ev.windows, 6);
  EXPECT_EQ(ev.kernels, 6);
  EXPECT_DOUBLE_EQ(ev.own_share, 1.0);
  EXPECT_NEAR(ev.busy_ms, 0.1, 1e-9);
  ASSERT_FALSE(ev.top.empty());
  EXPECT_EQ(ev.top[0].name, "add_kernel(float const*, float*, int)");
  EXPECT_EQ(ev.top[0].origin, "own");
  EXPECT_EQ(ev.top[0].launches, 6);
}

TEST(KernelTraceTest, ACallWithoutTheCandidatesKernelIsAReplay) {
  TraceText t = Honest(3);
  t.Window(9000, 9100, "call_3");  // A call that only copied (a replay).
  t.Copy(9010, 9020);
  TraceEvidence ev;
  auto hits = Judge(t.text, Events(4, 0.105), ev);
  ASSERT_TRUE(Has(hits, "trace.no_own_kernel"));
  EXPECT_NE(hits[0].message.find("1 of 5 calls (call_3)"), std::string::npos) << hits[0].message;
}

TEST(KernelTraceTest, VendorKernelsAndTheirTimeAreCheats) {
  TraceEvidence ev;
  auto hits = Judge(Honest(4, kCublas).text, Events(4, 0.105), ev);
  EXPECT_TRUE(Has(hits, "trace.vendor_kernel"));
  EXPECT_TRUE(Has(hits, "trace.no_own_kernel"));
  // The candidate's kernel runs, but a torch compute kernel does most of the work.
  TraceText t = Honest(4);
  for (int k = 1; k <= 4; ++k) t.Kernel(1000 * (k + 1) + 111, 1000 * (k + 1) + 140, kOwn);
  for (int k = 1; k <= 4; ++k) t.Kernel(1000 * (k + 1) + 5, 1000 * (k + 1) + 9, kAtenAdd);
  hits = Judge(t.text, Events(4, 0.14), ev);
  EXPECT_TRUE(hits.empty()) << hits[0].rule;  // 4 us of aten add against 129 us of its own.
  TraceText u = Honest(4);
  for (int k = 1; k <= 4; ++k) u.Kernel(1000 * (k + 1) + 110, 1000 * (k + 1) + 149, kAtenAdd);
  for (int k = 1; k <= 4; ++k) u.Kernel(1000 * (k + 1) + 110, 1000 * (k + 1) + 149, kAtenAdd);
  for (int k = 1; k <= 4; ++k) u.Kernel(1000 * (k + 1) + 110, 1000 * (k + 1) + 149, kAtenAdd);
  hits = Judge(u.text, Events(4, 0.14), ev);
  EXPECT_TRUE(Has(hits, "trace.foreign_time"));
  EXPECT_LT(ev.own_share, 0.5);
}

TEST(KernelTraceTest, TheCandidatesKernelBetweenCallsIsWorkOutsideTheCall) {
  TraceText t = Honest(3);
  t.Kernel(3500, 3600, kOwn);  // Between call_0 and call_1: a thread working ahead.
  TraceEvidence ev;
  EXPECT_TRUE(Has(Judge(t.text, Events(3, 0.105), ev), "trace.outside_call"));
  // Before the first window the model was being built: not judged.
  EXPECT_TRUE(Judge(Honest(3).text, Events(3, 0.105), ev).empty());
}

TEST(KernelTraceTest, KernelsBusyLongAfterTheEventsAreHiddenWork) {
  TraceEvidence ev;
  // D1: the events on the current stream saw 5 us; the kernel ran 100 us.
  auto hits = Judge(Honest(6).text, Events(6, 0.005), ev);
  ASSERT_TRUE(Has(hits, "trace.event_mismatch"));
  EXPECT_NE(hits[0].message.find("6 of 6 timed calls"), std::string::npos) << hits[0].message;
  // One slow outlier event is not enough.
  std::vector<double> events = Events(6, 0.105);
  events[2] = 0.005;
  EXPECT_FALSE(Has(Judge(Honest(6).text, events, ev), "trace.event_mismatch"));
}

TEST(KernelTraceTest, ASmallKernelWhoseEventsWereForgedToNothingIsCaught) {
  // The H200's D8 candidate: a 19 us kernel whose timer reports 0.1 us (the
  // slack was 20 us then, and let it through).
  TraceEvidence ev;
  EXPECT_TRUE(Has(Judge(Honest(6, kOwn, 19).text, Events(6, 0.0001), ev), "trace.event_mismatch"));
  // Honest, the same kernel's events took 41 us (the launch is inside them).
  EXPECT_TRUE(Judge(Honest(6, kOwn, 19).text, Events(6, 0.041), ev).empty());
  // Within 10 % + 5 us of its kernel: not a finding.
  EXPECT_TRUE(Judge(Honest(6, kOwn, 19).text, Events(6, 0.0155), ev).empty());
}

TEST(KernelTraceTest, TheProcesssWorkIsItsBusyTimePlusUntracedCallsAtTheTracedMedian) {
  // Honest(4): __init__'s kernel (10 us), then five windows with a fill, a
  // copy (50 us each) and the kernel (100 us): 1010 us busy.
  TraceEvidence ev;
  TraceText t = Honest(4);
  t.Kernel(1010, 1060, kFill);  // On another stream, inside the kernel's time: counted once.
  std::vector<double> events = Events(4, 0.105);
  events.push_back(0.098);  // Calls 4 and 5 ran untraced: at the traced median, 0.1 ms each.
  events.push_back(0.098);
  EXPECT_TRUE(Judge(t.text, events, ev).empty());
  EXPECT_NEAR(ev.work_ms, 1.010 + 2 * 0.1, 1e-9);
  // Every call traced: the busy time alone.
  Judge(t.text, Events(4, 0.105), ev);
  EXPECT_NEAR(ev.work_ms, 1.010, 1e-9);
}

TEST(KernelTraceTest, UntracedCallsReportingLessThanTheTracedOnesRanAreForged) {
  // Calls 0-3 traced (100 us of kernel each); calls 4-7 untraced, their times
  // the ones that count. A timer scaled down where the trace does not look:
  TraceEvidence ev;
  std::vector<double> events = Events(4, 0.105);
  for (int k = 0; k < 4; ++k) events.push_back(0.05);
  auto hits = Judge(Honest(4).text, events, ev);
  ASSERT_TRUE(Has(hits, "trace.untraced_time"));
  EXPECT_NE(hits[0].message.find("4 calls it did not watch"), std::string::npos) << hits[0].message;
  // Honest: untraced calls run a little faster than traced ones (no trace).
  for (int k = 4; k < 8; ++k) events[k] = 0.098;
  EXPECT_TRUE(Judge(Honest(4).text, events, ev).empty());
  // Every call traced: nothing to compare.
  EXPECT_TRUE(Judge(Honest(4).text, Events(4, 0.105), ev).empty());
}

TEST(KernelTraceTest, PersistingL2WindowIsACheat) {
  TraceText t = Honest(2);
  t.Kernel(2020, 2030, kOwn, 1);
  TraceEvidence ev;
  EXPECT_TRUE(Has(Judge(t.text, Events(2, 0.105), ev), "trace.l2_persist"));
}

TEST(KernelTraceTest, AskingForPersistingL2IsACheatWhateverTheLaunchesCarry) {
  // Catalog D7 by numeric ids: the launches carry no window the activity
  // records show, but the API calls that set it up were seen (P lines).
  TraceText t = Honest(2);
  t.text += "P\t1500\tcudaDeviceSetLimit persisting-L2 set-aside\n";
  t.text += "P\t1600\tcudaStreamSetAttribute persisting access policy window\n";
  t.text += "P\t2600\tcudaStreamSetAttribute persisting access policy window\n";
  TraceEvidence ev;
  auto hits = Judge(t.text, Events(2, 0.105), ev);
  ASSERT_TRUE(Has(hits, "trace.l2_persist"));
  for (const RuleHit& h : hits) {
    if (h.rule != "trace.l2_persist") continue;
    EXPECT_NE(h.message.find("cudaStreamSetAttribute persisting access policy window"), std::string::npos) << h.message;
    EXPECT_NE(h.message.find("cudaDeviceSetLimit"), std::string::npos) << h.message;
  }
  // A recorder that could not watch the calls says so and accuses no one.
  TraceText n = Honest(2);
  n.text +=
      "N\tpersisting-L2 calls not watched: cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED\n";
  auto parsed = ParseKernelTrace(n.text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_NE(parsed.value().note.find("not watched"), std::string::npos);
  EXPECT_FALSE(Has(Judge(n.text, Events(2, 0.105), ev), "trace.l2_persist"));
  EXPECT_FALSE(ParseKernelTrace("P\t1\n").ok());
}

TEST(KernelTraceTest, NoJudgementWithoutATrace) {
  TraceEvidence ev;
  EXPECT_TRUE(Judge("E\tcannot load CUPTI: libcupti.so: not found\n", {}, ev).empty());
  EXPECT_FALSE(ev.ran);
  EXPECT_NE(ev.error.find("libcupti.so"), std::string::npos);
  EXPECT_TRUE(Judge("W\t1\t2\ttrial_0\nD\t0\n", {}, ev).empty());  // CUPTI saw nothing, not even the harness.
  EXPECT_FALSE(ev.ran);
  // Dropped records: completeness rules are not judged, the evidence says so.
  TraceText t = Honest(2);
  t.Window(9000, 9100, "call_2");
  t.text += "D\t12\n";
  EXPECT_FALSE(Has(Judge(t.text, Events(3, 0.105), ev), "trace.no_own_kernel"));
  EXPECT_TRUE(ev.ran);
  EXPECT_NE(ev.error.find("dropped 12"), std::string::npos);
  EXPECT_FALSE(ParseKernelTrace("K\t1\tx\t0\t0\tname\n").ok());
  EXPECT_FALSE(ParseKernelTrace("Q\t1\n").ok());
}

TEST(KernelTraceTest, OwnKernelsMatchInternalLinkageAndClassifyForeignOnes) {
  OwnKernels own({"_ZL8hidden_kPf", "_ZN12_GLOBAL__N_13fooEPf", "cplain", "_Z34__device_stub__Z3barPfPf"});
  EXPECT_TRUE(own.Contains("_Z8hidden_kPf"));
  EXPECT_TRUE(own.Contains("_ZN12_GLOBAL__N_13fooEPf"));
  EXPECT_TRUE(own.Contains("cplain"));
  EXPECT_FALSE(own.Contains("_Z3barPf"));  // Stubs are not kernels.
  EXPECT_FALSE(own.Contains("_Z3fooPf"));
  TraceRecord r;
  r.name = kFill;
  EXPECT_EQ(ClassifyKernel(r, own), KernelOrigin::kPlumbing);
  r.name = kCublas;
  EXPECT_EQ(ClassifyKernel(r, own), KernelOrigin::kVendor);
  r.name = kAtenAdd;
  EXPECT_EQ(ClassifyKernel(r, own), KernelOrigin::kOther);
  r.name = "memcpy";
  r.kind = TraceRecord::Kind::kMemcpy;
  EXPECT_EQ(ClassifyKernel(r, own), KernelOrigin::kPlumbing);
}

}  // namespace
}  // namespace anvil
