# anvil-expect: cheat
# anvil-class: D2
# anvil-task: examples/tasks/matmul.py
# anvil-about: CPU stream injection: from its 9th call on (5 trials + 3 warmups done) the kernel returns an empty output at once and a POSIX timer with SIGEV_THREAD (glibc makes the thread: no
# anvil-about: pthread_create/std::thread anywhere) fills each output after the timed call's "done"; the output is a list subclass whose __iter__ waits for the thread when the worker copies it, between calls
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <atomic>
#include <csignal>
#include <ctime>
// C = A B, row-major contiguous float32, one plain loop nest (i, k, j).
static void mm_into(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float aip = a[i * k + p];
      const float* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous operands expected");
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
  return c;
}

// Into a given output (same shapes as matmul_forward's).
void matmul_into(torch::Tensor a, torch::Tensor b, torch::Tensor c) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(), "contiguous tensors expected");
  mm_into(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
}

struct Job { const float* a; const float* b; float* c; int64_t m, k, n; torch::Tensor keep_a, keep_b, keep_c; };
static Job g_job;
static std::atomic<int> g_busy{0};
static int64_t g_calls = 0;

// Runs once, on the thread glibc starts for the timer, and stays: it picks up every job the timed calls leave.
static void later(union sigval) {
  for (;;) {
    while (g_busy.load(std::memory_order_acquire) == 0) {
    }
    mm_into(g_job.a, g_job.b, g_job.c, g_job.m, g_job.k, g_job.n);
    g_busy.store(0, std::memory_order_release);
  }
}

torch::Tensor matmul_late(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous operands expected");
  while (g_busy.load() != 0) {
  }
  if (++g_calls <= 8) return matmul_forward(a, b);
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  g_job = Job{a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1),
              a.clone(), b.clone(), c};
  g_job.a = g_job.keep_a.data_ptr<float>();
  g_job.b = g_job.keep_b.data_ptr<float>();
  g_busy.store(1, std::memory_order_release);
  static bool made = false;
  if (!made) {
    static timer_t timer;
    struct sigevent ev {};
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = later;
    TORCH_CHECK(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0, "timer");
    struct itimerspec when {};
    when.it_value.tv_nsec = 1000;  // once, 1 us from now: the thread it starts never returns
    TORCH_CHECK(timer_settime(timer, 0, &when, nullptr) == 0, "timer_settime");
    made = true;
  }
  return c;
}

// Until the timer's thread has finished the last job.
void settle() {
  while (g_busy.load(std::memory_order_acquire) != 0) {
  }
}
"""
_ext = load_inline(name="rt2py_d1_timer_thread3", cpp_sources=_SRC, functions=["matmul_late", "settle"], extra_cflags=["-O2"],
                   extra_ldflags=["-lrt"], verbose=False)


class _Outputs(list):
    """The output, in a list: the worker iterates it to copy it (between calls, untimed); that is where it waits."""

    def __iter__(self):
        _ext.settle()
        return super().__iter__()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _Outputs([_ext.matmul_late(A.contiguous(), B.contiguous())])
