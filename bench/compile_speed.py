"""Compile speed of the kernelbench format: anvil's build path vs torch's load_inline on the same sources.

For each of --samples fresh extension sources (a unique token in each, so no cache holds them) it measures
  - anvil, cold: `anvil eval` compiling the candidate (its artifact not cached; the precompiled torch header
    warm once the first sample has built it — that first build is reported on its own),
  - anvil, warm: the same candidate again (artifact cached),
  - load_inline: torch.utils.cpp_extension.load_inline on the same source in a fresh build folder, timed in a
    process that has already imported torch (the import is not counted),
  - anvil, native format: a C++ candidate of the same kernel (`--native`).
Prints a markdown table and writes the raw numbers as JSON lines (--out).

  python3 bench/compile_speed.py --anvil build/anvil --samples 3 --backend cpu --out compile_speed.jsonl

With --backend cuda the extension is a CUDA one, written as model-written KernelBench candidates usually are (the
.cu file includes <torch/extension.h>; a C++ declaration in cpp_sources), and the table adds how anvil's nvcc built
it (`torch_headers`: slim, fallback or full; include/anvil/slim_torch/README.md).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RELU = ROOT / "examples" / "tasks" / "relu.py"

CPP = r"""
#include <torch/extension.h>
// TOKEN
torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
"""

CU = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
// TOKEN
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
  auto out = torch::empty_like(x);
  int64_t n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}
"""

DECL = "torch::Tensor relu_forward(torch::Tensor x);"

CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""{cpp}"""
_ext = load_inline(name="speed_probe", cpp_sources=[_SOURCE], functions=["relu_forward"])
'''

CUDA_CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""{cu}"""
_ext = load_inline(name="speed_probe", cpp_sources=["{decl}"], cuda_sources=[_SOURCE], functions=["relu_forward"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
'''

NATIVE = """
#include <cstdint>
#include "anvil/native.h"
// TOKEN
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
"""

LOAD_INLINE = r"""
import sys, time, torch
from torch.utils.cpp_extension import load_inline
src, build, cuda = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3] == "cuda"
t = time.perf_counter()
if cuda:
    load_inline(name="speed_probe", cpp_sources=[sys.argv[4]], cuda_sources=[src], functions=["relu_forward"],
                build_directory=build)
else:
    load_inline(name="speed_probe", cpp_sources=[src], functions=["relu_forward"], build_directory=build)
print(time.perf_counter() - t)
"""


def anvil_compile(anvil, candidate, cache, backend):
    proc = subprocess.run([anvil, "eval", "--json", "-q", "--no-perf", "--backend", backend, "--task", str(RELU),
                           "--candidate", str(candidate), "--cache-dir", cache], capture_output=True, text=True)
    v = json.loads(proc.stdout)
    c = v["gates"]["compile"]
    # The compile stage's wall time: the compilers, or for a cached artifact the hashing and the lookup.
    return {"status": v["status"], "seconds": v["stage_seconds"]["compile"], "cached": c["cached"],
            "pch": c.get("pch", ""), "phases": c.get("phase_seconds", {}), "headers": c.get("torch_headers", "")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anvil", default=str(ROOT / "build" / "anvil"))
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--python", default=os.environ.get("ANVIL_PYTHON", sys.executable))
    ap.add_argument("--cache-dir", help="anvil's cache (default: a fresh one, so the PCH is built once here)")
    ap.add_argument("--out")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="anvil-compile-speed-"))
    cache = args.cache_dir or str(work / "cache")
    rows = []
    for i in range(args.samples):
        token = uuid.uuid4().hex
        cuda = args.backend == "cuda"
        cpp = (CU if cuda else CPP).replace("TOKEN", token)
        kb = work / f"speed_{i}_kb.py"
        kb.write_text(CUDA_CANDIDATE.format(cu=cpp, decl=DECL) if cuda else CANDIDATE.format(cpp=cpp))
        native = work / f"speed_{i}_native.cpp"
        native.write_text(NATIVE.replace("TOKEN", token))
        src = work / f"speed_{i}.cpp"
        src.write_text(cpp)
        cold = anvil_compile(args.anvil, kb, cache, args.backend)
        warm = anvil_compile(args.anvil, kb, cache, args.backend)
        nat = anvil_compile(args.anvil, native, cache, args.backend)
        build = work / f"load_inline_{i}"
        build.mkdir()
        # anvil builds for ANVIL_CUDA_ARCH (90); load_inline detects the GPU's, and needs it named where none is.
        env = dict(os.environ)
        sm = os.environ.get("ANVIL_CUDA_ARCH", "90")
        env.setdefault("TORCH_CUDA_ARCH_LIST", f"{sm[:-1]}.{sm[-1]}")
        li = subprocess.run([args.python, "-c", LOAD_INLINE, str(src), str(build), args.backend, DECL],
                            capture_output=True, text=True, env=env)
        if li.returncode != 0:
            sys.exit(f"load_inline failed:\n{li.stderr[-3000:]}")
        row = {"sample": i, "anvil_cold_s": cold["seconds"], "anvil_cold_phases": cold["phases"],
               "pch": cold["pch"], "torch_headers": cold["headers"], "anvil_warm_s": warm["seconds"], "warm_cached": warm["cached"],
               "native_s": nat["seconds"], "native_cached": nat["cached"], "load_inline_s": float(li.stdout.strip().splitlines()[-1]),
               "status": cold["status"]}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print("| sample | PCH | headers | anvil cold s (cxx / nvcc / pch) | anvil warm | load_inline s | ratio | native s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ph = r["anvil_cold_phases"]
        print(f"| {r['sample']} | {r['pch'] or '-'} | {r['torch_headers'] or '-'} | {r['anvil_cold_s']:.2f} "
              f"({ph.get('cxx', 0):.2f} / {ph.get('nvcc', 0):.2f} / {ph.get('pch', 0):.2f}) | "
              f"{r['anvil_warm_s'] * 1000:.1f} ms | {r['load_inline_s']:.2f} | "
              f"{r['load_inline_s'] / r['anvil_cold_s']:.2f}x | {r['native_s']:.2f} |")
    later = [r for r in rows if r["pch"] == "cached"]
    if later:
        med = statistics.median(r["load_inline_s"] / r["anvil_cold_s"] for r in later)
        print(f"\nWith the PCH already built: median load_inline / anvil cold = {med:.2f}x over {len(later)} samples")


if __name__ == "__main__":
    main()
