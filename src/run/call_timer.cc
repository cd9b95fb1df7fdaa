// libanvil_timer.so: a timed call in compiled code (docs/protocol.md, "call
// clock"; catalog D3). Loaded by the timing code (python/anvil_py/timing.py)
// before the candidate's code, it takes one timed call from anvil's "go" to
// its "done": it waits for anvil's go, records the start event (after an L2
// flush when the task server writes the inputs after "ready"), calls the
// candidate's forward (a callback), records the end event, synchronizes the
// whole device, reads the time and sends it to anvil with the call's nonce.
// Between go and done nothing runs that Python code could replace
// (torch.cuda.Event, torch.cuda.synchronize, os.write, struct): a patched or
// self-restoring timer function changes nothing here, and anvil's own clock
// and the kernel trace bound what native code could do.
//
// The CUDA driver is opened with dlopen (the process already has it through
// torch), so the library loads on every machine; without a device it times
// on the host's monotonic clock.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

using CUresult = int;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;
using CUdeviceptr = unsigned long long;
constexpr int kLimitPersistingL2 = 0x06;  // CU_LIMIT_PERSISTING_L2_CACHE_SIZE

struct Driver {
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_elapsed)(float*, CUevent, CUevent) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*ctx_set_limit)(int, size_t) = nullptr;
  CUresult (*ctx_reset_persisting_l2)() = nullptr;
  CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
};

// What a timed call relies on — the driver's entry points, the two events,
// whether CUDA is in use — on a page of its own, made read-only before the
// first timed call (Seal): native code in the process would need mprotect (a
// named cheat) to point a timed call elsewhere (catalog D4, D8). The code
// reaches it by a fixed offset, through no pointer; the library is linked
// with full RELRO, so no lazily bound GOT slot (clock_gettime's) is writable
// either.
struct alignas(4096) Sealed {
  Driver driver;
  CUevent start = nullptr;
  CUevent end = nullptr;
  bool cuda = false;
  // When the task server writes a call's inputs after "ready": zeroed after
  // go and before the start event (twice the L2), so that the call finds its
  // inputs in device memory and starts on an idle device; `now` (the kernel
  // trace's clock) then says when the flush ended, where the call's trace
  // window begins. flush_bytes 0: the worker flushed before "ready".
  CUdeviceptr flush = 0;
  size_t flush_bytes = 0;
  uint64_t (*now)() = nullptr;
};
Sealed g_sealed;
bool g_is_sealed = false;
bool g_l2_reset = true;
uint64_t g_flush_end = 0;  // Sealed::now() after the last call's flush (0: none).
// From a call's return until anvil_timer_release: every signal of this
// thread held (blocked), so that no handler the candidate installed can run
// on it — and finish an output after the call returned — before the worker
// has taken its look at the output (a fault on an output's page then ends the
// process instead of reaching a handler).
sigset_t g_saved_mask;
bool g_signals_held = false;

void HoldSignals() {
  if (g_signals_held) return;
  sigset_t all;
  sigfillset(&all);
  g_signals_held = pthread_sigmask(SIG_BLOCK, &all, &g_saved_mask) == 0;
}

void ReleaseSignals() {
  if (g_signals_held) {
    g_signals_held = false;
    pthread_sigmask(SIG_SETMASK, &g_saved_mask, nullptr);
  }
}

void Seal() {
  if (!g_is_sealed) g_is_sealed = mprotect(&g_sealed, sizeof g_sealed, PROT_READ) == 0;
}

// A write to the sealed page faults. The fault handler names it on anvil's
// report channel (a tamper finding, docs/protocol.md) before the fault takes
// its course: the handler that was there before, or the default action (the
// faulting write runs again and the process ends). A candidate that installs
// a handler of its own only loses this message: its write still failed.
int g_report_fd = -1;
struct sigaction g_previous[2];
constexpr int kFaults[2] = {SIGSEGV, SIGBUS};

void OnFault(int sig, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  const auto page = reinterpret_cast<uintptr_t>(&g_sealed);
  if (g_report_fd >= 0 && at >= page && at < page + sizeof g_sealed) {
    static const char kLine[] =
        "{\"kind\": \"tamper\", \"changed\": [\"libanvil_timer.so's sealed state (the driver entry points and "
        "events a timed call uses)\"], \"when\": \"at a write to it, which faulted\"}\n";
    ssize_t ignored = write(g_report_fd, kLine, sizeof kLine - 1);
    (void)ignored;
  }
  const struct sigaction& before = g_previous[sig == SIGBUS ? 1 : 0];
  if ((before.sa_flags & SA_SIGINFO) != 0 && before.sa_sigaction != nullptr) {
    before.sa_sigaction(sig, info, context);
  } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
    before.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);  // The write runs again on return, and the fault ends the process.
  }
}
char g_error[512] = "";

// The channel's message: an 8-byte tag, the nonce, a time (timing.py _MESSAGE).
struct Message {
  char tag[8];
  uint64_t nonce;
  double ms;
};
static_assert(sizeof(Message) == 24, "the message is 24 bytes, packed like struct '<8sQd'");

void SetError(const char* what, CUresult r) {
  const char* text = nullptr;
  if (g_sealed.driver.get_error_string != nullptr) g_sealed.driver.get_error_string(r, &text);
  std::snprintf(g_error, sizeof g_error, "%s failed: CUDA error %d (%s)", what, r, text ? text : "unknown");
}

bool WriteMessage(int fd, const char* tag, uint64_t nonce, double ms) {
  Message m{};
  std::memcpy(m.tag, tag, std::min(std::strlen(tag), sizeof m.tag));
  m.nonce = nonce;
  m.ms = ms;
  const char* p = reinterpret_cast<const char*>(&m);
  size_t left = sizeof m;
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::snprintf(g_error, sizeof g_error, "writing to anvil's timing channel: %s", std::strerror(errno));
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadMessage(int fd, Message& m) {
  char* p = reinterpret_cast<char*>(&m);
  size_t got = 0;
  while (got < sizeof m) {
    const ssize_t n = read(fd, p + got, sizeof m - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::snprintf(g_error, sizeof g_error, "anvil's timing channel closed");
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

template <typename F>
bool Resolve(void* lib, F& fn, const char* name, const char* fallback = nullptr) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr && fallback != nullptr) sym = dlsym(lib, fallback);
  fn = reinterpret_cast<F>(sym);
  if (fn == nullptr) std::snprintf(g_error, sizeof g_error, "libcuda.so.1 has no %s", name);
  return fn != nullptr;
}

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

extern "C" {

// Lets the signals held since the last call's return through again (their
// handlers run now, after the worker's look at the output).
__attribute__((visibility("default"))) void anvil_timer_release() { ReleaseSignals(); }

// Seals the timer's state now (it is sealed at the latest by the first
// timed call) and has a write to it named on `report_fd` (anvil's report
// channel; -1: none) as it faults. Called before the candidate's code loads.
__attribute__((visibility("default"))) void anvil_timer_watch(int report_fd) {
  Seal();
  g_report_fd = report_fd;
  for (int i = 0; i < 2; ++i) {
    struct sigaction on_fault {};
    on_fault.sa_sigaction = OnFault;
    on_fault.sa_flags = SA_SIGINFO;
    sigemptyset(&on_fault.sa_mask);
    sigaction(kFaults[i], &on_fault, &g_previous[i]);
  }
}

// The reason of the last failure.
__attribute__((visibility("default"))) const char* anvil_timer_error() { return g_error; }

// Times CUDA calls from now on: the driver and two events in the context that
// is current on this thread (torch's). `flush` (`flush_bytes` of device
// memory; null: none) is zeroed after each go, before the start event, and
// `now` (null: none) read once it is done (anvil_timer_flush_end). 0, or -1
// (anvil_timer_error says why).
__attribute__((visibility("default"))) int anvil_timer_open_cuda(void* flush, size_t flush_bytes, uint64_t (*now)()) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::snprintf(g_error, sizeof g_error, "cannot open libcuda.so.1: %s", dlerror());
    return -1;
  }
  Driver d;
  if (!Resolve(lib, d.event_create, "cuEventCreate") || !Resolve(lib, d.event_record, "cuEventRecord") ||
      !Resolve(lib, d.event_elapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime") ||
      !Resolve(lib, d.ctx_synchronize, "cuCtxSynchronize") || !Resolve(lib, d.ctx_set_limit, "cuCtxSetLimit") ||
      !Resolve(lib, d.ctx_reset_persisting_l2, "cuCtxResetPersistingL2Cache") ||
      !Resolve(lib, d.memset_d8_async, "cuMemsetD8Async") ||
      !Resolve(lib, d.stream_synchronize, "cuStreamSynchronize")) {
    return -1;
  }
  (void)Resolve(lib, d.get_error_string, "cuGetErrorString");
  if (g_is_sealed) {
    std::snprintf(g_error, sizeof g_error, "the timer is already sealed");
    return -1;
  }
  g_sealed.driver = d;
  for (CUevent* e : {&g_sealed.start, &g_sealed.end}) {
    if (CUresult r = g_sealed.driver.event_create(e, 0); r != 0) {
      SetError("cuEventCreate", r);
      return -1;
    }
  }
  g_sealed.cuda = true;
  g_sealed.flush = reinterpret_cast<CUdeviceptr>(flush);
  g_sealed.flush_bytes = flush == nullptr ? 0 : flush_bytes;
  g_sealed.now = now;
  Seal();
  return 0;
}

// The kernel trace's clock when the last call's flush after go ended (0:
// none): its trace window begins there, the flush being the harness's.
__attribute__((visibility("default"))) uint64_t anvil_timer_flush_end() { return g_flush_end; }

// Catalog D7: lines a kernel marked persisting would survive the L2 flush;
// take the set-aside away and demote them. 0; 1 where the device does not
// support it (e.g. MIG: not tried again).
__attribute__((visibility("default"))) int anvil_timer_reset_l2() {
  if (!g_sealed.cuda || !g_l2_reset) return 1;
  if (g_sealed.driver.ctx_set_limit(kLimitPersistingL2, 0) != 0 || g_sealed.driver.ctx_reset_persisting_l2() != 0) {
    g_l2_reset = false;
    return 1;
  }
  return 0;
}

// One timed call. With a channel (go_fd, done_fd >= 0): says "ready", waits
// for "go", and after the call sends "done" with go's nonce and the time.
// The thread's signals are held from before "ready" until the call has
// started (anvil may have the task server write the call's inputs meanwhile:
// no handler runs on this thread between their arrival and the start), and
// again from the call's return on, until anvil_timer_release().
// `forward` returns 0, or nonzero when it raised (no time is sent then).
// `stream`: the stream the events are recorded on (CUDA). Returns the
// milliseconds, or -1 (CUDA failed), -2 (the channel), -3 (forward raised).
__attribute__((visibility("default"))) double anvil_timer_call(int (*forward)(), void* stream, int go_fd, int done_fd) {
  Seal();
  const bool channel = go_fd >= 0 && done_fd >= 0;
  uint64_t nonce = 0;
  if (channel) {
    HoldSignals();
    if (!WriteMessage(done_fd, "ready", 0, 0.0)) return -2;
    Message go{};
    if (!ReadMessage(go_fd, go)) return -2;
    if (std::strncmp(go.tag, "go", sizeof go.tag) != 0) {
      std::snprintf(g_error, sizeof g_error, "unexpected timing message %.8s", go.tag);
      return -2;
    }
    nonce = go.nonce;
  }
  double ms = 0;
  if (g_sealed.cuda) {
    auto s = static_cast<CUstream>(stream);
    g_flush_end = 0;
    if (g_sealed.flush_bytes > 0) {
      if (CUresult r = g_sealed.driver.memset_d8_async(g_sealed.flush, 0, g_sealed.flush_bytes, s); r != 0) {
        SetError("cuMemsetD8Async", r);
        return -1;
      }
      if (CUresult r = g_sealed.driver.stream_synchronize(s); r != 0) {
        SetError("cuStreamSynchronize", r);
        return -1;
      }
      if (g_sealed.now != nullptr) g_flush_end = g_sealed.now();
    }
    if (CUresult r = g_sealed.driver.event_record(g_sealed.start, s); r != 0) {
      SetError("cuEventRecord", r);
      return -1;
    }
    ReleaseSignals();  // A handler held since "ready" runs now, inside the call.
    const int failed = forward();
    HoldSignals();
    if (failed != 0) return -3;
    if (CUresult r = g_sealed.driver.event_record(g_sealed.end, s); r != 0) {
      SetError("cuEventRecord", r);
      return -1;
    }
    // The whole device: work on any stream ends inside anvil's wall time.
    if (CUresult r = g_sealed.driver.ctx_synchronize(); r != 0) {
      SetError("cuCtxSynchronize", r);
      return -1;
    }
    float elapsed = 0;
    if (CUresult r = g_sealed.driver.event_elapsed(&elapsed, g_sealed.start, g_sealed.end); r != 0) {
      SetError("cuEventElapsedTime", r);
      return -1;
    }
    ms = elapsed;
  } else {
    const double t0 = NowMs();
    ReleaseSignals();
    const int failed = forward();
    ms = NowMs() - t0;
    HoldSignals();
    if (failed != 0) return -3;
  }
  if (channel && !WriteMessage(done_fd, "done", nonce, ms)) return -2;
  return ms;
}

}  // extern "C"
