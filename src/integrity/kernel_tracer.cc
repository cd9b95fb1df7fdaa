// libanvil_trace.so: the recorder behind the kernel trace (docs/rules.md,
// "Runtime"). Loaded into the candidate's process by the candidate worker
// before the candidate's code, it records through CUPTI's activity API every
// kernel, memcpy and memset the process runs on any stream, and the windows
// the worker marks (a trial's forward, a timed call). It only records: anvil
// reads the file it writes and judges it (src/integrity/kernel_trace.h), so no
// judgement runs where the candidate's code does.
//
// CUPTI is opened with dlopen (the path comes from the worker: torch's own
// copy), so the library loads everywhere and reports what is missing.
//
// The file, one record per line, tab-separated:
//   K start end stream persisting name      a kernel (persisting: 1 when its
//                                            launch carried a persisting-L2
//                                            access policy window)
//   M start end stream bytes memcpy|memset
//   W begin end label                        a window the worker marked
//   P time what                              a call that set aside L2 for
//                                            persisting accesses or gave a
//                                            stream, graph node or launch a
//                                            persisting access policy window
//                                            (CUPTI's callback API, runtime
//                                            and driver, whatever the source
//                                            spelled: numeric ids included)
//   N note                                   what the recorder could not watch
//   D dropped                                records CUPTI dropped
// Times are CUPTI timestamps in nanoseconds.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8 << 20;

struct Record {
  char kind;  // 'K' kernel, 'M' memcpy, 'S' memset
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t stream = 0;
  bool persisting = false;
  uint64_t bytes = 0;
  std::string name;
};

struct Window {
  uint64_t begin;
  uint64_t end;
  std::string label;
};

struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
};

Cupti cupti;
std::mutex mu;
std::vector<Record> records;           // Guarded by mu.
std::vector<Window> windows;           // Guarded by mu.
std::vector<std::string> l2_settings;  // P lines, guarded by mu.
std::string unwatched;                 // Why the API calls are not watched (an N line).
uint64_t dropped_total = 0;            // Guarded by mu.
std::string last_error;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

bool Persisting(const CUpti_ActivityKernel10* k) {
  const CUaccessPolicyWindow* w = k->pAccessPolicyWindow;
  return w != nullptr && w->num_bytes > 0 && w->hitProp == CU_ACCESS_PROPERTY_PERSISTING;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid) {
  std::vector<Record> got;
  CUpti_Activity* activity = nullptr;
  while (cupti.next_record(buffer, valid, &activity) == CUPTI_SUCCESS) {
    Record r;
    switch (activity->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(activity);
        r = {'K', k->start, k->end, k->streamId, Persisting(k), 0, k->name != nullptr ? k->name : "?"};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(activity);
        r = {'M', m->start, m->end, m->streamId, false, m->bytes, "memcpy"};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(activity);
        r = {'S', m->start, m->end, m->streamId, false, m->bytes, "memset"};
        break;
      }
      default:
        continue;
    }
    got.push_back(std::move(r));
  }
  size_t dropped = 0;
  if (cupti.dropped != nullptr) cupti.dropped(context, stream, &dropped);
  std::free(buffer);
  std::lock_guard<std::mutex> lock(mu);
  for (auto& r : got) records.push_back(std::move(r));
  dropped_total += dropped;
}

template <typename F>
bool Load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr) last_error = std::string("libcupti has no ") + name;
  return fn != nullptr;
}

bool Check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cupti.result_string != nullptr) cupti.result_string(r, &text);
  last_error = std::string(what) + " failed: " + (text != nullptr ? text : std::to_string(static_cast<int>(r)));
  return false;
}

// The parameters of the calls watched, as CUPTI hands them over (the layouts
// of generated_cuda_meta.h and generated_cuda_runtime_api_meta.h, which need
// the driver's internal API version to compile).
struct SetLimitParams {
  int limit;  // CUlimit / cudaLimit: the same values.
  size_t value;
};
struct SetAttributeParams {
  void* target;  // The stream or graph node.
  int attr;      // CUlaunchAttributeID / cudaLaunchAttributeID: the same values.
  const void* value;
};
struct DriverLaunchExParams {
  const CUlaunchConfig* config;
};
struct RuntimeLaunchExParams {
  const cudaLaunchConfig_t* config;
};

// The persisting-L2 evidence the activity records may not carry (a stream's
// attribute, a set-aside limit): the API calls themselves, at entry.
bool PersistingWindow(const CUaccessPolicyWindow& w) {
  return w.num_bytes > 0 && w.hitProp == CU_ACCESS_PROPERTY_PERSISTING;
}

bool PersistingAttributes(const CUlaunchAttribute* attrs, unsigned count) {
  for (unsigned i = 0; attrs != nullptr && i < count; ++i) {
    if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW &&
        PersistingWindow(attrs[i].value.accessPolicyWindow)) {
      return true;
    }
  }
  return false;
}

void RecordL2(const char* what) {
  uint64_t t = 0;
  if (cupti.timestamp != nullptr) cupti.timestamp(&t);
  std::lock_guard<std::mutex> lock(mu);
  l2_settings.push_back(std::to_string(t) + "\t" + what);
}

// The runtime's attribute values have the driver's layout (both are the
// launch-attribute union).
const CUaccessPolicyWindow& WindowOf(const void* value) {
  return static_cast<const CUlaunchAttributeValue*>(value)->accessPolicyWindow;
}

void CUPTIAPI ApiCallback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  const void* p = info->functionParams;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (id) {
      case CUPTI_DRIVER_TRACE_CBID_cuCtxSetLimit: {
        const auto* a = static_cast<const SetLimitParams*>(p);
        if (a->limit == static_cast<int>(CU_LIMIT_PERSISTING_L2_CACHE_SIZE) && a->value > 0)
          RecordL2("cuCtxSetLimit persisting-L2 set-aside");
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute:
      case CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute_ptsz: {
        const auto* a = static_cast<const SetAttributeParams*>(p);
        if (a->attr == static_cast<int>(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW) && a->value != nullptr &&
            PersistingWindow(WindowOf(a->value))) {
          RecordL2("cuStreamSetAttribute persisting access policy window");
        }
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetAttribute: {
        const auto* a = static_cast<const SetAttributeParams*>(p);
        if (a->attr == static_cast<int>(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW) && a->value != nullptr &&
            PersistingWindow(WindowOf(a->value))) {
          RecordL2("cuGraphKernelNodeSetAttribute persisting access policy window");
        }
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const auto* a = static_cast<const DriverLaunchExParams*>(p);
        if (a->config != nullptr && PersistingAttributes(a->config->attrs, a->config->numAttrs)) {
          RecordL2("cuLaunchKernelEx persisting access policy window");
        }
        break;
      }
      default:
        break;
    }
    return;
  }
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSetLimit_v3020: {
      const auto* a = static_cast<const SetLimitParams*>(p);
      if (a->limit == static_cast<int>(cudaLimitPersistingL2CacheSize) && a->value > 0)
        RecordL2("cudaDeviceSetLimit persisting-L2 set-aside");
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_v11000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_ptsz_v11000: {
      const auto* a = static_cast<const SetAttributeParams*>(p);
      if (a->attr == static_cast<int>(cudaLaunchAttributeAccessPolicyWindow) && a->value != nullptr &&
          PersistingWindow(WindowOf(a->value))) {
        RecordL2("cudaStreamSetAttribute persisting access policy window");
      }
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphKernelNodeSetAttribute_v11000: {
      const auto* a = static_cast<const SetAttributeParams*>(p);
      if (a->attr == static_cast<int>(cudaLaunchAttributeAccessPolicyWindow) && a->value != nullptr &&
          PersistingWindow(WindowOf(a->value))) {
        RecordL2("cudaGraphKernelNodeSetAttribute persisting access policy window");
      }
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* a = static_cast<const RuntimeLaunchExParams*>(p);
      if (a->config != nullptr &&
          PersistingAttributes(reinterpret_cast<const CUlaunchAttribute*>(a->config->attrs), a->config->numAttrs)) {
        RecordL2("cudaLaunchKernelExC persisting access policy window");
      }
      break;
    }
    default:
      break;
  }
}

// Subscribes ApiCallback to the calls above. The recording of kernels does not
// depend on it: a process may hold only one CUPTI subscriber.
bool WatchL2Calls() {
  CUpti_SubscriberHandle subscriber;
  if (cupti.subscribe == nullptr || cupti.enable_callback == nullptr) return false;
  if (!Check(cupti.subscribe(&subscriber, ApiCallback, nullptr), "cuptiSubscribe")) return false;
  bool ok = true;
  for (CUpti_CallbackId id :
       {CUPTI_DRIVER_TRACE_CBID_cuCtxSetLimit, CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute,
        CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetAttribute,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz}) {
    ok = Check(cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "cuptiEnableCallback") && ok;
  }
  for (CUpti_CallbackId id :
       {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSetLimit_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_v11000,
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_ptsz_v11000,
        CUPTI_RUNTIME_TRACE_CBID_cudaGraphKernelNodeSetAttribute_v11000,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060}) {
    ok = Check(cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id), "cuptiEnableCallback") && ok;
  }
  return ok;
}

}  // namespace

extern "C" {

// Opens CUPTI at `cupti_path` and starts recording. 0 on success; otherwise
// anvil_trace_error() says why.
__attribute__((visibility("default"))) int anvil_trace_start(const char* cupti_path) {
  void* lib = dlopen(cupti_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    last_error = std::string("cannot load CUPTI: ") + (e != nullptr ? e : cupti_path);
    return 1;
  }
  Load(lib, "cuptiGetResultString", cupti.result_string);
  Load(lib, "cuptiActivityGetNumDroppedRecords", cupti.dropped);
  Load(lib, "cuptiSubscribe", cupti.subscribe);
  Load(lib, "cuptiEnableCallback", cupti.enable_callback);
  if (!Load(lib, "cuptiActivityRegisterCallbacks", cupti.register_callbacks) ||
      !Load(lib, "cuptiActivityEnable", cupti.enable) || !Load(lib, "cuptiActivityDisable", cupti.disable) ||
      !Load(lib, "cuptiActivityFlushAll", cupti.flush_all) ||
      !Load(lib, "cuptiActivityGetNextRecord", cupti.next_record) || !Load(lib, "cuptiGetTimestamp", cupti.timestamp)) {
    return 1;
  }
  if (!Check(cupti.register_callbacks(BufferRequested, BufferCompleted), "cuptiActivityRegisterCallbacks")) return 1;
  if (!Check(cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling the kernel activity")) return 1;
  if (!Check(cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY), "enabling the memcpy activity")) return 1;
  if (!Check(cupti.enable(CUPTI_ACTIVITY_KIND_MEMSET), "enabling the memset activity")) return 1;
  // Without the callbacks the trace still judges kernels; the file says what
  // is missing (an N line) and launches with a persisting window still show.
  if (!WatchL2Calls()) unwatched = "persisting-L2 calls not watched: " + last_error;
  last_error.clear();
  return 0;
}

// Records (on != 0) or stops recording kernels, copies and memsets; the caller
// switches between calls, with the device idle.
__attribute__((visibility("default"))) int anvil_trace_enable(int on) {
  if (cupti.enable == nullptr) return 1;
  const auto set = on != 0 ? cupti.enable : cupti.disable;
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (!Check(set(kind), on != 0 ? "enabling an activity" : "disabling an activity")) return 1;
  }
  return 0;
}

__attribute__((visibility("default"))) const char* anvil_trace_error() { return last_error.c_str(); }

// CUPTI's clock, the one the records use (nanoseconds); 0 before a start.
__attribute__((visibility("default"))) uint64_t anvil_trace_now() {
  uint64_t t = 0;
  if (cupti.timestamp != nullptr) cupti.timestamp(&t);
  return t;
}

__attribute__((visibility("default"))) void anvil_trace_mark(const char* label, uint64_t begin, uint64_t end) {
  std::lock_guard<std::mutex> lock(mu);
  windows.push_back({begin, end, label});
}

// Flushes CUPTI's buffers and writes everything recorded so far to `path`.
// 0 on success.
__attribute__((visibility("default"))) int anvil_trace_write(const char* path) {
  if (cupti.flush_all == nullptr) {
    last_error = "the trace never started";
    return 1;
  }
  if (!Check(cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll")) return 1;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    last_error = std::string("cannot write ") + path;
    return 1;
  }
  std::lock_guard<std::mutex> lock(mu);
  for (const Record& r : records) {
    if (r.kind == 'K') {
      std::fprintf(f, "K\t%llu\t%llu\t%u\t%d\t%s\n", static_cast<unsigned long long>(r.start),
                   static_cast<unsigned long long>(r.end), r.stream, r.persisting ? 1 : 0, r.name.c_str());
    } else {
      std::fprintf(f, "M\t%llu\t%llu\t%u\t%llu\t%s\n", static_cast<unsigned long long>(r.start),
                   static_cast<unsigned long long>(r.end), r.stream, static_cast<unsigned long long>(r.bytes),
                   r.name.c_str());
    }
  }
  for (const std::string& l : l2_settings) std::fprintf(f, "P\t%s\n", l.c_str());
  if (!unwatched.empty()) std::fprintf(f, "N\t%s\n", unwatched.c_str());
  for (const Window& w : windows) {
    std::fprintf(f, "W\t%llu\t%llu\t%s\n", static_cast<unsigned long long>(w.begin),
                 static_cast<unsigned long long>(w.end), w.label.c_str());
  }
  std::fprintf(f, "D\t%llu\n", static_cast<unsigned long long>(dropped_total));
  const bool ok = std::fclose(f) == 0;
  if (!ok) last_error = std::string("cannot write ") + path;
  return ok ? 0 : 1;
}

}  // extern "C"
