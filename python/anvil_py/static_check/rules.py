"""The rules: ids and what they mean, severities, and the tables that map names to rule hits.

CALL_RULES and IMPORT_RULES map dotted names (resolved callees, imported modules) to a rule; the name sets
below them say which roots are protected from monkeypatching, which attributes are code or lazy-tensor hooks,
and which environment variables a build may set. What counts as torch compute is in torch_names.py.
"""

import re

from .torch_names import words

VERSION = 1
CHEAT = "cheat"
EVIDENCE = "evidence"

RULES = {
    "py.torch_compute": "torch compute (outside the aten plumbing allowlist) reached from ModelNew.forward",
    "py.host_compute": "tensor data handed to Python or numpy in forward (.numpy(), .tolist(), np.asarray, raw "
                       "memory through ctypes/DLPack/array interfaces/storages, repr, .apply_): the work is done "
                       "on the host instead of a kernel",
    "py.tensor_arith": "Python arithmetic on tensors in forward (evidence: types are not known statically)",
    "py.reference_model": "the reference Model is called, subclassed or inherited from",
    "py.fallback": "try calls the custom kernel and its except handler computes with torch",
    "py.thread": "threads, thread/process pools, asyncio or fork",
    "py.monkeypatch": "assignment into torch/time/sys/builtins/anvil, code objects, globals or sys.modules",
    "py.dynamic_code": "exec/eval/compile, dynamic imports, unpickling, code objects, getattr of builtins/os/sys/"
                       "importlib/ctypes by a computed name (decoding is evidence)",
    "py.file_access": "file system access or environment writes (reads and build variables are evidence)",
    "py.network": "network modules",
    "py.process": "process control: subprocess, os.system/exec*/kill, signal (sys.exit is evidence)",
    "py.pip_install": "package installation at run time",
    "py.shadow_import": "sys.path changes, import hooks, or writing a .py that shadows an import",
    "py.gc_frame": "gc object scans, frame walking, tracing hooks",
    "py.lazy_tensor": "Tensor subclasses, __torch_function__/__torch_dispatch__, instance method overrides",
    "py.harness_probe": "torch's mode/dispatch machinery that anvil's run-time traces rely on (dispatch and "
                        "function mode stacks, dispatch key guards, DisableTorchFunction, the autograd profiler)",
    "py.stream": "creates a CUDA stream (evidence)",
    "py.dtype_cast": "lowers precision: half/bfloat16 casts, autocast, TF32 (evidence)",
    "py.torch_config": "changes torch.backends settings (evidence)",
    "py.ctypes": "uses ctypes/cffi (evidence)",
    "py.no_extension": "kernelbench format but no custom kernel is built",
    "py.unused_extension": "a custom kernel is built but forward never calls it (evidence)",
}

# Protected module roots, module names a candidate's .py may not shadow, and attributes the rules watch.
PROTECTED_ROOTS = words("""torch time anvil anvil_py builtins sys os gc inspect importlib operator functools math
    random numpy triton threading ctypes types traceback io signal subprocess timeit statistics""")
SHADOWABLE = PROTECTED_ROOTS | words("sitecustomize usercustomize typing site")
CODE_ATTRS = words("__code__ __globals__ __defaults__ __kwdefaults__ __closure__ __builtins__")
LAZY_ATTRS = words("""__class__ __eq__ __ne__ __torch_function__ __torch_dispatch__ __getattr__ __getattribute__
    __bool__ __float__ __array__ __len__ __getitem__""")
MUTATORS = words("update setdefault pop popitem clear __setitem__ __delitem__ replace")
FRAME_ATTRS = words("f_back f_globals f_locals f_builtins tb_frame gi_frame cr_frame ag_frame")
# Environment variables a legitimate build may set (writing them is evidence, any other write is a cheat).
# Thread counts of the candidate's own OpenMP/BLAS pools too (its process alone reads them).
BUILD_ENV = words("""TORCH_CUDA_ARCH_LIST MAX_JOBS CUDA_HOME CUDA_PATH CXX CC TORCH_EXTENSIONS_DIR NVCC_FLAGS
    CFLAGS CXXFLAGS TORCH_USE_CUDA_DSA OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS OMP_PROC_BIND OMP_PLACES
    OMP_SCHEDULE OMP_DYNAMIC KMP_AFFINITY KMP_BLOCKTIME""")

# (prefixes of a resolved callee, rule, severity, message). The first matching row wins.
CALL_RULES = [
    # Locks around a lazy build, thread-local state, the core count: no thread or process starts.
    (("threading.Lock", "threading.RLock", "threading.Event", "threading.Condition", "threading.Semaphore",
      "threading.BoundedSemaphore", "threading.local", "threading.get_ident", "threading.get_native_id",
      "threading.current_thread", "threading.main_thread", "threading.active_count", "multiprocessing.cpu_count",
      "os.cpu_count", "os.sched_getaffinity"), "py.thread", EVIDENCE, "synchronizes or asks about threads"),
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
      "sys.settrace", "sys.setprofile", "sys.addaudithook", "traceback.walk_stack", "traceback.walk_tb",
      "traceback.extract_stack", "traceback.format_stack", "traceback.print_stack", "traceback.StackSummary",
      "linecache", "sys._current_exceptions", "sys.monitoring", "gc.callbacks"),
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
    # The import alone starts nothing (an unused import, a lock): the calls that do are the cheat (CALL_RULES).
    (("_thread", "concurrent.futures", "asyncio", "torch.multiprocessing"), "py.thread", CHEAT,
     "imports a thread/process pool module"),
    (("threading", "multiprocessing"), "py.thread", EVIDENCE, "imports a threading/multiprocessing module"),
    (("subprocess", "signal", "pty"), "py.process", EVIDENCE, "imports a process-control module"),
    (("socket", "urllib", "urllib2", "urllib3", "requests", "http", "httpx", "aiohttp", "ftplib", "smtplib",
      "telnetlib", "xmlrpc", "websocket", "websockets", "paramiko", "socketserver", "torch.hub"),
     "py.network", CHEAT, "imports a network module"),
    (("pip", "ensurepip"), "py.pip_install", CHEAT, "imports pip"),
    (("ctypes", "cffi"), "py.ctypes", EVIDENCE, "imports a foreign-function interface"),
    (("marshal", "runpy", "dill", "cloudpickle"), "py.dynamic_code", EVIDENCE, "imports a code-loading module"),
]
# torch's mode and dispatch machinery: anvil's run-time traces (a TorchDispatchMode, profiler state) rely on it,
# so a candidate has no business naming it. HARNESS_NAMES are names (attributes, imported names, path parts);
# HARNESS_MODULES are dotted prefixes; HARNESS_SUBSTRINGS are searched in short string constants.
HARNESS_NAMES = words("""_python_dispatch _disable_current_modes _pop_mode_temporarily _push_mode _pop_mode
    _get_current_dispatch_mode _get_current_dispatch_mode_stack TorchDispatchMode TorchFunctionMode
    BaseTorchFunctionMode BaseTorchDispatchMode _get_current_function_mode _get_current_function_mode_stack
    _len_torch_dispatch_stack _len_torch_function_stack _is_torch_function_mode_enabled _is_torch_function_enabled
    DisableTorchFunction DisableTorchFunctionSubclass _DisableTorchDispatch _ExcludeDispatchKeyGuard
    _IncludeDispatchKeyGuard _ForceDispatchKeyGuard _PreserveDispatchKeyGuard DispatchKey DispatchKeySet
    _set_dispatch_mode _get_dispatch_mode _unset_dispatch_mode _push_on_torch_function_stack
    _pop_torch_function_stack _get_function_stack_at _push_on_torch_dispatch_stack _pop_torch_dispatch_stack
    _get_dispatch_stack_at _RestorePythonTLSSnapshot _EnablePythonDispatcher _DisablePythonDispatcher
    _profiler_enabled _disabled_torch_function_impl _disabled_torch_dispatch_impl _enable_record_function
    _set_empty_test_observer _has_torch_function _has_torch_function_unary _has_torch_function_variadic
    has_torch_function has_torch_function_unary has_torch_function_variadic _dispatch_get_all_op_names""")
HARNESS_PREFIXES = ("_dispatch_tls_",)
# Also anvil's own worker (its modules, its command line: the prepared task's folder, the timing sets).
HARNESS_MODULES = ("torch.utils._python_dispatch", "torch.autograd.profiler", "torch._C._autograd._profiler",
                   "torch._C._profiler", "anvil_py", "sys.argv", "sys.orig_argv")
# torch.autograd.profiler names that only annotate (a range in a trace); the rest reads or drives profiler state.
PROFILER_ANNOTATIONS = words("record_function emit_nvtx emit_itt")
# Whole names only (an extension called "selu_dispatch_mode", a config string "dispatch_mode=fast" are the
# candidate's own words).
HARNESS_SUBSTRINGS = ("_python_dispatch", "_len_torch_dispatch_stack", "_len_torch_function_stack",
                      "_get_current_dispatch_mode", "_get_current_function_mode", "_is_torch_function_mode_enabled",
                      "DisableTorchFunction", "_DisableTorchDispatch", "DispatchKeySet", "_push_mode", "_pop_mode",
                      "TorchDispatchMode", "TorchFunctionMode", "_dispatch_tls", "_profiler_enabled",
                      "autograd.profiler", "RestorePythonTLSSnapshot", "PythonDispatcher", "disable_current_modes",
                      "anvil_py", "libanvil", "ANVIL_", "_enable_record_function", "has_torch_function", "/proc/")
_HARNESS_STRING_RE = re.compile("(?<![A-Za-z0-9])(" + "|".join(
    re.escape(w) + ("(?![A-Za-z0-9])" if w[-1].isalnum() else "") for w in HARNESS_SUBSTRINGS) + ")")


def harness_name(q):
    """The part of dotted name `q` that names torch's mode/dispatch machinery, or None."""
    if not q:
        return None
    for m in HARNESS_MODULES:
        if q == m or q.startswith(m + "."):
            if m == "torch.autograd.profiler" and q.split(".")[-1] in PROFILER_ANNOTATIONS:
                return None
            return m
    for part in q.split("."):
        if part in HARNESS_NAMES or part.startswith(HARNESS_PREFIXES):
            return part
    return None


def harness_string(s):
    """The distinctive harness name a string constant contains, or None (long strings, e.g. C++ sources, are
    left to the C++ scan)."""
    if len(s) >= 256:
        return None
    m = _HARNESS_STRING_RE.search(s)
    return m.group(1) if m else None


PIP_RE = re.compile(r"\b(pip3?|conda|mamba|uv|ensurepip)\b[^\n]{0,40}\binstall\b|-m\s+ensurepip")
PROC_RE = re.compile(r"/proc/(self|\d+|thread-self)/|/dev/(k?mem)\b")
PYFILE_RE = re.compile(r"(?:^|[/\\])([A-Za-z_]\w*)\.py$")


def matches(q, prefixes):
    return any(q == p or q.startswith(p + ".") for p in prefixes)
