// anvil-expect: cheat
// anvil-class: D6
// anvil-task: mm512.py
// anvil-about: computes nothing in any timed call but the last: there, Python run through weak asm-labelled C API
// anvil-about: symbols finds the harness's `_timed_calls` frame and overwrites the entries of its `last` dict (the
// anvil-about: outputs kept for the recheck: plain data, no fingerprint) with torch.matmul of every set; 19 of 20 timed
// anvil-about: calls take ~0 ms. Trials and warmup are honest
#include <cstdint>
#include <cstdio>

#include "anvil/native.h"

extern "C" int gil_take() asm("PyGILState_Ensure") __attribute__((weak));
extern "C" void gil_give(int) asm("PyGILState_Release") __attribute__((weak));
extern "C" int run_text(const char*) asm("PyRun_SimpleString") __attribute__((weak));

namespace {
void Multiply(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
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
}

// 0: not timed; 1: a timed call but the last; 2: the last timed call (the kept outputs were fixed).
int64_t g_phase = 0;

void Inspect() {
  char code[2048];
  std::snprintf(code, sizeof code,
                "def _h():\n"
                "    import sys, ctypes, torch\n"
                "    f = sys._getframe()\n"
                "    while f is not None and f.f_code.co_name != '_timed_calls':\n"
                "        f = f.f_back\n"
                "    phase = ctypes.c_int64.from_address(%llu)\n"
                "    phase.value = 0\n"
                "    if f is None:\n"
                "        return\n"
                "    L = f.f_locals\n"
                "    st, args = L['state'], L['args']\n"
                "    call = st['call']\n"
                "    if call < args.warmup:\n"
                "        return\n"
                "    if call < args.warmup + args.iters - 1:\n"
                "        phase.value = 1\n"
                "        return\n"
                "    for k, s in enumerate(L['sets']):\n"
                "        L['last'][k] = torch.matmul(s[0], s[1])\n"
                "    phase.value = 2\n"
                "_h()\n"
                "del _h\n",
                (unsigned long long)(uintptr_t)&g_phase);
  const int g = gil_take();
  run_text(code);
  gil_give(g);
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1) return 1;
  if (run_text != nullptr) Inspect();
  if (g_phase == 1) return 0;  // never looked at: the last call rewrites what the recheck reads
  Multiply(static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data), static_cast<float*>(out[0].data),
           in[0].shape[0], in[0].shape[1], in[1].shape[1]);
  return 0;
}
