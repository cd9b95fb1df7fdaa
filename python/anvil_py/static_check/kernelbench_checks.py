"""KernelBench's static checker, as policy `kernelbench` applies it (docs/rules.md, "Policies").

KernelBench's `kernel_static_checker.py` scans the candidate's whole text (Python and the CUDA/C++ strings in it)
with regular expressions after cutting each line at its first `#` or `//`. Its strict checks fail a candidate:
  - code bypass: any try/except, and any `pass` statement;
  - a timing function reassigned (torch.cuda.Event.record/elapsed_time, torch.cuda.Event, torch.cuda.synchronize,
    time.perf_counter, time.time);
  - threads: threading, multiprocessing, concurrent.futures and their pools;
  - lazy tensors: Tensor subclasses, `_make_subclass`, `torch.Tensor.__new__`;
  - the backend check: on cuda a CUDA kernel (`__global__`, built through load_inline or cpp_extension, using
    thread indexes or kernel features); anvil's cpu backend asks for a C++ extension built the same way.
Its warnings (torch ops, nn layers, streams, fp16 casts) are not checks here: anvil's own rules see those. Each
check reports its first match, as one hit of severity cheat: rule kb.<check>.
"""

import re

CHEAT = "cheat"

RULES = {
    "kb.code_bypass": "KernelBench's strict check: try/except or a pass statement (a fallback or an inherited "
                      "forward)",
    "kb.timing_patch": "KernelBench's strict check: a timing function reassigned",
    "kb.thread": "KernelBench's strict check: threading, multiprocessing or concurrent futures",
    "kb.lazy_tensor": "KernelBench's strict check: a lazy tensor (Tensor subclass, _make_subclass, "
                      "torch.Tensor.__new__)",
    "kb.backend": "KernelBench's backend check: the candidate builds no kernel of the backend's kind",
}

_BYPASS = [r"\btry\s*:", r"\bexcept\s*:", r"\bexcept\s+\w+", r"\bpass\b"]
_TIMING = [r"torch\.cuda\.Event\.record\s*=", r"torch\.cuda\.Event\.elapsed_time\s*=", r"torch\.cuda\.synchronize\s*=",
           r"torch\.cuda\.Event\s*=", r"time\.perf_counter\s*=", r"time\.time\s*="]
_THREAD = [r"threading\.Thread\s*\(", r"import\s+threading", r"from\s+threading\s+import",
           r"multiprocessing\.(Process|Pool|Manager|Queue|Pipe)", r"import\s+multiprocessing", r"concurrent\.futures",
           r"ThreadPoolExecutor", r"ProcessPoolExecutor"]
_LAZY = [r"_make_subclass", r"class\s+\w+.*\(torch\.Tensor\)", r"class\s+\w+.*\(Tensor\)", r"torch\.Tensor\.__new__"]
_BUILD = ["load_inline", "cpp_extension"]
_CUDA_FEATURES = [r"\bthreadIdx\.", r"\bblockIdx\.", r"\bblockDim\.", r"\bgridDim\.", r"__syncthreads\s*\(",
                  r"__shared__\s+", r"__device__\s+", r"atomicAdd\s*\(", r"atomicMax\s*\(", r"atomicMin\s*\("]


def _uncommented(text):
    """Each line cut at its first '#' and its first '//', as KernelBench does (strings are not spared)."""
    lines = []
    for line in text.split("\n"):
        for mark in ("#", "//"):
            at = line.find(mark)
            if at >= 0:
                line = line[:at]
        lines.append(line)
    return "\n".join(lines)


def _first(code, patterns):
    found = [m for m in (re.search(p, code) for p in patterns) if m]
    return min(found, key=lambda m: m.start()) if found else None


def _hit(rule, code, match, message):
    line = code.count("\n", 0, match.start()) + 1 if match else 0
    col = match.start() - (code.rfind("\n", 0, match.start()) + 1) if match else 0
    excerpt = code.split("\n")[line - 1].strip()[:200] if match else ""
    return {"rule": rule, "severity": CHEAT, "line": line, "col": col, "excerpt": excerpt, "message": message}


def _backend_problem(code, backend):
    if not any(word in code for word in _BUILD):
        return "no load_inline or cpp_extension builds an extension"
    if backend != "cuda":
        return None
    if "__global__" not in code:
        return "no __global__ kernel is defined"
    if not _first(code, _CUDA_FEATURES):
        return "the kernel uses no thread index or kernel feature (threadIdx, blockIdx, __syncthreads, __shared__, ...)"
    return None


def check(text, backend):
    """The hits of KernelBench's strict checks and its backend check on `backend` ("cpu" or "cuda")."""
    code = _uncommented(text)
    hits = []
    for rule, patterns, message in (
            ("kb.code_bypass", _BYPASS, "contains try/except or pass (KernelBench forbids both: a fallback or an "
                                        "inherited forward)"),
            ("kb.timing_patch", _TIMING, "reassigns a timing function"),
            ("kb.thread", _THREAD, "uses threading, multiprocessing or concurrent futures"),
            ("kb.lazy_tensor", _LAZY, "defines or builds a lazy tensor")):
        match = _first(code, patterns)
        if match:
            hits.append(_hit(rule, code, match, message))
    problem = _backend_problem(code, backend)
    if problem:
        hits.append(_hit("kb.backend", code, None, f"not a {backend} kernel by KernelBench's check: {problem}"))
    return hits
