"""Tests of anvil_py.static_check: every rule fires on its hack, aliases resolve, legitimate code stays clean."""

import textwrap

import pytest

from static_check_helpers import PRELUDE, assert_hit, assert_no_cheat, hits, model

# ------------------------------------------------------------------ py.torch_compute and aliases
@pytest.mark.parametrize("forward, needle", [
    ("return torch.relu(x)", "torch.relu"),
    ("return torch.nn.functional.gelu(x)", "gelu"),
    ("return x.relu()", "x.relu()"),
    ("y = x.contiguous()\nreturn y.softmax(dim=-1)", "softmax"),
    ("return x @ x.t()", "@"),
    ("return torch.ops.aten.relu.default(x)", "aten"),
    ("return torch.Tensor.relu(x)", "Tensor.relu"),
    ("f = torch.sigmoid\nreturn f(x)", "f(x)"),
    ("return torch.cat([x, x])", "torch.cat"),
    ("return x.sum(dim=0)", "sum"),
    ("return torch.nn.ReLU()(x)", "ReLU"),
    ("y = getattr(torch, 'relu')(x)\nreturn y", "getattr"),
    ("return __import__('torch').tanh(x)", "__import__"),
    ("import sys\nreturn sys.modules['torch'].erf(x)", "sys.modules"),
    ("return vars(torch)['relu'](x)", "vars"),
    ("return list(map(torch.relu, [x]))[0]", "map"),
    ("import functools, operator\nreturn functools.reduce(operator.matmul, [x, x])", "reduce"),
    ("return x.to(torch.float32).exp()", "exp"),
])
def test_torch_compute_in_forward(forward, needle):
    src = model(forward)
    assert_hit(src, "py.torch_compute", needle)


@pytest.mark.parametrize("imports, call", [
    ("import torch as t", "t.relu(x)"),
    ("from torch import relu as r", "r(x)"),
    ("from torch.nn import functional as Fn", "Fn.silu(x)"),
    ("import torch.nn.functional as F", "F.linear(x, x)"),
    ("R = torch.relu", "R(x)"),
    ("R = getattr(torch, 'relu')", "R(x)"),
    ("import operator", "operator.matmul(x, x)"),
    ("from operator import matmul as mm", "mm(x, x)"),
    ("import functools\nR = functools.partial(torch.relu)", "R(x)"),
    ("from torch import *", "sigmoid(x)"),
    ("import torch.special as S", "S.erf(x)"),
    ("import torch.linalg", "torch.linalg.matrix_norm(x)"),
])
def test_aliases_resolve(imports, call):
    src = model(f"return {call}", extra=imports + "\n")
    assert_hit(src, "py.torch_compute", call)


def test_static_method_alias_in_class_body():
    src = model("return self.act(x)") + "\n    act = staticmethod(torch.relu)\n"
    assert_hit(src, "py.torch_compute", "self.act(x)")


def test_layer_module_called_in_forward():
    src = model("return self.linear(x)", init="self.linear = nn.Linear(4, 4)")
    assert_hit(src, "py.torch_compute", "self.linear(x)")


def test_sequential_and_module_list_are_followed():
    src = model("for layer in self.layers:\n    x = layer(x)\nreturn self.head(x)",
                init="self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n"
                     "self.head = nn.Sequential(nn.Linear(4, 4), nn.ReLU())")
    assert_hit(src, "py.torch_compute", "layer(x)")
    assert_hit(src, "py.torch_compute", "self.head(x)")


def test_layers_collected_in_a_local_list():
    init = """
    layers = []
    layers.append(nn.Linear(4, 4))
    layers.append(nn.ReLU())
    self.net = nn.Sequential(*layers)
    """
    assert_hit(model("return self.net(x)", init=init), "py.torch_compute", "self.net(x)")


def test_transitive_helpers_and_methods():
    extra = """
    def helper(t):
        return torch.tanh(t)

    def outer(t):
        return helper(t)
    """
    src = model("y = outer(x)\nreturn self._post(y)", extra=extra) + \
        "\n    def _post(self, y):\n        return torch.sigmoid(y)\n"
    assert_hit(src, "py.torch_compute", "torch.tanh")
    assert_hit(src, "py.torch_compute", "torch.sigmoid")
    msg = next(h["message"] for h in hits(src) if "tanh" in h["excerpt"])
    assert "helper" in msg and "ModelNew.forward" in msg


def test_local_submodule_forward_is_followed():
    extra = """
    class Block(nn.Module):
        def forward(self, t):
            return torch.relu(t)
    """
    src = model("return self.block(x)", init="self.block = Block()", extra=extra)
    assert_hit(src, "py.torch_compute", "torch.relu(t)")


def test_autograd_function_apply_is_followed():
    extra = """
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return torch.exp(t)
    """
    assert_hit(model("return Fn.apply(x)", extra=extra), "py.torch_compute", "torch.exp")


def test_torch_compile_is_compute():
    src = model("return self.fn(x)", init="self.fn = torch.compile(lambda t: t * 2)")
    assert_hit(src, "py.torch_compute", "self.fn(x)")


def test_compute_outside_forward_is_not_a_hit():
    # Weight preprocessing in __init__ and the reference's helpers are legitimate.
    init = "self.w = nn.Parameter(torch.randn(4, 4))\nself.register_buffer('wt', torch.tanh(self.w.detach()))"
    extra = "def get_inputs():\n    return [torch.relu(torch.randn(4))]\n"
    src = model("return ext.relu_cuda(x)", init=init, extra=extra)
    assert not [h for h in hits(src) if h["rule"] == "py.torch_compute"]


def test_tensor_arith_is_evidence_only():
    src = model("y = ext.relu_cuda(x)\nreturn y * 2 + x")
    found = [h for h in hits(src) if h["rule"] == "py.tensor_arith"]
    assert found and all(h["severity"] == "evidence" for h in found)
    assert_no_cheat(src)


# ------------------------------------------------------------------ py.reference_model
def test_subclassing_the_reference():
    src = "import torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n" \
          "class Model(nn.Module):\n    pass\n\nclass ModelNew(Model):\n    pass\n"
    assert_hit(src, "py.reference_model", "class ModelNew(Model)")


def test_super_forward_of_the_reference():
    src = model("return super().forward(x)", base="Model")
    assert_hit(src, "py.reference_model", "super().forward")


def test_calling_the_reference():
    src = model("return self.ref(x)", init="self.ref = Model()")
    assert_hit(src, "py.reference_model", "Model()")
    assert_hit(src, "py.reference_model", "self.ref(x)")


def test_model_new_is_model():
    assert_hit(PRELUDE + "from ref import Model\nModelNew = Model\n", "py.reference_model", "ModelNew = Model")


# ------------------------------------------------------------------ py.fallback
def test_try_except_fallback():
    src = model("""
    try:
        return ext.relu_cuda(x)
    except Exception:
        return torch.relu(x)
    """)
    assert_hit(src, "py.fallback", "except Exception")


def test_fallback_through_a_method():
    src = model("""
    try:
        out = self.ext.relu_cuda(x)
    except RuntimeError:
        out = self._torch_path(x)
    return out
    """, init="self.ext = ext") + "\n    def _torch_path(self, t):\n        return t.clamp(min=0)\n"
    assert_hit(src, "py.fallback", "except RuntimeError")


@pytest.mark.parametrize("handler", ["raise", "pass", "print('kernel failed')\nraise"])
def test_try_without_torch_in_handler_is_not_fallback(handler):
    body = f"try:\n    return ext.relu_cuda(x)\nexcept Exception:\n{textwrap.indent(handler, '    ')}"
    src = model(body)
    assert "py.fallback" not in {h["rule"] for h in hits(src)}
    assert_no_cheat(src)


# ------------------------------------------------------------------ process, thread and sandbox rules
@pytest.mark.parametrize("code, rule, needle", [
    ("import threading\nthreading.Thread(target=print).start()", "py.thread", "threading.Thread"),
    ("from concurrent.futures import ThreadPoolExecutor", "py.thread", "concurrent"),
    ("import os\npid = os.fork()", "py.thread", "os.fork"),
    ("import asyncio", "py.thread", "asyncio"),
    ("import torch.cuda\ntorch.cuda.Event.elapsed_time = lambda a, b: 0.001", "py.monkeypatch", "elapsed_time"),
    ("import time\ntime.perf_counter = lambda: 0.0", "py.monkeypatch", "perf_counter"),
    ("import time as tm\ntm.perf_counter = lambda: 0.0", "py.monkeypatch", "tm.perf_counter"),
    ("from torch.cuda import Event as E\nE.elapsed_time = None", "py.monkeypatch", "E.elapsed_time"),
    ("torch.allclose = lambda *a, **k: True", "py.monkeypatch", "torch.allclose"),
    ("setattr(torch, 'allclose', lambda *a, **k: True)", "py.monkeypatch", "setattr"),
    ("import time\nobject.__setattr__(time, 'time', None)", "py.monkeypatch", "__setattr__"),
    ("def f():\n    pass\nf.__code__ = (lambda: 1).__code__", "py.monkeypatch", "__code__ ="),
    ("import sys\nsys.modules['torch'] = None", "py.monkeypatch", "sys.modules"),
    ("import builtins\nbuiltins.print = None", "py.monkeypatch", "builtins.print"),
    ("import anvil_py.timing\nanvil_py.timing.Timer = None", "py.monkeypatch", "Timer"),
    ("ext.relu_cuda = torch.relu", "py.monkeypatch", "ext.relu_cuda ="),
    ("def f():\n    pass\nf.__globals__['torch'] = None", "py.monkeypatch", "__globals__"),
    # Aliased timer patches (RK #162) that earlier versions missed; the worker's run-time fingerprints catch
    # them too (run.tamper).
    ("E = torch.cuda.Event\nfor c in [E]:\n    c.elapsed_time = None", "py.monkeypatch", "c.elapsed_time"),
    ("for c in [torch.cuda.Event, 0][:1]:\n    c.elapsed_time = None", "py.monkeypatch", "c.elapsed_time"),
    ("for k, v in list(vars(torch.cuda).items()):\n    type.__setattr__(v, 'elapsed' + '_time', None)",
     "py.monkeypatch", "type.__setattr__"),
    ("n = 'elapsed_time'\n[setattr(c, n, None) for c in torch.cuda.Event.__mro__[:1]]", "py.monkeypatch", "setattr"),
    ("list(map(lambda kv: setattr(*kv), [(torch.cuda.Event, 'elapsed_time', None)]))", "py.monkeypatch",
     "setattr(*kv)"),
    ("list(map(setattr, [torch.cuda.Event], ['elapsed_time'], [None]))", "py.monkeypatch", "setattr"),
    ("import time\nvars(time)['perf_counter'] = None", "py.monkeypatch", "vars(time)"),
    ("import time\nd = vars(time)\nd.update(perf_counter=None)", "py.monkeypatch", "d.update"),
    ("exec('x = 1')", "py.dynamic_code", "exec"),
    ("y = eval('1 + 1')", "py.dynamic_code", "eval"),
    ("c = compile('1', 'f', 'eval')", "py.dynamic_code", "compile"),
    ("name = 'os'\nm = __import__(name)", "py.dynamic_code", "__import__"),
    ("import importlib\nname = 'os'\nm = importlib.import_module(name)", "py.dynamic_code", "import_module"),
    ("import base64\nexec(base64.b64decode('eD0x'))", "py.dynamic_code", "exec"),
    ("import pickle\nobj = pickle.loads(b'')", "py.dynamic_code", "pickle.loads"),
    ("f = open('/tmp/x', 'w')", "py.file_access", "open("),
    ("import os\nos.remove('/tmp/x')", "py.file_access", "os.remove"),
    ("import pathlib\npathlib.Path('/tmp/x').write_text('hi')", "py.file_access", "write_text"),
    ("from pathlib import Path\np = Path('/tmp') / 'x'\np.read_text()", "py.file_access", "read_text"),
    ("import shutil\nshutil.rmtree('/tmp/x')", "py.file_access", "rmtree"),
    ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'", "py.file_access", "environ"),
    ("import os\nos.environ.update({'A': '1'})", "py.file_access", "environ.update"),
    ("path = '/proc/self/mem'", "py.file_access", "/proc/self/mem"),
    ("import socket", "py.network", "import socket"),
    ("import urllib.request\nurllib.request.urlopen('http://x')", "py.network", "urlopen"),
    ("import os\nos.system('ls')", "py.process", "os.system"),
    ("import subprocess\nsubprocess.run(['ls'])", "py.process", "subprocess.run"),
    ("import os\nos.kill(1, 9)", "py.process", "os.kill"),
    ("import os\nos._exit(0)", "py.process", "os._exit"),
    ("import subprocess, sys\nsubprocess.check_call([sys.executable, '-m', 'pip', 'install', 'x'])",
     "py.pip_install", "pip"),
    ("import os\nos.system('pip install triton')", "py.pip_install", "pip install"),
    ("import sys\nsys.path.insert(0, '/tmp')", "py.shadow_import", "sys.path.insert"),
    ("import sys\nsys.path = ['/tmp']", "py.shadow_import", "sys.path ="),
    ("open('torch.py', 'w').write('')", "py.shadow_import", "torch.py"),
    ("open('helper.py', 'w').write('')\nimport helper", "py.shadow_import", "import helper"),
    ("import gc\nobjs = gc.get_objects()", "py.gc_frame", "get_objects"),
    ("import sys\nf = sys._getframe(1)", "py.gc_frame", "_getframe"),
    ("import inspect\nf = inspect.currentframe().f_back", "py.gc_frame", "currentframe"),
    ("class Lazy(torch.Tensor):\n    pass", "py.lazy_tensor", "class Lazy"),
    ("t = torch.Tensor._make_subclass(torch.Tensor, torch.empty(1))", "py.lazy_tensor", "_make_subclass"),
    ("class M:\n    def __torch_function__(self, *a):\n        pass", "py.lazy_tensor", "__torch_function__"),
    ("t = torch.empty(1)\nt.__class__ = object", "py.lazy_tensor", "__class__"),
])
def test_module_level_rules(code, rule, needle):
    src = model("return ext.relu_cuda(x)", extra=code + "\n")
    assert_hit(src, rule, needle)


def test_rules_inside_forward_use_local_aliases():
    src = model("import threading as th\nth.Thread(target=print).start()\nreturn ext.relu_cuda(x)")
    assert_hit(src, "py.thread", "th.Thread")


@pytest.mark.parametrize("code, rule, needle", [
    ("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'", "py.file_access", "TORCH_CUDA_ARCH_LIST"),
    ("import os\nv = os.environ.get('TORCH_SHOW_CPP_STACKTRACES')", "py.file_access", "environ.get"),
    ("import base64\nblob = base64.b64decode('AAAA')", "py.dynamic_code", "b64decode"),
    ("s = torch.cuda.Stream()", "py.stream", "Stream()"),
    ("torch.backends.cuda.matmul.allow_tf32 = True", "py.dtype_cast", "allow_tf32"),
    ("torch.backends.cudnn.benchmark = True", "py.torch_config", "benchmark"),
    ("import ctypes", "py.ctypes", "ctypes"),
])
def test_evidence_rules(code, rule, needle):
    src = model("return ext.relu_cuda(x)", extra=code + "\n")
    assert_hit(src, rule, needle, severity="evidence")
    assert_no_cheat(src)


@pytest.mark.parametrize("forward, needle", [
    ("return ext.relu_cuda(x.half())", "half"),
    ("return ext.relu_cuda(x.to(torch.bfloat16))", "bfloat16"),
    ("with torch.autocast('cuda'):\n    return ext.relu_cuda(x)", "autocast"),
])
def test_dtype_cast_is_evidence(forward, needle):
    src = model(forward)
    assert_hit(src, "py.dtype_cast", needle, severity="evidence")
    assert_no_cheat(src)


def test_stream_in_forward_is_evidence():
    src = model("s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = ext.relu_cuda(x)\nreturn y")
    assert_hit(src, "py.stream", "Stream()", severity="evidence")
    assert_no_cheat(src)


# ------------------------------------------------------------------ the extension itself
def test_no_extension_in_kernelbench_format():
    src = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"
    assert_hit(src, "py.no_extension", "class ModelNew")
    assert [h["message"] for h in hits(src) if h["rule"] == "py.no_extension"][0].startswith(
        "no custom kernel is built")
    assert not hits(src, fmt="native")


def test_unused_extension_is_evidence():
    src = model("return torch.empty_like(x)")
    assert_hit(src, "py.unused_extension", "class ModelNew", severity="evidence")


@pytest.mark.parametrize("extra, forward", [
    ("", "return ext.relu_cuda(x)"),
    ("", "return self.ext.relu_cuda(x)"),
    ("op = ext.relu_cuda\n", "return op(x)"),
    ("", "return torch.ops.relu_ext.relu(x)"),
    ("def _get():\n    global _ext\n    _ext = load_inline(name='a', cpp_sources='')\n    return _ext\n",
     "return _get().relu_cuda(x)"),
])
def test_extension_calls_are_recognised(extra, forward):
    src = model(forward, init="self.ext = ext", extra=extra)
    rules = {h["rule"] for h in hits(src)}
    assert "py.unused_extension" not in rules and "py.no_extension" not in rules
    assert_no_cheat(src)


def test_extension_held_in_a_dict():
    extra = """
    _mods = {}
    def build(name):
        _mods[name] = load_inline(name=name, cpp_sources="", functions=["matmul"])
    """
    init = "self.cache = {}\nself.cache['f32'] = load_inline(name='m', cpp_sources='', functions=['matmul'])"
    forward = ("y = self.cache['f32'].matmul(x, x)\nz = self.cache.get('f32').matmul(y, x)\n"
               "return _mods['a'].matmul(z, x)")
    src = model(forward, init=init, extra=extra)
    assert not hits(src), hits(src)


def test_methods_on_non_tensors_are_not_compute():
    extra = "import logging\nimport numpy as np\nlogger = logging.getLogger(__name__)\n"
    forward = """
    logger.log(10, "forward")
    seen = set()
    seen.add(1)
    names = ["b", "a"]
    names.sort()
    total = np.ones(3).sum() + np.arange(4).max()
    label = " ".join(names).split()
    return ext.relu_cuda(x)
    """
    src = model(forward, extra=extra)
    assert not hits(src), hits(src)


def test_triton_kernel_counts_as_extension():
    src = textwrap.dedent('''
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl

        @triton.jit
        def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0), mask=offs < n)

        class ModelNew(nn.Module):
            def forward(self, x):
                y = torch.empty_like(x)
                n = x.numel()
                relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
                return y
    ''')
    assert not hits(src), hits(src)


# ------------------------------------------------------------------ py.harness_probe (red team p03-p75)
@pytest.mark.parametrize("code, needle", [
    ("import torch.utils._python_dispatch as _pd", "as _pd"),
    ("from torch.utils._python_dispatch import _disable_current_modes", "_disable_current_modes"),
    ("from torch.overrides import TorchFunctionMode", "TorchFunctionMode"),
    ("n = torch._C._len_torch_dispatch_stack()", "_len_torch_dispatch_stack"),
    ("on = torch._C._is_torch_function_mode_enabled()", "_is_torch_function_mode_enabled"),
    ("g = torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python))", "Guard"),
    ("g = torch._C.DisableTorchFunction()", "DisableTorchFunction"),
    ("g = torch._C._DisableTorchDispatch()", "_DisableTorchDispatch"),
    ("torch._C._dispatch_tls_set_dispatch_key_excluded(None, True)", "_dispatch_tls"),
    ("m = next(iter([torch]))\nm._pop_mode = None", "m._pop_mode"),
    ("on = torch.autograd._profiler_enabled()", "_profiler_enabled"),
    ("import torch.autograd.profiler as P\np = P.profile()", "P.profile"),
    ("from torch._C import *\nn = _len_torch_function_stack()", "n = _len"),
    ("f = getattr(torch._C, '_len_torch_' + 'dispatch_stack')", "getattr"),
    ("name = 'torch.utils._python_dispatch'", "_python_dispatch"),
    # Red-team sweep 2: telling watched calls apart, switching the op observer off, reaching anvil's worker.
    ("watched = torch._C._has_torch_function_unary(torch.ones(1))", "_has_torch_function_unary"),
    ("torch._C._autograd._enable_record_function(False)", "_enable_record_function"),
    ("import sys\nprepared = sys.argv[sys.argv.index('--prepared') + 1]", "prepared ="),
    ("import anvil_py.tensor_io as tio", "anvil_py"),
    ("mod = 'anvil' + '_py.tamper_guard'", "mod ="),
    ("lib = __import__('os').environ.get('ANVIL_TIMER_LIB')", "ANVIL_TIMER_LIB"),
])
def test_harness_probe(code, needle):
    src = model("return ext.relu_cuda(x)", extra=code + "\n")
    assert_hit(src, "py.harness_probe", needle)


@pytest.mark.parametrize("code, needle", [
    ("import traceback\nwatched = 'ops.forward' in str(traceback.extract_stack())", "extract_stack"),
    ("import linecache\nline = linecache.getline('x.py', 1)", "getline"),
])
def test_frame_and_source_walks_are_gc_frame(code, needle):
    assert_hit(model("return ext.relu_cuda(x)", extra=code + "\n"), "py.gc_frame", needle)


def test_harness_probe_in_forward_names_the_machinery():
    src = model("if torch._C._len_torch_dispatch_stack() > 0:\n    return ext.relu_cuda(x)\nreturn x")
    assert_hit(src, "py.harness_probe", "_len_torch_dispatch_stack")
    msg = next(h["message"] for h in hits(src) if h["rule"] == "py.harness_probe")
    assert "dispatch" in msg and "traces" in msg


# ------------------------------------------------------------------ code that runs in place of or around forward
def test_dunder_call_is_reached():
    src = model("return ext.relu_cuda(x)") + "\n    def __call__(self, x):\n        return torch.relu(x)\n"
    assert_hit(src, "py.torch_compute", "torch.relu")
    assert "__call__" in next(h["message"] for h in hits(src) if h["rule"] == "py.torch_compute")


@pytest.mark.parametrize("extra, init", [
    ("def _hook(m, inp, out):\n    return torch.relu(inp[0])\n", "self.register_forward_hook(_hook)"),
    ("def _pre(m, inp):\n    m._out = torch.relu(inp[0])\n", "self.register_forward_pre_hook(_pre)"),
    ("", "self.register_forward_hook(lambda m, i, o: torch.relu(i[0]))"),
    ("def _g(m, inp, out):\n    return torch.relu(out)\n"
     "torch.nn.modules.module.register_module_forward_hook(_g)\n", "pass"),
])
def test_module_hooks_are_reached(extra, init):
    src = model("return ext.relu_cuda(x)", init=init, extra=extra)
    assert_hit(src, "py.torch_compute", "torch.relu")
    assert "hook" in next(h["message"] for h in hits(src) if h["rule"] == "py.torch_compute")


def test_decorator_of_forward_is_reached():
    extra = "def _wrap(fn):\n    def inner(self, x):\n        return torch.relu(x)\n    return inner\n"
    src = PRELUDE + extra + "\nclass ModelNew(nn.Module):\n    @_wrap\n    def forward(self, x):\n" \
        "        return ext.relu_cuda(x)\n"
    assert_hit(src, "py.torch_compute", "torch.relu")


@pytest.mark.parametrize("extra, forward", [
    ("@torch.library.custom_op('ns::r', mutates_args=())\ndef _r(x: torch.Tensor) -> torch.Tensor:\n"
     "    return torch.relu(x)\n", "return torch.ops.ns.r(x)"),
    ("from torch.library import custom_op\n_N = 're' + 'lu'\n@custom_op('ns::r', mutates_args=())\n"
     "def _r(x: torch.Tensor) -> torch.Tensor:\n    return getattr(torch, _N)(x)\n", "return torch.ops.ns.r(x)"),
    ("_LIB = torch.library.Library('ns', 'DEF')\n_LIB.define('r(Tensor x) -> Tensor')\n"
     "def _impl(x):\n    return x.clamp(min=0)\n_LIB.impl('r', _impl, 'CPU')\n", "return torch.ops.ns.r(x)"),
])
def test_torch_op_bodies_are_reached(extra, forward):
    src = model(forward, extra=extra)
    found = [h for h in hits(src) if h["rule"] == "py.torch_compute" and h["severity"] == "cheat"]
    assert found and "torch op" in found[0]["message"], hits(src)


# ------------------------------------------------------------------ py.host_compute through raw memory
@pytest.mark.parametrize("extra, forward, needle", [
    ("import ctypes\n", "b = (ctypes.c_float * x.numel()).from_address(x.data_ptr())\nreturn x", "from_address"),
    ("import ctypes\n", "s = ctypes.string_at(x.data_ptr(), x.numel() * 4)\nreturn x", "string_at"),
    ("import ctypes\n", "ctypes.memmove(x.data_ptr(), x.data_ptr(), 4)\nreturn x", "memmove"),
    ("import ctypes\n", "p = ctypes.cast(x.data_ptr(), ctypes.POINTER(ctypes.c_float))\nv = p[0]\nreturn x",
     "ctypes.cast"),
    ("import ctypes\nimport numpy as np\n", "a = np.ctypeslib.as_array(x.data_ptr(), (4,))\nreturn x", "ctypeslib"),
    ("from torch.utils.dlpack import to_dlpack\n", "c = to_dlpack(x)\nreturn x", "c = to_dlpack"),
    ("", "b = bytes(x.untyped_storage())\nreturn x", "bytes("),
    ("", "v = x.contiguous().storage().tolist()\nreturn x", "storage()"),
    ("", "s = repr(x)\nreturn x", "repr("),
    ("", "y = x.clone()\ny.apply_(lambda v: max(v, 0.0))\nreturn y", "apply_"),
    ("_AP = 'app' + 'ly_'\n", "y = x.clone()\ngetattr(y, _AP)(abs)\nreturn y", "getattr"),
    ("import numpy as np\nclass _V:\n    def __init__(self, t):\n"
     "        self.__array_interface__ = {'data': (t.data_ptr(), True)}\n", "a = np.asarray(_V(x))\nreturn x",
     "__array_interface__"),
])
def test_host_compute_through_raw_memory(extra, forward, needle):
    src = model(forward, extra=extra)
    assert_hit(src, "py.host_compute", needle)


# ------------------------------------------------------------------ builtins by computed name, type() modes
@pytest.mark.parametrize("code, needle", [
    ("import builtins\n_RUN = getattr(builtins, 'ex' + 'ec')", "getattr"),
    ("import os\nname = input()\nf = getattr(os, name)", "getattr"),
    ("f = getattr(__builtins__, 'ev' + 'al')", "getattr"),
])
def test_builtin_lookup_by_computed_name(code, needle):
    src = model("return ext.relu_cuda(x)", extra=code + "\n")
    assert_hit(src, "py.dynamic_code", needle)


@pytest.mark.parametrize("code", [
    "def _h(self, func, types, args=(), kwargs=None):\n    return func(*args)\n"
    "_M = type('_M', (object,), {'__torch_dispatch__': _h})",
    "_M = type('_M', (object,), dict(__torch_function__=None))",
    "_T = type('_T', (torch.Tensor,), {})",
])
def test_type_built_modes_are_lazy_tensors(code):
    src = model("return ext.relu_cuda(x)", extra=code + "\n")
    assert_hit(src, "py.lazy_tensor", "type(")


# ------------------------------------------------------------------ red-team sweep 2: names built at run time
def test_a_computed_numpy_attribute_is_dynamic_code():
    src = model("return ext.relu_cuda(x)", extra="import numpy as np\n_LIB = getattr(np, ''.join(chr(c) for c in (99, 116)))\n")
    assert_hit(src, "py.dynamic_code", "_LIB")


def test_a_class_member_set_by_a_computed_name_is_dynamic_code():
    src = model("return ext.relu_cuda(x)", extra="class _Mem:\n    pass\n\n\n"
                "setattr(_Mem, ''.join(reversed('__ecafretni_yarra__')), property(lambda s: {}))\n")
    assert_hit(src, "py.dynamic_code", "setattr")
    # Registering layers under computed names on the module itself is normal.
    assert_no_cheat(model("return ext.relu_cuda(x)", init="for i in range(2):\n    setattr(self, f'w{i}', nn.Parameter(torch.ones(1)))"))
