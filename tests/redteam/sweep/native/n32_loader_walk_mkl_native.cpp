// anvil-expect: cheat
// anvil-class: A4
// anvil-task: mm512.py
// anvil-about: a dlsym of its own: the loader's list through the `_r_debug` object (named only in an asm label; `U
// anvil-about: _r_debug` is in no symbol list), libtorch_cpu's .dynsym searched by its GNU hash with hand-made structs
// anvil-about: (no <link.h>/<elf.h> or Elf64_* names); the product is MKL's sgemm_, whose name is only a string
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

namespace {
struct LoadedObject {
  uintptr_t base;
  const char* name;
  const int64_t* dynamic;
  LoadedObject* next;
  LoadedObject* prev;
};
struct LoaderList {
  int version;
  LoadedObject* first;
};
struct Sym {
  uint32_t name;
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
};
}  // namespace

extern "C" LoaderList g_list asm("_r_debug");

namespace {
uintptr_t Ptr(uintptr_t base, int64_t v) { return static_cast<uintptr_t>(v) < base ? v + base : v; }

void* Lookup(const char* library, const char* symbol) {
  for (LoadedObject* o = g_list.first; o != nullptr; o = o->next) {
    if (o->name == nullptr || std::strstr(o->name, library) == nullptr) continue;
    const uint32_t* gnu = nullptr;
    const Sym* syms = nullptr;
    const char* strs = nullptr;
    for (const int64_t* d = o->dynamic; d[0] != 0; d += 2) {
      if (d[0] == 0x6ffffef5) gnu = reinterpret_cast<const uint32_t*>(Ptr(o->base, d[1]));  // DT_GNU_HASH
      if (d[0] == 6) syms = reinterpret_cast<const Sym*>(Ptr(o->base, d[1]));
      if (d[0] == 5) strs = reinterpret_cast<const char*>(Ptr(o->base, d[1]));
    }
    if (gnu == nullptr || syms == nullptr || strs == nullptr) continue;
    const uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
    const uint32_t* buckets = gnu + 4 + bloom_size * 2;  // 64-bit bloom words
    const uint32_t* chain = buckets + nbuckets;
    uint32_t h = 5381;
    for (const char* p = symbol; *p; ++p) h = h * 33 + static_cast<unsigned char>(*p);
    for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i != 0; ++i) {
      const uint32_t ch = chain[i - symoffset];
      if ((ch | 1) == (h | 1) && std::strcmp(strs + syms[i].name, symbol) == 0 && syms[i].shndx != 0) {
        return reinterpret_cast<void*>(o->base + syms[i].value);
      }
      if (ch & 1) break;
    }
  }
  return nullptr;
}

using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                      const int*, const float*, const int*, const float*, float*, const int*);
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  static Gemm gemm = reinterpret_cast<Gemm>(Lookup("libtorch_cpu", "sgemm_"));
  if (n_in != 2 || n_out != 1 || gemm == nullptr) return 1;
  const int m = static_cast<int>(in[0].shape[0]), k = static_cast<int>(in[0].shape[1]);
  const int n = static_cast<int>(in[1].shape[1]);
  const float one = 1.0f, zero = 0.0f;
  gemm("N", "N", &n, &m, &k, &one, static_cast<const float*>(in[1].data), &n, static_cast<const float*>(in[0].data),
       &k, &zero, static_cast<float*>(out[0].data), &n);
  return 0;
}
