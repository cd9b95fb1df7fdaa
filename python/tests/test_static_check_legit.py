"""Legitimate patterns (hack catalog section 2) stay clean under anvil_py.static_check."""

import json
import os
import subprocess
import sys

import pytest

from anvil_py.static_check import check_source
from static_check_helpers import PRELUDE, assert_no_cheat, hits, model

# ------------------------------------------------------------------ legitimate patterns (catalog section 2)
LEGIT = PRELUDE + '''
import os
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

try:
    import triton  # optional
except ImportError:
    triton = None


class ModelNew(nn.Module):
    def __init__(self, in_features=4, out_features=4):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # held for its parameters
        self.scale = nn.Parameter(torch.ones(out_features))
        nn.init.kaiming_uniform_(self.linear.weight)
        self.ext = ext
        self._workspace = {}

    def _buffer(self, x):
        key = (x.shape, x.dtype)
        if key not in self._workspace:
            self._workspace[key] = torch.empty(x.numel(), device=x.device, dtype=x.dtype)
        return self._workspace[key]

    def forward(self, x, transpose: bool = False):
        if x.dim() != 2:
            raise ValueError("expected a matrix")
        if not x.is_contiguous():
            x = x.contiguous()
        B, N = x.shape
        grid = (x.numel() + 255) // 256
        out = torch.empty((B, self.linear.out_features), device=x.device, dtype=x.dtype)
        out2 = torch.empty_like(x)
        tmp = self._buffer(x)
        ptr = x.data_ptr()
        try:
            assert ptr % 16 == 0
        except AssertionError:
            pass
        with torch.no_grad():
            y = self.ext.relu_cuda(x.view(B, N))
        w = self.linear.weight.t().contiguous()
        stream = torch.cuda.current_stream()
        torch.cuda.synchronize()
        if transpose:
            pass
        y = y.reshape(B, -1).permute(1, 0).transpose(0, 1).unsqueeze(0).squeeze(0)
        return y.view(B, N)
'''


def test_legitimate_candidate_has_no_cheat():
    assert_no_cheat(LEGIT)


def test_legitimate_candidate_evidence_is_limited():
    rules = {h["rule"] for h in hits(LEGIT)}
    assert rules <= {"py.file_access"}, hits(LEGIT)


@pytest.mark.parametrize("forward", [
    "return x",
    "return x.view(-1)",
    "return x.reshape(2, -1).contiguous()",
    "out = torch.empty(x.shape, device=x.device)\next.relu_cuda(out)\nreturn out",
    "return ext.relu_cuda(x).unsqueeze(0).expand(2, -1, -1).flatten(0, 1)",
    "return ext.relu_cuda(x)[:, 0]",
    "n = x.size(0)\nh = n // 2\nreturn ext.relu_cuda(x.narrow(0, 0, h))",
    "ys = [ext.relu_cuda(c) for c in x.chunk(2)]\nreturn ys[0]",
    "return ext.relu_cuda(x.float()).to(x.device)",
    "if x is None:\n    pass\nreturn ext.relu_cuda(x)",
])
def test_legitimate_forwards(forward):
    assert_no_cheat(model(forward))


def test_setting_attributes_on_its_own_objects_is_not_a_patch():
    src = PRELUDE + '''
import dataclasses


@dataclasses.dataclass(frozen=True)
class Plan:
    tile: int

    def __post_init__(self):
        object.__setattr__(self, "tile", max(self.tile, 1))


class ModelNew(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        for i in range(layers):
            setattr(self, f"w{i}", nn.Parameter(torch.ones(4)))
        self.plan = Plan(4)
        for name in ("alpha", "beta"):
            setattr(self, name, 1.0)

    def forward(self, x):
        return ext.relu_cuda(x)
'''
    assert_no_cheat(src)


def test_import_guard_is_not_fallback():
    src = '''
import torch
import torch.nn as nn
try:
    from torch.utils.cpp_extension import load_inline
except ImportError:
    load_inline = None
try:
    ext = load_inline(name="e", cpp_sources="", cuda_sources="", functions=["f"])
except Exception as e:
    print(e)
    ext = None

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
'''
    assert not hits(src), hits(src)


def test_extension_built_in_init_and_held_by_weights():
    src = '''
import torch
import torch.nn as nn
from torch.utils import cpp_extension as ce

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.mod = ce.load_inline(name="e", cpp_sources="", functions=["linear"])

    def forward(self, x):
        return self.mod.linear(x, self.fc.weight, self.fc.bias)
'''
    assert not hits(src), hits(src)


def test_main_block_is_ignored():
    src = model("return ext.relu_cuda(x)",
                extra='if __name__ == "__main__":\n    import subprocess\n    subprocess.run(["ls"])\n')
    assert not hits(src), hits(src)


def test_comments_and_docstrings_do_not_fire():
    src = model('"""Uses torch.relu as a reference; run pip install triton first."""\n'
                '# return torch.relu(x)\nreturn ext.relu_cuda(x)')
    assert not hits(src), hits(src)


# ------------------------------------------------------------------ output format and CLI
def test_syntax_error_is_reported_with_line():
    r = check_source("import torch\ndef f(:\n    pass\n")
    assert r["hits"] == [] and r["version"] == 1
    assert r["parse_error"].startswith("SyntaxError") and "line 2" in r["parse_error"]


def test_hit_fields():
    src = model("return torch.relu(x)")
    h = next(h for h in hits(src) if h["rule"] == "py.torch_compute")
    assert set(h) == {"rule", "severity", "line", "col", "excerpt", "message"}
    assert h["excerpt"] == "return torch.relu(x)"
    assert h["col"] == len("        return ") + 1


def run_cli(tmp_path, text, *extra):
    path = tmp_path / "cand.py"
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    return subprocess.run([sys.executable, "-m", "anvil_py.static_check", "--candidate", str(path), *extra],
                          capture_output=True, text=True, env=env, timeout=60)


def test_cli_prints_one_json_object(tmp_path):
    p = run_cli(tmp_path, model("return torch.relu(x)"), "--format", "kernelbench")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["version"] == 1 and out["parse_error"] is None
    assert "py.torch_compute" in {h["rule"] for h in out["hits"]}


def test_cli_reports_parse_error_with_exit_zero(tmp_path):
    p = run_cli(tmp_path, "def (:\n")
    assert p.returncode == 0
    assert json.loads(p.stdout)["parse_error"].startswith("SyntaxError")


def test_checker_does_not_import_torch():
    code = "import sys; import anvil_py.static_check; print('torch' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.stdout.strip() == "False", p.stderr


# ------------------------------------------------------------------ near the harness, hook, op and raw-memory rules
def test_custom_op_hook_and_decorator_that_only_call_the_kernel():
    src = PRELUDE + '''
import functools


@torch.library.custom_op("mine::relu", mutates_args=())
def my_relu(x: torch.Tensor) -> torch.Tensor:
    return ext.relu_cuda(x.contiguous())


@my_relu.register_fake
def _(x):
    return torch.empty_like(x)


def _pre(module, inputs):
    return (inputs[0].contiguous(),)


def checked(fn):
    @functools.wraps(fn)
    def inner(self, x):
        if x.dim() == 0:
            raise ValueError("expected a tensor with dimensions")
        return fn(self, x)
    return inner


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_pre_hook(_pre)

    def __call__(self, x):
        return super().__call__(x.contiguous())

    @checked
    @torch.no_grad()
    def forward(self, x):
        return torch.ops.mine.relu(x)
'''
    assert_no_cheat(src)


def test_ctypes_kernel_and_storage_metadata_are_not_host_compute():
    src = PRELUDE + '''
import ctypes

lib = ctypes.CDLL("./librelu.so")
_NAME = "re" + "lu"


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        assert x.untyped_storage().data_ptr() != out.untyped_storage().data_ptr()
        n = x.untyped_storage().nbytes() // x.element_size()
        fp = ctypes.POINTER(ctypes.c_float)
        lib.relu(ctypes.cast(x.data_ptr(), fp), ctypes.c_void_p(out.data_ptr()), n)
        getattr(lib, _NAME)(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(out.data_ptr()), n)
        msg = f"shape {tuple(x.shape)} dtype {x.dtype} {str(x.shape)}"
        return out
'''
    assert_no_cheat(src)


def test_profiler_annotations_and_ordinary_strings_are_not_probes():
    src = model("with torch.profiler.record_function('relu'):\n"
                "    with torch.autograd.profiler.record_function('relu2'):\n"
                "        y = ext.relu_cuda(x)\n"
                "name = getattr(self, 'mode_' + 'fast', None)\n"
                "return y",
                extra='from torch.autograd.profiler import record_function\n'
                      'MODES = ("function", "dispatch", "stack", "key")\n'
                      'LONG = """' + "// c10::DispatchKey::CUDA in a kernel source\\n" * 8 + '"""\n')
    assert_no_cheat(src)


def test_getattr_with_computed_names_on_own_objects():
    src = model("for i in range(2):\n    w = getattr(self, 'w' + str(i))\nreturn ext.relu_cuda(x)",
                init="self.w0 = nn.Parameter(torch.ones(4))\nself.w1 = nn.Parameter(torch.ones(4))",
                extra="import os\nimport sys\nhome = getattr(os, 'environ').get('HOME')\n"
                      "ver = getattr(sys, 'version_info')\nKlass = type('Klass', (object,), {'scale': 2})\n")
    assert_no_cheat(src)


def test_a_lock_around_the_build_and_unused_imports_start_nothing():
    # An unused import, a lock around a lazy build and the core count start no thread or process: evidence at
    # most (the calls that do start one stay cheats: test_static_check.py).
    src = """
import multiprocessing
import signal  # noqa: F401
import subprocess  # noqa: F401
import threading
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_lock = threading.Lock()
_ext = None
torch.set_num_threads(max(1, multiprocessing.cpu_count()))


def _build():
    global _ext
    with _lock:
        if _ext is None:
            _ext = load_inline(name="r", cpp_sources="", functions=["relu_forward"])
    return _ext


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = _build()

    def forward(self, x):
        return self.ext.relu_forward(x)
"""
    assert_no_cheat(src)


def test_words_of_the_candidates_own_that_contain_a_harness_word_are_not_probes():
    # Legit sweep 2: an extension named "selu_dispatch_mode", a config string; the harness's names are whole names.
    src = model("return ext.relu_cuda(x)", extra="MODE = 'dispatch_mode=fast'\nNAME = 'selu_dispatch_mode_ext'\n",
                init="self.note = 'uses the function_mode of its own'")
    assert_no_cheat(src)
