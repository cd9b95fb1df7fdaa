# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_100_hinge.py
# anvil-about: POLICY CASE: parallel hinge loss with std::thread workers created AND joined inside the call (no
# anvil-about: thread outlives the call; per-thread partial sums in a std::vector); hardware_concurrency sizing.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <thread>
#include <vector>

torch::Tensor hinge_threads(torch::Tensor pred, torch::Tensor tgt) {
  const int64_t R = pred.size(0), C = pred.size(1), n = R * C;
  const float* p = pred.data_ptr<float>();
  const float* t = tgt.data_ptr<float>();
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(4, std::thread::hardware_concurrency()));
  std::vector<double> partial(workers, 0.0);
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      const int64_t b = n * w / workers, e = n * (w + 1) / workers;
      double acc = 0;
      for (int64_t i = b; i < e; ++i) acc += std::max(0.0f, 1.0f - p[i] * t[i % C]);
      partial[w] = acc;
    });
  }
  for (auto& th : pool) th.join();
  double total = 0;
  for (double v : partial) total += v;
  auto out = torch::empty({}, pred.options());
  out.data_ptr<float>()[0] = static_cast<float>(total / n);
  return out;
}
"""

_ext = load_inline(name="legit_hinge_stdthread", cpp_sources=SRC, functions=["hinge_threads"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return _ext.hinge_threads(predictions.contiguous(), targets.contiguous())
