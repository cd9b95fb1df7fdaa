// anvil-expect: cheat
// anvil-class: D4
// anvil-task: mm512.py
// anvil-about: forges the CPU timer for a kernel of any length by a third: the loader's list from getauxval(AT_PHDR) ->
// anvil-about: the executable's DT_DEBUG (no loader name anywhere), then libanvil_timer.so's writable GOT slot for
// anvil-about: clock_gettime rewritten to a clock at 2/3 speed during the call: untimed = half the timed time, which
// anvil-about: perf.hidden_time (untimed > 5 ms AND > half the timed) lets through: a 1.5x fake speedup at any size
#include <cstdint>
#include <cstring>
#include <ctime>

#include "anvil/native.h"

namespace {
struct LoadedObject {  // the loader's public part of a loaded object
  uintptr_t base;
  const char* name;
  const int64_t* dynamic;  // pairs (tag, value)
  LoadedObject* next;
  LoadedObject* prev;
};
struct LoaderList {
  int version;
  LoadedObject* first;
};
struct Rela {
  uint64_t offset, info;
  int64_t addend;
};
struct Sym {
  uint32_t name;
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
};
}  // namespace

extern "C" unsigned long getauxval(unsigned long);

namespace {
volatile int64_t g_hidden_ns = 0;  // how far the forged clock lags the real one

int64_t RealNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

extern "C" int ForgedClock(clockid_t id, timespec* ts) {
  const int r = clock_gettime(id, ts);
  if (r == 0 && id == CLOCK_MONOTONIC) {
    const int64_t ns = ts->tv_sec * 1000000000LL + ts->tv_nsec - g_hidden_ns;
    ts->tv_sec = ns / 1000000000LL;
    ts->tv_nsec = ns % 1000000000LL;
  }
  return r;
}

uintptr_t Ptr(uintptr_t base, int64_t value) {
  const uintptr_t v = static_cast<uintptr_t>(value);
  return v < base ? v + base : v;
}

struct ProgramHeader {
  uint32_t type, flags;
  uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

LoaderList* FindLoaderList() {
  const auto* ph = reinterpret_cast<const ProgramHeader*>(getauxval(3 /*AT_PHDR*/));
  const unsigned long count = getauxval(5 /*AT_PHNUM*/);
  uintptr_t base = 0;
  const int64_t* dynamic = nullptr;
  for (unsigned long i = 0; i < count; ++i) {
    if (ph[i].type == 6 /*PT_PHDR*/) base = reinterpret_cast<uintptr_t>(ph) - ph[i].vaddr;
  }
  for (unsigned long i = 0; i < count; ++i) {
    if (ph[i].type == 2 /*PT_DYNAMIC*/) dynamic = reinterpret_cast<const int64_t*>(base + ph[i].vaddr);
  }
  for (const int64_t* d = dynamic; d != nullptr && d[0] != 0; d += 2) {
    if (d[0] == 21 /*DT_DEBUG*/) return reinterpret_cast<LoaderList*>(d[1]);
  }
  return nullptr;
}

bool PatchTimer() {
  LoaderList* list = FindLoaderList();
  if (list == nullptr) return false;
  for (LoadedObject* o = list->first; o != nullptr; o = o->next) {
    if (o->name == nullptr || std::strstr(o->name, "libanvil_timer") == nullptr) continue;
    uintptr_t jmprel = 0, symtab = 0, strtab = 0;
    int64_t pltrelsz = 0;
    for (const int64_t* d = o->dynamic; d[0] != 0; d += 2) {
      if (d[0] == 23) jmprel = Ptr(o->base, d[1]);
      if (d[0] == 2) pltrelsz = d[1];
      if (d[0] == 6) symtab = Ptr(o->base, d[1]);
      if (d[0] == 5) strtab = Ptr(o->base, d[1]);
    }
    const Rela* r = reinterpret_cast<const Rela*>(jmprel);
    for (int64_t i = 0; i < pltrelsz / static_cast<int64_t>(sizeof(Rela)); ++i) {
      const Sym& s = reinterpret_cast<const Sym*>(symtab)[r[i].info >> 32];
      if (std::strcmp(reinterpret_cast<const char*>(strtab) + s.name, "clock_gettime") != 0) continue;
      *reinterpret_cast<void**>(o->base + r[i].offset) = reinterpret_cast<void*>(&ForgedClock);
      return true;
    }
  }
  return false;
}
bool g_patched = false;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (!g_patched) g_patched = PatchTimer();
  const int64_t t0 = RealNs();
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float s = a[i * k + p];
      const float* br = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += s * br[j];
    }
  }
  // The timer's clock runs at 2/3 speed during the work: anvil's wall clock sees half the reported time more, which
  // perf.hidden_time lets through (it wants the untimed part above 5 ms *and* above half the timed part).
  g_hidden_ns += (RealNs() - t0) * 34 / 100;
  return 0;
}
