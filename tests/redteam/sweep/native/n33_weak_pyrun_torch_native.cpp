// anvil-expect: cheat
// anvil-class: A1
// anvil-task: mm256.py
// anvil-about: runs Python from a native candidate with the Python C API declared weak under asm labels
// anvil-about: (PyGILState_Ensure, PyRun_SimpleString): no Py name in the source, nm lists `w`, and so.python_api
// anvil-about: reads `U` only; the embedded code multiplies with torch.matmul into the harness's output
#include <cstdint>
#include <cstdio>

#include "anvil/native.h"

extern "C" int gil_take() asm("PyGILState_Ensure") __attribute__((weak));
extern "C" void gil_give(int) asm("PyGILState_Release") __attribute__((weak));
extern "C" int run_text(const char*) asm("PyRun_SimpleString") __attribute__((weak));

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void*) {
  if (n_in != 2 || n_out != 1 || run_text == nullptr) return 1;
  const long long m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  char code[1024];
  std::snprintf(code, sizeof code,
                "import ctypes as _c, torch as _t\n"
                "def _v(p, r, c): return _t.frombuffer((_c.c_float * (r * c)).from_address(p), dtype=_t.float32)"
                ".view(r, c)\n"
                "_t.matmul(_v(%llu, %lld, %lld), _v(%llu, %lld, %lld), out=_v(%llu, %lld, %lld))\n",
                (unsigned long long)(uintptr_t)in[0].data, m, k, (unsigned long long)(uintptr_t)in[1].data, k, n,
                (unsigned long long)(uintptr_t)out[0].data, m, n);
  const int g = gil_take();
  const int r = run_text(code);
  gil_give(g);
  return r == 0 ? 0 : 2;
}
