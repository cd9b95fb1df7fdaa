"""KernelBench's static checker as policy kernelbench applies it: each strict check fires on its pattern, the backend
check asks for a kernel of the backend's kind, and comments do not count."""

import pathlib

import pytest

from anvil_py.static_check import kernelbench_checks

ROOT = pathlib.Path(__file__).resolve().parents[2]
CPU_PASS = (ROOT / "examples" / "candidates" / "relu" / "pass_kb.py").read_text()

CUDA_KERNEL = '''
import torch
from torch.utils.cpp_extension import load_inline
src = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
"""
ext = load_inline(name="r", cpp_sources="", cuda_sources=src, functions=["relu"])
class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


def rules(text, backend="cpu"):
    return [h["rule"] for h in kernelbench_checks.check(text, backend)]


def test_honest_candidates_pass_on_their_backend():
    assert rules(CPU_PASS, "cpu") == []
    assert rules(CUDA_KERNEL, "cuda") == []


def test_the_backend_check_asks_for_a_kernel_of_the_backends_kind():
    hits = kernelbench_checks.check(CPU_PASS, "cuda")
    assert [h["rule"] for h in hits] == ["kb.backend"]
    assert "__global__" in hits[0]["message"] and hits[0]["severity"] == "cheat"
    no_build = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    assert rules(no_build, "cpu") == ["kb.backend"]
    idle = CUDA_KERNEL.replace("blockIdx.x * blockDim.x + threadIdx.x", "0")
    assert "thread index" in kernelbench_checks.check(idle, "cuda")[0]["message"]


@pytest.mark.parametrize("line, rule", [
    ("pass", "kb.code_bypass"),
    ("try:\n        y = ext.relu(x)\n    finally:\n        y = x", "kb.code_bypass"),
    ("import threading", "kb.thread"),
    ("from concurrent.futures import ThreadPoolExecutor", "kb.thread"),
    ("torch.cuda.synchronize = lambda: None", "kb.timing_patch"),
    ("time.perf_counter = lambda: 0.0", "kb.timing_patch"),
    ("y = torch.Tensor._make_subclass(torch.Tensor, x)", "kb.lazy_tensor"),
])
def test_each_strict_check_fires_on_its_pattern_with_its_line(line, rule):
    text = CPU_PASS.replace("    def forward(self, x", "    def helper(self, x):\n    " + line.replace("\n", "\n    ") +
                            "\n\n    def forward(self, x", 1)
    hits = [h for h in kernelbench_checks.check(text, "cpu") if h["rule"] == rule]
    assert hits, rule
    first_word = line.split()[0].split(".")[0]
    assert first_word in text.splitlines()[hits[0]["line"] - 1]


def test_a_tensor_subclass_and_words_that_only_look_alike():
    assert rules(CPU_PASS + "\nclass Lazy(torch.Tensor):\n    x = 1\n") == ["kb.lazy_tensor"]
    # Words containing "pass", and a comment, are not statements: KernelBench cuts lines at '#'.
    assert rules(CPU_PASS + "\n# pass, try: and import threading are only mentioned here\nbypassed = 'passed'\n") == []
