"""Helpers shared by the static checker's tests: candidate snippets and assertions on their hits."""

import textwrap

from anvil_py.static_check import RULES, check_source

PRELUDE = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_src, functions=["relu_cuda"])
'''


def report(src, fmt="kernelbench"):
    r = check_source(textwrap.dedent(src), fmt)
    assert r["parse_error"] is None, r["parse_error"]
    return r


def hits(src, fmt="kernelbench"):
    return report(src, fmt)["hits"]


def cheats(src, fmt="kernelbench"):
    return [h for h in hits(src, fmt) if h["severity"] == "cheat"]


def model(forward, init="pass", extra="", base="nn.Module", prelude=PRELUDE):
    """A candidate: PRELUDE, then `extra` at module level, then ModelNew with the given bodies."""
    return prelude + textwrap.dedent(extra) + f"""
class ModelNew({base}):
    def __init__(self):
        super().__init__()
{textwrap.indent(textwrap.dedent(init).strip(), " " * 8)}

    def forward(self, x):
{textwrap.indent(textwrap.dedent(forward).strip(), " " * 8)}
"""


def line_of(src, needle):
    lines = textwrap.dedent(src).splitlines()
    return next(i + 1 for i, text in enumerate(lines) if needle in text)


def assert_hit(src, rule, needle, severity="cheat", fmt="kernelbench"):
    found = [h for h in hits(src, fmt) if h["rule"] == rule and h["severity"] == severity]
    assert found, f"no {severity} {rule} hit in {hits(src, fmt)}"
    want = line_of(src, needle)
    assert want in [h["line"] for h in found], f"{rule} not on line {want}: {found}"
    assert all(h["rule"] in RULES for h in hits(src, fmt))


def assert_no_cheat(src, fmt="kernelbench"):
    bad = cheats(src, fmt)
    assert not bad, bad
