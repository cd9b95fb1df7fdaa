"""Static evidence for the `legal` gate: reads a candidate's Python with `ast` and reports rule hits.

Runs in the trusted process, never imports or executes the candidate, and uses the standard library only
(no torch), so it is fast and safe on hostile code. A hit of severity "cheat" changes the verdict; "evidence"
is only recorded. Resolution is static and conservative: what cannot be resolved produces no hit.

    python -m anvil_py.static_check --candidate FILE [--format kernelbench|native]

prints one JSON object {"version": 1, "hits": [...], "parse_error": null | "..."} and exits 0. Each hit is
{"rule", "severity", "line", "col", "excerpt", "message"}; line and col are 1-based (col counts UTF-8 bytes).
Rule ids and what they mean are in RULES below; `check_source()` is the in-process entry point.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
import re
import sys

VERSION = 1
CHEAT = "cheat"
EVIDENCE = "evidence"

RULES = {
    "py.torch_compute": "torch compute (outside the aten plumbing allowlist) reached from ModelNew.forward",
    "py.tensor_arith": "Python arithmetic on tensors in forward (evidence: types are not known statically)",
    "py.reference_model": "the reference Model is called, subclassed or inherited from",
    "py.fallback": "try calls the custom kernel and its except handler computes with torch",
    "py.thread": "threads, thread/process pools, asyncio or fork",
    "py.monkeypatch": "assignment into torch/time/sys/builtins/anvil, code objects, globals or sys.modules",
    "py.dynamic_code": "exec/eval/compile, dynamic imports, unpickling, code objects (decoding is evidence)",
    "py.file_access": "file system access or environment writes (reads and build variables are evidence)",
    "py.network": "network modules",
    "py.process": "process control: subprocess, os.system/exec*/kill, signal (sys.exit is evidence)",
    "py.pip_install": "package installation at run time",
    "py.shadow_import": "sys.path changes, import hooks, or writing a .py that shadows an import",
    "py.gc_frame": "gc object scans, frame walking, tracing hooks",
    "py.lazy_tensor": "Tensor subclasses, __torch_function__/__torch_dispatch__, instance method overrides",
    "py.stream": "creates a CUDA stream (evidence)",
    "py.dtype_cast": "lowers precision: half/bfloat16 casts, autocast, TF32 (evidence)",
    "py.torch_config": "changes torch.backends settings (evidence)",
    "py.ctypes": "uses ctypes/cffi (evidence)",
    "py.no_extension": "kernelbench format but no custom kernel is built",
    "py.unused_extension": "a custom kernel is built but forward never calls it (evidence)",
}

# Kinds of value the resolver can tell apart (tuples; the first item names the kind).
UNKNOWN = ("unknown",)
EXT = ("ext",)
EXTFN = ("extfn",)
REF = ("ref",)
TENSOR = ("tensor",)
SCALAR = ("scalar",)
SHAPE = ("shape",)
STR = ("str",)
PATH = ("path",)
TRITON = ("triton",)
OBJ = ("obj",)  # the result of a call into a non-torch library

MODULE_KEY = 0
MAX_DEPTH = 24
EXCERPT_CHARS = 240
RECURSION_LIMIT = 5000  # the visitor recurses once per AST level; Python's parser caps nesting well below this


def _words(text):
    return frozenset(text.split())


# Paper Appendix J: the aten ops that are plumbing, not compute.
APPENDIX_J = _words("""_local_scalar_dense alias allclose arange as_strided broadcast_to clone contiguous copy_
    empty empty_like equal expand flatten full item ones permute rand randint randn reshape select slice squeeze
    stride transpose unsqueeze view zeros""")
# Metadata, views, creation, casts and bookkeeping that the brief also allows.
PLUMBING = APPENDIX_J | _words("""size dim ndimension numel nelement element_size is_contiguous data_ptr
    storage_offset untyped_storage get_device new_empty new_zeros new_ones new_full new_tensor new_empty_strided
    zeros_like ones_like full_like empty_strided tensor as_tensor asarray from_numpy frombuffer from_dlpack
    rand_like randn_like randint_like randperm view_as reshape_as expand_as t t_ narrow unflatten movedim moveaxis
    swapaxes swapdims chunk split tensor_split unbind detach detach_ requires_grad_ zero_ fill_ resize_
    as_strided_ squeeze_ unsqueeze_ transpose_ record_stream pin_memory share_memory_ is_floating_point
    is_complex is_tensor tolist numpy cpu cuda to float double int long short bool char byte half bfloat16 type
    type_as view_as_real view_as_complex is_pinned is_shared register_hook retain_grad dim_order broadcast_tensors
    atleast_1d atleast_2d atleast_3d diagonal split_with_sizes hsplit vsplit dsplit ravel is_same_size
    resize_as_""")
# torch.<name> callables that are not compute.
TORCH_NONCOMPUTE = _words("""no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled
    is_inference_mode_enabled manual_seed seed initial_seed get_rng_state set_rng_state get_default_dtype
    set_default_dtype get_default_device set_default_device set_printoptions is_storage promote_types result_type
    can_cast broadcast_shapes typename get_num_threads set_num_threads get_num_interop_threads
    use_deterministic_algorithms are_deterministic_algorithms_enabled get_float32_matmul_precision
    set_float32_matmul_precision is_autocast_enabled autocast sym_int sym_float sym_not sym_max sym_min finfo
    iinfo device dtype load save _check _check_index _check_value _check_type""")
# torch.<namespace>.* that is not compute.
TORCH_NONCOMPUTE_NS = _words("""cuda backends utils autograd jit library testing random profiler _dynamo compiler
    hub distributed multiprocessing version types overrides cpu mps xpu musa npu amp export fx onnx package
    storage serialization _utils _logging _guards futures accelerator mtia cuda_graphs""")
TORCH_COMPUTE_NS = _words("special linalg fft sparse nested masked functional _refs _prims _decomp signal")
ATEN_OP_NS = _words("aten prims _refs quantized _quantized")

# Tensor methods (and torch.Tensor.*) that dispatch compute ops.
TENSOR_COMPUTE_METHODS = _words("""abs abs_ absolute acos acosh add add_ addbmm addcdiv addcdiv_ addcmul addcmul_
    addmm addmm_ addmv addr all amax amin aminmax angle any apply_ argmax argmin argsort argwhere asin asinh atan
    atan2 atanh baddbmm baddbmm_ bernoulli bernoulli_ bincount bitwise_and bitwise_not bitwise_or bitwise_xor bmm
    cauchy_ ceil ceil_ cholesky clamp clamp_ clamp_max clamp_min clip clip_ cos cos_ cosh count_nonzero cross
    cummax cummin cumprod cumsum deg2rad diag diag_embed diff digamma dist div div_ divide dot eq eq_ erf erf_
    erfc erfinv exp exp_ exp2 expm1 exponential_ fix flip fliplr flipud float_power floor floor_ floor_divide fmax
    fmin fmod frac gather gcd ge geometric_ ger greater greater_equal gt hardshrink heaviside histc hypot
    index_add index_add_ index_copy index_copy_ index_fill index_fill_ index_put index_put_ index_reduce
    index_select inner inverse isclose isfinite isinf isnan kron kthvalue lcm ldexp le lerp lerp_ less less_equal
    lgamma log log_ log10 log1p log2 log_normal_ log_softmax logaddexp logcumsumexp logdet logical_and
    logical_not logical_or logical_xor logit logsumexp lt lu map_ masked_fill masked_fill_ masked_scatter
    masked_scatter_ masked_select matmul matrix_exp matrix_power max maximum mean median min minimum mm mode
    msort mul mul_ multinomial multiply mv mvlgamma nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum
    ne neg neg_ negative nonzero norm normal_ not_equal outer pinverse polygamma pow pow_ prod put put_ qr
    quantile rad2deg reciprocal reciprocal_ relu relu_ remainder renorm repeat repeat_interleave roll rot90
    round round_ rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_ sgn
    sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc sinh slogdet softmax sort sqrt sqrt_ square square_ std
    sub sub_ subtract sum sum_to_size svd take take_along_dim tan tanh tanh_ tensordot topk trace tril tril_ triu
    triu_ true_divide trunc trunc_ unique unique_consecutive var vdot where xlogy __matmul__ __rmatmul__
    __add__ __radd__ __iadd__ __sub__ __rsub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__ __pow__
    __rpow__ __neg__""")
# Compute method names that builtin containers also have: hit only when the receiver is known to be a tensor.
AMBIGUOUS_METHODS = _words("add sort")
SCALAR_RESULT_METHODS = _words("""item numel dim ndimension nelement element_size data_ptr get_device
    storage_offset is_contiguous is_floating_point is_complex tolist equal allclose __len__""")
TENSOR_SCALAR_ATTRS = _words("ndim dtype device is_cuda requires_grad layout itemsize nbytes is_leaf is_sparse")
TENSOR_TENSOR_ATTRS = _words("T mT H mH data grad real imag")

NOOP_LAYERS = _words("Identity Flatten Unflatten Module")
DROPOUT_LAYERS = _words("Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout")
CONTAINER_LAYERS = _words("Sequential ModuleList ModuleDict")
PARAM_CLASSES = _words("Parameter Buffer UninitializedParameter UninitializedBuffer ParameterList ParameterDict")

# torch.<name> values that are not functions.
TORCH_CONSTANTS = _words("""float32 float float16 half bfloat16 float64 double int64 long int32 int int16 short int8
    uint8 uint16 uint32 uint64 bool complex32 complex64 cfloat complex128 cdouble float8_e4m3fn float8_e5m2
    float8_e4m3fnuz float8_e5m2fnuz strided sparse_coo sparse_csr contiguous_format channels_last
    channels_last_3d preserve_format inf nan pi e newaxis""")
HALF_DTYPES = _words("torch.float16 torch.half torch.bfloat16")
AUTOCAST = _words("torch.autocast torch.cuda.amp.autocast torch.amp.autocast torch.cpu.amp.autocast")
MATMUL_OPERATORS = _words("operator.matmul operator.imatmul operator.__matmul__ operator.__imatmul__")
ARITH_OPERATORS = _words("""add sub mul truediv floordiv mod pow neg iadd isub imul itruediv __add__ __sub__
    __mul__ __truediv__ __pow__""")

EXT_LOADERS = _words("""torch.utils.cpp_extension.load_inline torch.utils.cpp_extension.load torch.ops.load_library
    ctypes.CDLL ctypes.PyDLL ctypes.cdll.LoadLibrary ctypes.pydll.LoadLibrary cupy.RawKernel cupy.RawModule
    cupy.ElementwiseKernel cupy.ReductionKernel torch.cuda.jiterator._create_jit_fn""")
KERNEL_DECORATORS = _words("""triton.jit triton.autotune triton.heuristics numba.cuda.jit numba.jit numba.njit
    tilelang.jit""")
TENSOR_BASES = _words("""torch.Tensor torch._C._TensorBase torch._C.TensorBase torch.nn.Parameter
    torch.nn.parameter.Parameter torch.utils._python_dispatch.TorchDispatchMode torch.overrides.TorchFunctionMode
    torch._C._TensorMeta""")
COMPILERS = _words("torch.compile torch.jit.script torch.jit.trace torch.jit.trace_module")
AUTOGRAD_FUNCTIONS = _words("torch.autograd.Function torch.autograd.function.Function")

PROTECTED_ROOTS = _words("""torch time anvil anvil_py builtins sys os gc inspect importlib operator functools math
    random numpy triton threading ctypes types traceback io signal subprocess timeit statistics""")
SHADOWABLE = PROTECTED_ROOTS | _words("sitecustomize usercustomize typing site")
CODE_ATTRS = _words("__code__ __globals__ __defaults__ __kwdefaults__ __closure__ __builtins__")
LAZY_ATTRS = _words("""__class__ __eq__ __ne__ __torch_function__ __torch_dispatch__ __getattr__ __getattribute__
    __bool__ __float__ __array__ __len__ __getitem__""")
MUTATORS = _words("update setdefault pop popitem clear __setitem__ __delitem__ replace")
FRAME_ATTRS = _words("f_back f_globals f_locals f_builtins tb_frame gi_frame cr_frame ag_frame")
# Environment variables a legitimate build may set (writing them is evidence, any other write is a cheat).
BUILD_ENV = _words("""TORCH_CUDA_ARCH_LIST MAX_JOBS CUDA_HOME CUDA_PATH CXX CC TORCH_EXTENSIONS_DIR NVCC_FLAGS
    CFLAGS CXXFLAGS TORCH_USE_CUDA_DSA""")

# (prefixes of a resolved callee, rule, severity, message). The first matching row wins.
CALL_RULES = [
    (("threading", "_thread", "multiprocessing", "concurrent.futures", "asyncio", "torch.multiprocessing",
      "os.fork", "os.forkpty", "os.register_at_fork"), "py.thread", CHEAT, "starts or manages threads/processes"),
    (("subprocess", "os.system", "os.popen", "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.execv",
      "os.execve", "os.execvp", "os.execvpe", "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "os.spawnv",
      "os.spawnve", "os.spawnvp", "os.spawnvpe", "os.posix_spawn", "os.posix_spawnp", "os.kill", "os.killpg",
      "os._exit", "os.abort", "signal", "pty", "os.setsid", "os.setpgrp", "resource.setrlimit", "resource.prlimit"),
     "py.process", CHEAT, "controls processes or signals"),
    (("sys.exit", "atexit"), "py.process", EVIDENCE, "exits early or registers an exit hook"),
    (("socket", "urllib", "urllib2", "urllib3", "requests", "http", "httpx", "aiohttp", "ftplib", "smtplib",
      "telnetlib", "xmlrpc", "websocket", "websockets", "paramiko", "socketserver", "torch.hub"),
     "py.network", CHEAT, "uses the network"),
    (("pip", "ensurepip"), "py.pip_install", CHEAT, "installs packages at run time"),
    (("builtins.open", "io.open", "io.FileIO", "codecs.open", "os.open", "os.fdopen", "os.remove", "os.unlink",
      "os.rename", "os.renames", "os.replace", "os.rmdir", "os.removedirs", "os.listdir",
      "os.scandir", "os.walk", "os.chmod", "os.chown", "os.symlink", "os.link", "os.truncate", "os.write",
      "os.read", "os.utime", "os.mkfifo", "os.mknod", "os.chdir", "os.chroot", "os.dup", "os.dup2", "os.pipe",
      "os.memfd_create", "os.sendfile", "os.lseek", "os.fchmod", "os.ftruncate", "os.set_inheritable",
      "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move", "shutil.rmtree",
      "shutil.copyfileobj", "shutil.make_archive", "shutil.unpack_archive", "torch.load", "torch.save",
      "numpy.load", "numpy.save", "numpy.savez", "numpy.fromfile", "numpy.memmap", "numpy.loadtxt",
      "numpy.savetxt", "numpy.genfromtxt", "fcntl", "mmap"), "py.file_access", CHEAT, "accesses files"),
    (("os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.islink", "os.path.getsize",
      "os.path.getmtime", "os.path.getctime", "os.path.getatime", "os.path.lexists", "os.stat", "os.lstat",
      "os.access", "tempfile", "glob", "os.getcwd", "os.makedirs", "os.mkdir"), "py.file_access", EVIDENCE,
     "reads file system metadata or makes a directory"),
    (("os.environ.get", "os.getenv", "os.environ.__getitem__", "os.environ.items", "os.environ.keys",
      "os.environ.copy"), "py.file_access", EVIDENCE, "reads the environment"),
    (("os.environ.update", "os.environ.pop", "os.environ.clear", "os.environ.popitem", "os.unsetenv"),
     "py.file_access", CHEAT, "changes the environment"),
    (("builtins.exec", "builtins.eval", "builtins.compile", "runpy", "pickle.load", "pickle.loads",
      "_pickle.load", "_pickle.loads", "marshal.load", "marshal.loads", "dill", "cloudpickle", "shelve",
      "types.FunctionType", "types.CodeType", "types.LambdaType", "joblib.load", "builtins.breakpoint"),
     "py.dynamic_code", CHEAT, "runs dynamically built or deserialized code"),
    (("base64", "zlib.decompress", "lzma.decompress", "bz2.decompress", "gzip.decompress", "codecs.decode",
      "binascii", "importlib.reload"), "py.dynamic_code", EVIDENCE, "decodes or reloads code-like data"),
    (("sys.path.insert", "sys.path.append", "sys.path.extend", "sys.path.remove", "sys.path.clear",
      "sys.path.__setitem__", "site.addsitedir", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache",
      "importlib.util.spec_from_file_location", "importlib.util.module_from_spec", "importlib.machinery",
      "zipimport"), "py.shadow_import", CHEAT, "changes how imports are resolved"),
    (("gc.get_objects", "gc.get_referrers", "gc.get_referents", "inspect.currentframe", "inspect.stack",
      "inspect.getouterframes", "inspect.getinnerframes", "inspect.trace", "sys._getframe", "sys._current_frames",
      "sys.settrace", "sys.setprofile", "sys.addaudithook", "traceback.walk_stack", "traceback.walk_tb"),
     "py.gc_frame", CHEAT, "scans the heap, walks frames or installs a tracer"),
    (("unittest.mock.patch", "mock.patch", "sys.modules.update", "sys.modules.setdefault", "sys.modules.pop",
      "sys.modules.__setitem__", "sys.modules.clear"), "py.monkeypatch", CHEAT, "patches modules or objects"),
    (("torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.cuda.ExternalStream",
      "torch.cuda.streams.ExternalStream", "torch.Stream"), "py.stream", EVIDENCE, "creates a CUDA stream"),
    (("torch.backends",), "py.torch_config", EVIDENCE, "changes a torch backend setting"),
    (("ctypes", "cffi"), "py.ctypes", EVIDENCE, "uses a foreign-function interface"),
]
# Modules whose mere import is a hit (rule, severity, message).
IMPORT_RULES = [
    (("threading", "_thread", "multiprocessing", "concurrent.futures", "asyncio", "torch.multiprocessing"),
     "py.thread", CHEAT, "imports a threading/multiprocessing module"),
    (("subprocess", "signal", "pty"), "py.process", CHEAT, "imports a process-control module"),
    (("socket", "urllib", "urllib2", "urllib3", "requests", "http", "httpx", "aiohttp", "ftplib", "smtplib",
      "telnetlib", "xmlrpc", "websocket", "websockets", "paramiko", "socketserver", "torch.hub"),
     "py.network", CHEAT, "imports a network module"),
    (("pip", "ensurepip"), "py.pip_install", CHEAT, "imports pip"),
    (("ctypes", "cffi"), "py.ctypes", EVIDENCE, "imports a foreign-function interface"),
    (("marshal", "runpy", "dill", "cloudpickle"), "py.dynamic_code", EVIDENCE, "imports a code-loading module"),
]
PIP_RE = re.compile(r"\b(pip3?|conda|mamba|uv|ensurepip)\b[^\n]{0,40}\binstall\b|-m\s+ensurepip")
PROC_RE = re.compile(r"/proc/(self|\d+|thread-self)/|/dev/(k?mem)\b")
PYFILE_RE = re.compile(r"(?:^|[/\\])([A-Za-z_]\w*)\.py$")
BUILTIN_NAMES = frozenset(dir(builtins))


def _matches(q, prefixes):
    return any(q == p or q.startswith(p + ".") for p in prefixes)


def _is_plumbing(name):
    return name in PLUMBING or name.startswith(("_assert", "_cast_"))


def _torch_compute(path):
    """Returns True if calling the dotted `path` runs torch compute outside the allowlist."""
    parts = path.split(".")
    if len(parts) < 2 or parts[0] != "torch":
        return False
    ns, last = parts[1], parts[-1]
    if ns == "ops":
        return len(parts) >= 4 and parts[2] in ATEN_OP_NS and not _is_plumbing(parts[3])
    if ns == "nn":
        return len(parts) == 4 and parts[2] == "functional" and not _is_plumbing(last)
    if ns == "Tensor":
        return len(parts) == 3 and last in TENSOR_COMPUTE_METHODS
    if ns == "_C":
        return (len(parts) >= 4 and parts[2] in ("_nn", "_VariableFunctions", "_linalg", "_fft", "_special")
                and not _is_plumbing(last))
    if ns in TORCH_COMPUTE_NS:
        return not _is_plumbing(last)
    if ns in TORCH_NONCOMPUTE_NS or len(parts) != 2:
        return False
    return not (_is_plumbing(ns) or ns in TORCH_NONCOMPUTE or ns[:1].isupper())


def _rank(kind):
    if kind is None or kind is UNKNOWN:
        return 0
    return {"ext": 5, "extfn": 5, "triton": 5, "layer": 4, "container": 4, "inst": 4, "ref": 4, "func": 3,
            "qual": 3, "class": 3, "compiled": 4}.get(kind[0], 1)


def _merge(kinds):
    """The most telling kind among a container's elements."""
    best = None
    for k in kinds:
        if k is not None and (best is None or _rank(k) > _rank(best)):
            best = k
    return best


def _const_str(e):
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None


class _Scope:
    __slots__ = ("parent", "cls", "locals", "globals")

    def __init__(self, parent, cls):
        self.parent = parent
        self.cls = cls
        self.locals = {}
        self.globals = set()


class _ClassInfo:
    __slots__ = ("node", "methods", "attrs", "bases")

    def __init__(self, node):
        self.node = node
        self.methods = {}
        self.attrs = {}
        self.bases = []


class _Ctx:
    __slots__ = ("scope", "key", "tags", "method_cls")

    def __init__(self, scope, key, tags=(), method_cls=None):
        self.scope = scope
        self.key = key
        self.tags = tags
        self.method_cls = method_cls


class _StripMain(ast.NodeTransformer):
    """Drops `if __name__ == "__main__":` blocks (their else branch stays)."""

    def visit_If(self, node):
        t = node.test
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
                and {_const_str(t.left), _const_str(t.comparators[0])} >= {"__main__"}
                and any(isinstance(x, ast.Name) and x.id == "__name__" for x in (t.left, t.comparators[0]))):
            return [self.visit(s) for s in node.orelse]
        return self.generic_visit(node)


def _iter_local(fn):
    """Nodes of a function's own scope: nested functions, lambdas and classes are yielded, not entered."""
    stack = list(reversed(fn.body)) if isinstance(fn.body, list) else [fn.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


class _Analyzer:
    def __init__(self, tree, lines, fmt):
        self.tree = tree
        self.lines = lines
        self.fmt = fmt
        self.hits = {}
        self.mscope = _Scope(None, None)
        self.module_syms = self.mscope.locals
        self.star_imports = []
        self.classes = []
        self.class_infos = {}
        self.ext_factories = set()
        self.builds_extension = False
        self.events = {MODULE_KEY: []}
        self.edges = {MODULE_KEY: set()}
        self.tries = {}
        self.funcs = {}
        self.imports = []
        self.py_files = []
        self.docstrings = set()

    # ------------------------------------------------------------ hits
    def hit(self, rule, severity, node, message):
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        key = (rule, severity, line, col)
        if key in self.hits:
            return
        excerpt = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.hits[key] = {"rule": rule, "severity": severity, "line": line, "col": col,
                          "excerpt": excerpt[:EXCERPT_CHARS], "message": message}

    # ------------------------------------------------------------ name resolution
    def lookup(self, name, scope):
        s = scope or self.mscope
        while s is not None:
            if name in s.globals:
                s = self.mscope
            if name in s.locals:
                return s.locals[name]
            s = s.parent
        if name == "Model":
            return REF
        if name not in BUILTIN_NAMES:
            for mod in self.star_imports:
                return ("qual", f"{mod}.{name}")
        return None

    def is_builtin(self, name, scope):
        return name in BUILTIN_NAMES and self.lookup(name, scope) is None

    def qual_of(self, e, scope):
        """The dotted path an expression resolves to ("builtins.open" for builtins), or None."""
        k = self.resolve(e, scope)
        if k is not None and k[0] == "qual":
            return k[1]
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name) and self.is_builtin(e.id, scope):
            return ".".join(["builtins", e.id, *reversed(parts)])
        return None

    def resolve(self, e, scope, depth=0):
        if depth > MAX_DEPTH:
            return None
        d = depth + 1
        t = type(e)
        if t is ast.Name:
            return self.lookup(e.id, scope)
        if t is ast.Attribute:
            return self.attr_of(self.resolve(e.value, scope, d), e.attr)
        if t is ast.Call:
            return self.call_result(e, scope, d)
        if t is ast.Subscript:
            return self.subscript_of(self.resolve(e.value, scope, d), e.slice)
        if t is ast.Constant:
            if isinstance(e.value, str):
                return STR
            return SCALAR if isinstance(e.value, (int, float, complex)) else None
        if t in (ast.List, ast.Tuple, ast.Set):
            return ("pycoll", tuple(self.resolve(x, scope, d) for x in e.elts[:64]))
        if t is ast.Dict:
            return ("pycoll", tuple(self.resolve(x, scope, d) for x in e.values[:64]))
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
            return ("pycoll", (self.resolve(e.elt, scope, d),))
        if t is ast.BinOp:
            if isinstance(e.op, ast.Mod) and _const_str(e.left) is not None:
                return STR
            a, b = self.resolve(e.left, scope, d), self.resolve(e.right, scope, d)
            if PATH in (a, b) and isinstance(e.op, ast.Div):
                return PATH
            if TENSOR in (a, b):
                return TENSOR
            if a in (SCALAR, SHAPE) and b in (SCALAR, SHAPE):
                return SCALAR
            if a is not None and b is not None and a[0] == "pycoll" and b[0] == "pycoll":
                return ("pycoll", a[1] + b[1])
            return STR if a == STR and b == STR else None
        if t is ast.Compare:
            kinds = [self.resolve(x, scope, d) for x in [e.left, *e.comparators]]
            return TENSOR if TENSOR in kinds else SCALAR
        if t is ast.UnaryOp:
            k = self.resolve(e.operand, scope, d)
            return k if k in (TENSOR, SCALAR) else None
        if t is ast.IfExp:
            return self.resolve(e.body, scope, d) or self.resolve(e.orelse, scope, d)
        if t is ast.BoolOp:
            return _merge(self.resolve(x, scope, d) for x in e.values)
        if t is ast.Lambda:
            return ("func", e)
        if t in (ast.NamedExpr, ast.Starred, ast.Await):
            return self.resolve(e.value, scope, d)
        if t is ast.JoinedStr:
            return STR
        return None

    def attr_of(self, base, attr):
        if base is None or base is UNKNOWN:
            return None
        kind = base[0]
        if kind == "qual":
            return ("qual", f"{base[1]}.{attr}")
        if kind in ("ext", "extfn"):
            return EXTFN
        if kind in ("self", "inst"):
            return self.class_member(base[1], attr)
        if kind == "class":
            if attr == "apply" and self.is_autograd_fn(base[1]):
                return self.class_member(base[1], "forward")
            return self.class_member(base[1], attr)
        if kind == "layer":
            if attr == "forward":
                return base
            if attr.endswith(("weight", "bias", "running_mean", "running_var")):
                return TENSOR
            return SCALAR
        if kind == "tensor":
            if attr == "shape":
                return SHAPE
            if attr in TENSOR_SCALAR_ATTRS:
                return SCALAR
            if attr in TENSOR_TENSOR_ATTRS:
                return TENSOR
            return ("tmethod", attr)
        if kind == "ref":
            return REF
        if kind == "path":
            return ("pathattr", attr)
        if kind == "pycoll" and attr in ("get", "setdefault", "pop", "__getitem__"):
            return ("pyget", base[1])
        return None

    def subscript_of(self, base, index):
        if base is None:
            return None
        kind = base[0]
        if base == SHAPE:
            return SHAPE if isinstance(index, ast.Slice) else SCALAR
        if base == TENSOR:
            return TENSOR
        if base == TRITON:
            return EXTFN
        if base == STR:
            return STR
        if kind == "container":
            return _merge(base[1])
        if kind == "pycoll":
            i = index.value if isinstance(index, ast.Constant) else None
            if isinstance(i, int) and not isinstance(i, bool) and -len(base[1]) <= i < len(base[1]):
                return base[1][i]
            return _merge(base[1])
        if kind == "qual" and base[1] == "os.environ":
            return STR
        key = _const_str(index)
        if kind == "qual" and key and base[1] == "sys.modules":
            return ("qual", key)
        if kind == "qual" and key and base[1].endswith(".__dict__"):
            return ("qual", f"{base[1][:-len('.__dict__')]}.{key}")
        return None

    def call_result(self, call, scope, depth):
        f = call.func
        if isinstance(f, ast.Name) and self.is_builtin(f.id, scope):
            n = f.id
            if n == "getattr" and len(call.args) >= 2 and _const_str(call.args[1]) is not None:
                return self.attr_of(self.resolve(call.args[0], scope, depth), call.args[1].value)
            if n == "__import__" and call.args and _const_str(call.args[0]):
                return ("qual", call.args[0].value.split(".")[0])
            if n in ("staticmethod", "classmethod") and call.args:
                return self.resolve(call.args[0], scope, depth)
            if n == "vars" and call.args:
                k = self.resolve(call.args[0], scope, depth)
                return ("qual", k[1] + ".__dict__") if k is not None and k[0] == "qual" else None
            if n in ("len", "int", "float", "round", "abs", "min", "max", "bool", "hash", "id", "ord", "divmod"):
                return SCALAR
            if n in ("list", "tuple", "set", "dict", "sorted", "range", "enumerate", "zip", "reversed"):
                return ("pycoll", ())
            return STR if n in ("str", "repr", "format") else None
        fk = self.resolve(f, scope, depth)
        if fk is None or fk is UNKNOWN:
            return None
        kind = fk[0]
        if kind == "qual":
            return self.qual_result(fk[1], call, scope, depth)
        if kind == "func":
            return EXT if id(fk[1]) in self.ext_factories else None
        if kind == "class":
            return ("inst", fk[1])
        if kind == "ref":
            return REF
        if kind in ("extfn", "layer", "container", "inst"):
            return TENSOR
        if kind == "pyget":
            return _merge(fk[1])
        if kind == "tmethod":
            name = fk[1]
            if name in ("size", "stride"):
                return SCALAR if call.args else SHAPE
            return SCALAR if name in SCALAR_RESULT_METHODS else TENSOR
        return None

    def qual_result(self, p, call, scope, depth):
        parts = p.split(".")
        last = parts[-1]
        if p in ("functools.partial", "functools.partialmethod") and call.args:
            return self.resolve(call.args[0], scope, depth)
        if p == "importlib.import_module" and call.args and _const_str(call.args[0]):
            return ("qual", call.args[0].value)
        if p in EXT_LOADERS or p.endswith(("cpp_extension.load_inline", "cpp_extension.load")):
            return EXT
        if p.startswith("pathlib.") and last in ("Path", "PurePath", "PosixPath"):
            return PATH
        if last == "Model":
            return REF
        if p in COMPILERS:
            return ("compiled", p)
        if parts[0] == "math":
            return SCALAR
        if parts[0] != "torch":
            return OBJ
        if len(parts) >= 3 and parts[1] == "nn" and last[:1].isupper():
            if last in PARAM_CLASSES:
                return TENSOR
            if last in CONTAINER_LAYERS:
                elems = []
                for a in list(call.args) + [kw.value for kw in call.keywords]:
                    k = self.resolve(a, scope, depth)
                    if k is not None and k[0] == "pycoll":
                        elems.extend(k[1])
                    else:
                        elems.append(k)
                return ("container", tuple(elems))
            return ("layer", p)
        if last in ("size", "Size", "stride"):
            return SHAPE
        if last in SCALAR_RESULT_METHODS or last in ("device", "finfo", "iinfo", "is_tensor"):
            return SCALAR
        return None if parts[1] in TORCH_NONCOMPUTE_NS else TENSOR

    def class_info(self, node):
        return self.class_infos.get(id(node)) or self._new_class_info(node)

    def _new_class_info(self, node):
        info = _ClassInfo(node)
        self.class_infos[id(node)] = info
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                k = self.resolve(stmt.value, self.mscope)
                for t in stmt.targets:
                    if isinstance(t, ast.Name) and k is not None:
                        info.attrs[t.id] = k
        info.bases = [self.resolve(b, self.mscope) for b in node.bases]
        return info

    def class_member(self, cls, attr, seen=None):
        info = self.class_info(cls)
        if attr in info.methods:
            return ("func", info.methods[attr])
        if attr in info.attrs:
            return info.attrs[attr]
        return self.base_member(cls, attr, seen)

    def base_member(self, cls, attr, seen=None):
        seen = (seen or set()) | {id(cls)}
        for b in self.class_info(cls).bases:
            if b == REF:
                return REF
            if b is not None and b[0] == "class" and id(b[1]) not in seen:
                r = self.class_member(b[1], attr, seen)
                if r is not None:
                    return r
        return None

    def is_autograd_fn(self, cls, seen=None):
        seen = (seen or set()) | {id(cls)}
        for b in self.class_info(cls).bases:
            if b is None:
                continue
            if b[0] == "qual" and b[1] in AUTOGRAD_FUNCTIONS:
                return True
            if b[0] == "class" and id(b[1]) not in seen and self.is_autograd_fn(b[1], seen):
                return True
        return False

    # ------------------------------------------------------------ scopes and bindings
    def bind_import(self, node, scope):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    scope.locals[a.asname] = ("qual", a.name)
                else:
                    top = a.name.split(".")[0]
                    scope.locals[top] = ("qual", top)
            return
        mod = "." * (node.level or 0) + (node.module or "")
        for a in node.names:
            if a.name == "*":
                if mod.startswith("torch"):
                    self.star_imports.append(mod)
                continue
            path = f"{mod}.{a.name}" if mod else a.name
            scope.locals[a.asname or a.name] = REF if a.name == "Model" else ("qual", path)

    def def_kind(self, node, scope):
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            q = self.qual_of(target, scope)
            if q in KERNEL_DECORATORS:
                self.builds_extension = True
                return TRITON
        return ("func", node)

    def bind(self, scope, name, kind):
        if name in scope.globals:
            scope = self.mscope
        cur = scope.locals.get(name)
        if kind is not None and kind is not UNKNOWN:
            if cur is None or _rank(kind) >= _rank(cur):
                scope.locals[name] = kind
        elif name not in scope.locals:
            scope.locals[name] = UNKNOWN

    def bind_target(self, t, kind, value, scope):
        if isinstance(t, ast.Name):
            self.bind(scope, t.id, kind)
        elif isinstance(t, ast.Starred):
            self.bind_target(t.value, kind, None, scope)
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and _rank(kind) >= 4:
            owner = scope  # a dict or list that holds extensions or layers, bound where the name lives
            while owner is not None and t.value.id not in owner.locals and t.value.id not in owner.globals:
                owner = owner.parent
            self.bind(owner or self.mscope, t.value.id, ("pycoll", (kind,)))
        elif isinstance(t, (ast.Tuple, ast.List)):
            elems = None
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                elems = [(self.resolve(v, scope), v) for v in value.elts]
            elif kind is not None and kind[0] == "pycoll" and len(kind[1]) == len(t.elts):
                elems = [(k, None) for k in kind[1]]
            else:
                each = SCALAR if kind in (SHAPE, SCALAR) else TENSOR if kind == TENSOR else None
                elems = [(each, None)] * len(t.elts)
            for sub, (k, v) in zip(t.elts, elems):
                self.bind_target(sub, k, v, scope)

    def iter_kind(self, it, scope):
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and self.is_builtin(it.func.id, scope):
            if it.func.id == "range":
                return SCALAR
            if it.func.id == "enumerate" and it.args:
                return ("pycoll", (SCALAR, self.iter_kind(it.args[0], scope)))
        k = self.resolve(it, scope)
        if k is None:
            return None
        if k[0] in ("container", "pycoll"):
            return _merge(k[1])
        return SCALAR if k == SHAPE else TENSOR if k == TENSOR else None

    def bind_statement(self, n, scope):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            if getattr(n, "value", None) is None:
                return
            k = self.resolve(n.value, scope)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                self.bind_target(t, k, n.value, scope)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            self.bind_target(n.target, self.iter_kind(n.iter, scope), None, scope)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                if item.optional_vars is not None:
                    self.bind_target(item.optional_vars, self.resolve(item.context_expr, scope), None, scope)
        elif isinstance(n, (ast.Call, ast.AugAssign)):  # list.append/extend/insert and += grow a local list
            name, added = None, None
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add):
                name, added = n.target.id, self.resolve(n.value, scope)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                  and n.func.attr in ("append", "extend", "insert") and n.args):
                name, added = n.func.value.id, self.resolve(n.args[-1], scope)
                if n.func.attr != "extend":
                    added = ("pycoll", (added,))
            cur = scope.locals.get(name) if name else None
            if cur is not None and cur[0] == "pycoll" and added is not None and added[0] == "pycoll":
                scope.locals[name] = ("pycoll", (cur[1] + added[1])[:64])

    def param_kind(self, fn, arg, default):
        ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if "Tensor" in ann:
            return TENSOR
        if isinstance(default, ast.Constant) or ann in ("int", "float", "bool", "str"):
            return SCALAR
        return TENSOR if getattr(fn, "name", "") == "forward" else UNKNOWN

    def build_scope(self, fn, parent, method_cls):
        scope = _Scope(parent, method_cls or (parent.cls if parent is not None else None))
        a = fn.args
        params = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
        pairs = list(zip(params, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
        decos = {ast.unparse(d) for d in getattr(fn, "decorator_list", [])}
        for i, (arg, default) in enumerate(pairs):
            if method_cls is not None and i == 0 and "staticmethod" not in decos:
                scope.locals[arg.arg] = ("class", method_cls) if "classmethod" in decos else ("self", method_cls)
            else:
                scope.locals[arg.arg] = self.param_kind(fn, arg, default)
        for extra in (a.vararg, a.kwarg):
            if extra is not None:
                scope.locals[extra.arg] = UNKNOWN
        if isinstance(fn, ast.Lambda):
            return scope
        nodes = list(_iter_local(fn))
        for n in nodes:
            if isinstance(n, ast.Global):
                scope.globals.update(n.names)
        for n in nodes:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                self.bind_import(n, scope)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope.locals[n.name] = self.def_kind(n, scope)
            elif isinstance(n, ast.ClassDef):
                scope.locals[n.name] = REF if n.name == "Model" else ("class", n)
        stmts = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
                                                    ast.With, ast.AsyncWith, ast.comprehension, ast.Call,
                                                    ast.AugAssign))]
        stmts.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        for _ in range(2):
            for n in stmts:
                self.bind_statement(n, scope)
        return scope

    def prepare(self):
        """Module symbols, extension factories, module globals set by functions, class attributes."""
        top = []
        stack = list(reversed(self.tree.body))
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.TryStar)):
                for field in ("finalbody", "orelse", "handlers", "body"):
                    stack.extend(reversed(getattr(n, field, []) or []))
                continue
            if isinstance(n, ast.ExceptHandler):
                stack.extend(reversed(n.body))
                continue
            top.append(n)
        for n in top:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                self.bind_import(n, self.mscope)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.module_syms[n.name] = self.def_kind(n, self.mscope)
            elif isinstance(n, ast.ClassDef):
                self.module_syms[n.name] = REF if n.name == "Model" else ("class", n)
        functions = [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.classes = [n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)]
        for fn in functions:
            local = _Scope(self.mscope, None)
            body = list(_iter_local(fn))
            for n in body:
                if isinstance(n, (ast.Import, ast.ImportFrom)):
                    self.bind_import(n, local)
            loads = any(isinstance(n, ast.Call) and self.resolve(n, local) == EXT for n in body)
            if loads and any(isinstance(n, ast.Return) and n.value is not None for n in body):
                self.ext_factories.add(id(fn))
        self.class_infos = {}  # built above before module assignments were bound
        for n in top:
            self.bind_statement(n, self.mscope)
        for fn in functions:  # module names that functions set: `global` and stores into module dicts
            nodes = list(_iter_local(fn))
            if not any(isinstance(n, ast.Global) or (isinstance(n, ast.Assign) and any(
                    isinstance(t, ast.Subscript) for t in n.targets)) for n in nodes):
                continue
            scope = self.build_scope(fn, self.mscope, None)
            for n in nodes:
                if isinstance(n, ast.Assign):
                    k = self.resolve(n.value, scope)
                    for t in n.targets:
                        if isinstance(t, ast.Name) and t.id in scope.globals and _rank(k) >= 4:
                            self.bind(self.mscope, t.id, k)
        for _ in range(2):
            for cls in self.classes:
                self.collect_class_attrs(cls)

    def collect_class_attrs(self, cls):
        info = self.class_info(cls)
        methods = sorted(info.methods.values(), key=lambda m: (m.name != "__init__", m.lineno))
        for m in methods:
            if not m.args.args:
                continue
            selfname = m.args.args[0].arg
            scope = self.build_scope(m, self.mscope, cls)

            def is_self(e):
                return isinstance(e, ast.Name) and e.id == selfname

            for n in _iter_local(m):
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
                    k = self.resolve(n.value, scope)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Attribute) and is_self(t.value):
                            self.set_attr(info, t.attr, k)
                        elif (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute)
                              and is_self(t.value.value) and _rank(k) >= 4):
                            self.set_attr(info, t.value.attr, ("pycoll", (k,)))
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                    f, args = n.func, n.args
                    if isinstance(f.value, ast.Attribute) and is_self(f.value.value) and f.attr in (
                            "append", "extend", "insert") and args:
                        k = self.resolve(args[-1], scope)
                        elems = k[1] if k is not None and k[0] == "pycoll" else (k,)
                        cur = info.attrs.get(f.value.attr)
                        old = cur[1] if cur is not None and cur[0] == "container" else ()
                        info.attrs[f.value.attr] = ("container", old + tuple(elems))
                    elif is_self(f.value) and f.attr in ("add_module", "register_module", "register_buffer",
                                                         "register_parameter") and len(args) >= 2:
                        name = _const_str(args[0])
                        if name:
                            kind = TENSOR if f.attr.startswith("register_b") or f.attr.endswith("parameter") \
                                else self.resolve(args[1], scope)
                            self.set_attr(info, name, kind)
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
                      and len(n.args) == 3 and is_self(n.args[0]) and _const_str(n.args[1])):
                    self.set_attr(info, n.args[1].value, self.resolve(n.args[2], scope))

    @staticmethod
    def set_attr(info, name, kind):
        cur = info.attrs.get(name)
        if kind is not None and (cur is None or _rank(kind) >= _rank(cur)):
            info.attrs[name] = kind

    # ------------------------------------------------------------ the visit
    def run(self):
        self.prepare()
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Expr) and _const_str(n.value) is not None:
                self.docstrings.add(id(n.value))
        ctx = _Ctx(self.mscope, MODULE_KEY)
        for stmt in self.tree.body:
            self.visit(stmt, ctx)
        self.finish()

    def visit(self, node, ctx):
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            self.visit_function(node, ctx)
            return
        if t is ast.ClassDef:
            self.on_class(node, ctx)
            for e in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
                self.visit(e, ctx)
            body_ctx = _Ctx(ctx.scope, ctx.key, ctx.tags, method_cls=node)
            for stmt in node.body:
                self.visit(stmt, body_ctx)
            return
        if t in (ast.Try, ast.TryStar):
            self.tries.setdefault(ctx.key, []).append(node)
            tid = id(node)
            for s in node.body:
                self.visit(s, _Ctx(ctx.scope, ctx.key, ctx.tags + ((tid, "body"),), ctx.method_cls))
            for i, h in enumerate(node.handlers):
                if h.type is not None:
                    self.visit(h.type, ctx)
                hctx = _Ctx(ctx.scope, ctx.key, ctx.tags + ((tid, i),), ctx.method_cls)
                for s in h.body:
                    self.visit(s, hctx)
            for s in node.orelse + node.finalbody:
                self.visit(s, ctx)
            return
        if t is ast.Call:
            self.on_call(node, ctx)
        elif t in (ast.BinOp, ast.AugAssign, ast.Compare):
            self.on_arith(node, ctx)
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete):
            self.on_store(node, ctx)
        elif t in (ast.Import, ast.ImportFrom):
            self.on_import(node, ctx)
        elif t is ast.Attribute:
            if node.attr in FRAME_ATTRS:
                self.hit("py.gc_frame", CHEAT, node, f"reads frame internals (.{node.attr})")
        elif t is ast.Subscript:
            if isinstance(node.ctx, ast.Load) and self.qual_of(node.value, ctx.scope) == "os.environ":
                self.hit("py.file_access", EVIDENCE, node, "reads the environment")
        elif t is ast.Constant:
            if isinstance(node.value, str) and id(node) not in self.docstrings:
                self.on_string(node)
        elif t in (ast.List, ast.Tuple):
            words = {_const_str(e) for e in node.elts}
            if words & {"pip", "pip3"} and "install" in words:
                self.hit("py.pip_install", CHEAT, node, "runs pip install")
        for child in ast.iter_child_nodes(node):
            self.visit(child, ctx)

    def visit_function(self, fn, ctx):
        is_lambda = isinstance(fn, ast.Lambda)
        if not is_lambda:
            for d in fn.decorator_list:
                self.visit(d, ctx)
        for d in [*fn.args.defaults, *[x for x in fn.args.kw_defaults if x is not None]]:
            self.visit(d, ctx)
        key = id(fn)
        self.funcs[key] = fn
        self.events.setdefault(key, [])
        self.edges.setdefault(key, set())
        if ctx.key != MODULE_KEY and ctx.method_cls is None:
            self.edges[ctx.key].add(key)
        scope = self.build_scope(fn, ctx.scope, None if is_lambda else ctx.method_cls)
        inner = _Ctx(scope, key)
        if is_lambda:
            self.visit(fn.body, inner)
            return
        if fn.name in ("__torch_function__", "__torch_dispatch__"):
            self.hit("py.lazy_tensor", CHEAT, fn, f"defines {fn.name}, which can defer or fake results")
        for d in fn.decorator_list:
            if self.qual_of(d.func if isinstance(d, ast.Call) else d, ctx.scope) == "torch.compile":
                self.event(inner, "compute", d, "uses torch.compile, so torch generates the kernels", CHEAT)
        for stmt in fn.body:
            self.visit(stmt, inner)

    def event(self, ctx, kind, node, message="", severity=CHEAT, target=None):
        self.events[ctx.key].append((kind, node, message, severity, ctx.tags, target))
        if target is not None:
            self.edges.setdefault(ctx.key, set()).add(target)

    # ------------------------------------------------------------ rules
    def on_class(self, node, ctx):
        for b in node.bases:
            q = self.qual_of(b, ctx.scope)
            if q in TENSOR_BASES:
                self.hit("py.lazy_tensor", CHEAT, node, f"subclasses {q}")

    def on_import(self, node, ctx):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            mod = node.module or ""
            names = [mod] + [f"{mod}.{a.name}" for a in node.names if a.name != "*"] if not node.level else []
        for name in names:
            self.imports.append((name, node))
            for prefixes, rule, severity, message in IMPORT_RULES:
                if _matches(name, prefixes):
                    self.hit(rule, severity, node, f"{message} ({name})")
                    break

    def on_string(self, node):
        s = node.value
        if PROC_RE.search(s):
            self.hit("py.file_access", CHEAT, node, "names /proc or /dev memory files")
        if PIP_RE.search(s):
            self.hit("py.pip_install", CHEAT, node, "runs a package installer")
        if len(s) < 256:
            m = PYFILE_RE.search(s.strip())
            if m:
                self.py_files.append((m.group(1), node))
            if s.strip().endswith(".pth") or s.strip() in ("sitecustomize", "usercustomize"):
                self.hit("py.shadow_import", CHEAT, node, "writes an import hook file")

    def on_call(self, call, ctx):
        scope = ctx.scope
        f = call.func
        q = self.qual_of(f, scope)
        if q is not None:
            self.call_rules(q, call, ctx)
        if isinstance(f, ast.Attribute):
            if f.attr in ("_make_subclass", "_make_wrapper_subclass"):
                self.hit("py.lazy_tensor", CHEAT, call, f"creates a tensor subclass instance ({f.attr})")
            if (isinstance(f.value, ast.Attribute) and f.value.attr in ("__globals__", "__dict__", "__code__")
                    and f.attr in MUTATORS and (f.value.attr != "__dict__"
                                                or self.is_protected(self.resolve(f.value.value, scope)))):
                self.hit("py.monkeypatch", CHEAT, call, f"mutates {f.value.attr}")
            base = self.resolve(f.value, scope)
            if base == PATH or (base is not None and base[0] == "pathattr"):
                if f.attr in ("read_text", "read_bytes", "write_text", "write_bytes", "open", "unlink", "mkdir",
                              "rmdir", "touch", "rename", "replace", "symlink_to", "hardlink_to", "chmod",
                              "iterdir", "glob", "rglob"):
                    self.hit("py.file_access", CHEAT, call, f"accesses files (Path.{f.attr})")
                    self.note_py_file(call)
                elif f.attr in ("exists", "is_file", "is_dir", "stat"):
                    self.hit("py.file_access", EVIDENCE, call, f"reads file system metadata (Path.{f.attr})")
        if q in EXT_LOADERS or (q or "").endswith(("cpp_extension.load_inline", "cpp_extension.load")):
            self.builds_extension = True
        for kind, message, severity, target in self.call_events(call, scope):
            self.event(ctx, kind, call, message, severity, target)
        for a in [*call.args, *[kw.value for kw in call.keywords]]:  # map(torch.relu, xs), reduce(operator.matmul..)
            aq = self.qual_of(a, scope) if isinstance(a, (ast.Name, ast.Attribute)) else None
            if aq and ((_torch_compute(aq) and aq.split(".")[-1] not in TORCH_CONSTANTS) or aq in MATMUL_OPERATORS):
                self.event(ctx, "compute", a, f"passes {aq} as a function", CHEAT)

    def note_py_file(self, call):
        for a in call.args:
            s = _const_str(a)
            if s and PYFILE_RE.search(s):
                self.py_files.append((PYFILE_RE.search(s).group(1), a))

    def call_rules(self, q, call, ctx):
        args = call.args
        if q in ("builtins.setattr", "builtins.delattr", "builtins.object.__setattr__", "builtins.type.__setattr__"):
            target = self.resolve(args[0], ctx.scope) if args else None
            name = _const_str(args[1]) if len(args) > 1 else None
            if self.is_protected(target) or target == REF or (name or "") in CODE_ATTRS:
                self.hit("py.monkeypatch", CHEAT, call, f"{q.split('.')[-1]} on a protected object")
            elif name in LAZY_ATTRS and (target is None or target[0] != "self"):
                self.hit("py.lazy_tensor", CHEAT, call, f"overrides {name} on an instance")
            return
        if q in ("builtins.__import__", "importlib.import_module", "importlib.__import__"):
            if not args or _const_str(args[0]) is None:
                self.hit("py.dynamic_code", CHEAT, call, "imports a module whose name is computed")
            return
        if q in ("os.putenv", "os.environ.setdefault", "os.environ.__setitem__"):
            self.env_write(call, _const_str(args[0]) if args else None)
            return
        if q in ("builtins.open", "io.open", "os.open"):
            self.note_py_file(call)
        if q == "torch.set_float32_matmul_precision" and _const_str(args[0] if args else None) != "highest":
            self.hit("py.dtype_cast", EVIDENCE, call, "allows TF32/bf16 matmul precision")
        if q == "builtins.getattr" and len(args) >= 2 and _const_str(args[1]) is None:
            if self.qual_of(args[0], ctx.scope) and self.qual_of(args[0], ctx.scope).startswith("torch"):
                self.event(ctx, "compute", call, "looks up a torch function by a computed name", EVIDENCE)
        for prefixes, rule, severity, message in CALL_RULES:
            if _matches(q, prefixes):
                if not (rule == "py.file_access" and q.startswith("shutil.which")):
                    self.hit(rule, severity, call, f"{message} ({q})")
                return

    def env_write(self, node, key):
        if key in BUILD_ENV:
            self.hit("py.file_access", EVIDENCE, node, f"sets build variable {key}")
        else:
            self.hit("py.file_access", CHEAT, node, f"changes the environment ({key or 'computed name'})")

    @staticmethod
    def is_protected(kind):
        return kind is not None and kind[0] == "qual" and kind[1].split(".")[0] in PROTECTED_ROOTS

    def on_store(self, node, ctx):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.Delete):
            targets = node.targets
        else:
            targets = [node.target]
        for t in targets:
            self.check_store(t, node, ctx)

    def check_store(self, t, stmt, ctx):
        scope = ctx.scope
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.check_store(e, stmt, ctx)
        elif isinstance(t, ast.Starred):
            self.check_store(t.value, stmt, ctx)
        elif isinstance(t, ast.Name):
            if t.id == "__builtins__":
                self.hit("py.monkeypatch", CHEAT, t, "rebinds __builtins__")
            elif t.id == "ModelNew" and ctx.key == MODULE_KEY and self.resolve(getattr(stmt, "value", None),
                                                                               scope) == REF:
                self.hit("py.reference_model", CHEAT, t, "ModelNew is the reference Model")
        elif isinstance(t, ast.Attribute):
            base = self.resolve(t.value, scope)
            q = f"{base[1]}.{t.attr}" if base is not None and base[0] == "qual" else None
            if q is not None and q.startswith("torch.backends."):
                if "tf32" in t.attr or "reduced_precision" in t.attr:
                    self.hit("py.dtype_cast", EVIDENCE, t, f"sets {q} (lower matmul precision)")
                else:
                    self.hit("py.torch_config", EVIDENCE, t, f"sets {q}")
            elif q is not None and q.startswith("sys.path"):
                self.hit("py.shadow_import", CHEAT, t, "rebinds sys.path")
            elif self.is_protected(base):
                self.hit("py.monkeypatch", CHEAT, t, f"assigns {q}")
            elif base == REF or (base is not None and base[0] in ("ext", "extfn")):
                what = "the reference Model" if base == REF else "the compiled extension"
                self.hit("py.monkeypatch", CHEAT, t, f"replaces an attribute of {what}")
            elif t.attr in CODE_ATTRS:
                self.hit("py.monkeypatch", CHEAT, t, f"assigns {t.attr}")
            elif t.attr in LAZY_ATTRS:
                self.hit("py.lazy_tensor", CHEAT, t, f"overrides {t.attr} on an instance")
        elif isinstance(t, ast.Subscript):
            q = self.qual_of(t.value, scope)
            if q == "sys.modules":
                self.hit("py.monkeypatch", CHEAT, t, "writes sys.modules")
            elif q == "os.environ":
                self.env_write(t, _const_str(t.slice))
            elif q is not None and q.startswith("sys.path"):
                self.hit("py.shadow_import", CHEAT, t, "writes sys.path")
            elif isinstance(t.value, ast.Attribute) and t.value.attr in ("__globals__", "__builtins__", "__dict__") \
                    and (t.value.attr != "__dict__" or self.is_protected(self.resolve(t.value.value, scope))):
                self.hit("py.monkeypatch", CHEAT, t, f"writes {t.value.attr}")
            elif isinstance(t.value, ast.Name) and t.value.id == "__builtins__":
                self.hit("py.monkeypatch", CHEAT, t, "writes __builtins__")

    def on_arith(self, node, ctx):
        scope = ctx.scope
        if isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return
            operands = [node.left, *node.comparators]
            if any(self.resolve(x, scope) == TENSOR for x in operands):
                self.event(ctx, "arith", node, "compares tensors with a Python operator", EVIDENCE)
            return
        if isinstance(node.op, ast.MatMult):
            self.event(ctx, "compute", node, "uses the @ operator (a torch matmul)", CHEAT)
            return
        left = node.target if isinstance(node, ast.AugAssign) else node.left
        kinds = (self.resolve(left, scope), self.resolve(node.right if isinstance(node, ast.BinOp) else node.value,
                                                         scope))
        if TENSOR in kinds and STR not in kinds:
            op = type(node.op).__name__
            self.event(ctx, "arith", node, f"tensor arithmetic with a Python operator ({op})", EVIDENCE)

    def call_events(self, call, scope):
        """(kind, message, severity, follow target) for one call: compute, ext, ref, cast or follow."""
        f = call.func
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
                and f.value.func.id == "super" and self.is_builtin("super", scope)):
            if scope.cls is None:
                return []
            return self.callee_events(self.base_member(scope.cls, f.attr), call, scope, f"super().{f.attr}")
        k = self.resolve(f, scope)
        if k is None or k is UNKNOWN:
            if isinstance(f, ast.Attribute) and self.resolve(f.value, scope) in (None, UNKNOWN):
                return self.method_events(f.attr, call, scope, known_tensor=False)
            return []
        return self.callee_events(k, call, scope, ast.unparse(f)[:80])

    def callee_events(self, k, call, scope, label, depth=0):
        if k is None or depth > 8:
            return []
        kind = k[0]
        if kind == "qual":
            return self.qual_events(k[1], call, scope)
        if kind == "layer":
            name = k[1].split(".")[-1]
            if name in NOOP_LAYERS:
                return []
            if name in DROPOUT_LAYERS:
                return [("compute", f"calls torch layer {name} ({label})", EVIDENCE, None)]
            return [("compute", f"calls torch layer {name} ({label})", CHEAT, None)]
        if kind == "container":
            out = []
            for e in k[1]:
                out += self.callee_events(e, call, scope, label, depth + 1)
            return out
        if kind == "func":
            return [("follow", "", CHEAT, id(k[1]))]
        if kind == "inst":
            m = self.class_member(k[1], "forward") or self.class_member(k[1], "__call__")
            return self.callee_events(m, call, scope, label, depth + 1)
        if kind == "ref":
            return [("ref", f"runs the reference Model ({label})", CHEAT, None)]
        if kind == "compiled":
            return [("compute", f"calls a function compiled by {k[1]} ({label})", CHEAT, None)]
        if kind == "extfn":
            return [("ext", "", EVIDENCE, None)]
        if kind == "tmethod":
            return self.method_events(k[1], call, scope, known_tensor=True)
        return []

    def qual_events(self, p, call, scope):
        parts = p.split(".")
        if parts[:2] == ["torch", "ops"] and len(parts) >= 4 and parts[2] not in ATEN_OP_NS:
            return [("ext", "", EVIDENCE, None)]
        if _torch_compute(p):
            return [("compute", f"calls {p}", CHEAT, None)]
        if p in MATMUL_OPERATORS:
            return [("compute", f"calls {p} (a torch matmul on tensors)", CHEAT, None)]
        if parts[0] == "operator" and parts[-1] in ARITH_OPERATORS:
            return [("arith", f"calls {p}", EVIDENCE, None)]
        if p in AUTOCAST:
            return [("cast", f"{p} lowers precision", EVIDENCE, None)]
        if parts[:2] == ["torch", "Tensor"] and parts[-1] in ("half", "bfloat16"):
            return [("cast", f"{p} lowers precision", EVIDENCE, None)]
        if parts[-1] == "Model":
            return [("ref", f"runs the reference Model ({p})", CHEAT, None)]
        return []

    def method_events(self, name, call, scope, known_tensor):
        if name in ("half", "bfloat16"):
            return [("cast", f".{name}() lowers precision", EVIDENCE, None)]
        if name in ("to", "type"):
            for a in [*call.args, *[kw.value for kw in call.keywords]]:
                q = self.qual_of(a, scope)
                s = _const_str(a) or ""
                if q in HALF_DTYPES or "Half" in s or "BFloat16" in s or s in ("float16", "bfloat16"):
                    return [("cast", f".{name}() to a half/bfloat16 dtype lowers precision", EVIDENCE, None)]
            return []
        if _is_plumbing(name) or name not in TENSOR_COMPUTE_METHODS:
            return []
        if name in AMBIGUOUS_METHODS and not known_tensor:
            return []
        return [("compute", f"calls tensor method .{name}()", CHEAT, None)]

    # ------------------------------------------------------------ whole-module conclusions
    def reach(self, roots):
        seen, stack = set(), list(roots)
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            stack.extend(self.edges.get(k, ()))
        return seen

    def summary(self, key, want, memo, active=None):
        """Whether function `key` (or what it reaches) has an event `want` ("ext" or "compute")."""
        if key in memo:
            return memo[key]
        active = active or set()
        if key in active:
            return False
        active.add(key)
        found = False
        for kind, _, _, severity, _, _ in self.events.get(key, []):
            if (want == "ext" and kind == "ext") or (want == "compute" and (
                    (kind == "compute" and severity == CHEAT) or kind == "ref")):
                found = True
                break
        if not found:
            found = any(self.summary(t, want, memo, active) for t in self.edges.get(key, ()))
        active.discard(key)
        memo[key] = found
        return found

    def find_model_new(self):
        k = self.module_syms.get("ModelNew")
        if k is not None and k[0] == "class":
            return k[1]
        return None

    def finish(self):
        model = self.find_model_new()
        forward_key = None
        roots = [MODULE_KEY]
        if model is not None:
            seen = set()
            stack = [model]
            while stack:
                cls = stack.pop()
                if id(cls) in seen:
                    continue
                seen.add(id(cls))
                info = self.class_info(cls)
                roots += [id(m) for m in info.methods.values()]
                for b in info.bases:
                    if b == REF:
                        self.hit("py.reference_model", CHEAT, cls, "inherits from the reference Model")
                    elif b is not None and b[0] == "class":
                        stack.append(b[1])
            fwd = self.class_member(model, "forward")
            if fwd is not None and fwd[0] == "func":
                forward_key = id(fwd[1])
        hot = self.reach([forward_key]) if forward_key is not None else set()
        live = self.reach(roots)
        ext_memo, comp_memo = {}, {}
        for key in live:
            where = ""
            if key in hot and key != forward_key and key in self.funcs:
                where = f" (in {getattr(self.funcs[key], 'name', '<lambda>')}, reached from ModelNew.forward)"
            for kind, node, message, severity, _, _ in self.events.get(key, []):
                if kind == "ref":
                    self.hit("py.reference_model", CHEAT, node, message)
                elif kind == "cast":
                    self.hit("py.dtype_cast", EVIDENCE, node, message)
                elif key in hot and kind == "compute":
                    self.hit("py.torch_compute", severity, node, message + where)
                elif key in hot and kind == "arith":
                    self.hit("py.tensor_arith", EVIDENCE, node, message + where)
            for tr in self.tries.get(key, []):
                self.check_fallback(key, tr, ext_memo, comp_memo)
        for stem, node in self.py_files:
            if stem in SHADOWABLE:
                self.hit("py.shadow_import", CHEAT, node, f"names {stem}.py, which shadows a module")
            for name, imp in self.imports:
                if name.split(".")[0] == stem:
                    self.hit("py.shadow_import", CHEAT, imp, f"imports {stem}, a file the candidate names")
        if self.fmt != "kernelbench":
            return
        anchor = model if model is not None else ast.Module(body=[], type_ignores=[])
        if not self.builds_extension:
            self.hit("py.no_extension", CHEAT, anchor, "no custom kernel is built (no load_inline/load/.so)")
        elif forward_key is not None and not self.summary(forward_key, "ext", ext_memo):
            self.hit("py.unused_extension", EVIDENCE, anchor, "a custom kernel is built but forward never calls it")

    def check_fallback(self, key, tr, ext_memo, comp_memo):
        tid = id(tr)
        body_ext = False
        handler = None
        for kind, _, _, severity, tags, target in self.events.get(key, []):
            for tag_id, part in tags:
                if tag_id != tid:
                    continue
                if part == "body":
                    body_ext = body_ext or kind == "ext" or (
                        kind == "follow" and self.summary(target, "ext", ext_memo))
                elif handler is None and ((kind == "compute" and severity == CHEAT) or kind == "ref" or (
                        kind == "follow" and self.summary(target, "compute", comp_memo))):
                    handler = tr.handlers[part]
        if body_ext and handler is not None:
            self.hit("py.fallback", CHEAT, handler,
                     "the try body calls the custom kernel and the except handler falls back to torch")


def check_source(text, fmt="kernelbench", filename="<candidate>"):
    """Returns the report dict for Python source `text`."""
    report = {"version": VERSION, "hits": [], "parse_error": None}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        report["parse_error"] = f"SyntaxError: {e.msg} (line {e.lineno})"
        return report
    except (ValueError, RecursionError, MemoryError) as e:
        report["parse_error"] = f"{type(e).__name__}: {e}"
        return report
    try:
        tree = _StripMain().visit(tree)
        analyzer = _Analyzer(tree, text.splitlines(), fmt)
        analyzer.run()
    except RecursionError:
        report["parse_error"] = "RecursionError: source too deeply nested to analyse"
        return report
    report["hits"] = sorted(analyzer.hits.values(), key=lambda h: (h["line"], h["col"], h["rule"]))
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m anvil_py.static_check", description=__doc__.split("\n")[0])
    parser.add_argument("--candidate", required=True, help="the candidate's Python file")
    parser.add_argument("--format", default="kernelbench", choices=["kernelbench", "native"])
    args = parser.parse_args(argv)
    try:
        with open(args.candidate, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        print(f"static_check: cannot read {args.candidate}: {e}", file=sys.stderr)
        return 2
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        report = {"version": VERSION, "hits": [], "parse_error": f"the file is not UTF-8: {e}"}
    else:
        report = check_source(text, args.format, args.candidate)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
