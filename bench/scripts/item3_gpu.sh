#!/bin/bash
# Issue 38, item 3, checks 2 and 3 on the GPU machine (a device call):
#  2. tests/redteam/trivial judged with --backend cuda: the cases as they are (written for the CPU: their kernels
#     read CPU pointers), and CUDA ports of each form written below (same task, same trivial or honest output, on
#     the device), under musacoder (each expects its header's verdict) and, for the trivial ports, kernelbench (no
#     guard: they pass there, as on the CPU).
#  3. a device-memory hog (a process this script starts, holding all but HOG_FREE_MB of the device's memory)
#     while anvil judges an honest candidate (native examples/health/relu.cu and a kernelbench port) on a task of
#     ~1 GiB a trial; the hog held throughout (H1), the hog leaving once the first candidate process on the GPU
#     has ended (H2: the retry, if any, finds it gone), and the same candidate with no hog; then candidates that
#     take the whole device themselves (torch.empty of twice the card, cudaMalloc loops, one huge cudaMalloc),
#     which must get their own failure, never infra_error; last, one such candidate beside an honest one (-j 2).
# Carried (gitignored): .carry/ (the CPU machine's build at a52eb8c and .carry/src, the repo's python/, include/,
# examples/, tests/ of that commit). Everything else is written below into $WORK.
#   run(command="bash bench/scripts/item3_gpu.sh", carry=[".carry"], timeout_s=600)
set -u
cd "$(dirname "$0")/../.."
export ANVIL_SOURCE_DIR=$PWD/.carry/src PYTHONPATH=$PWD/.carry/src/python PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/bench-out}
WORK=${WORK:-/tmp/item3}
HOG_FREE_MB=${HOG_FREE_MB:-1024}
V=$WORK/verdicts  # verdicts and logs, archived into $OUT/item3.tgz at the end (at most 8 files come back)
mkdir -p "$OUT" "$WORK/ports" "$WORK/hog" "$WORK/whole" "$V"
exec > >(tee "$OUT/item3.log") 2>&1
t0=$(date +%s)
S=$ANVIL_SOURCE_DIR
TRIV=$S/tests/redteam/trivial
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv,noheader; nproc
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
A=${ANVIL_BIN:-$PWD/.carry/anvil}
"$A" --version || exit 1

# ---------- the files ----------
# One CUDA extension for every kernelbench-format candidate below (byte-identical sources: one build).
cat > "$WORK/family.py" <<'EOF'
_CPP_SOURCE = r"""
torch::Tensor cube_add(torch::Tensor x);
torch::Tensor copy_input(torch::Tensor x);
torch::Tensor row_add(torch::Tensor bias, torch::Tensor x);
torch::Tensor bias_rows(torch::Tensor bias, torch::Tensor x);
torch::Tensor relu_fwd(torch::Tensor x);
int64_t grab_all();
"""

_CUDA_SOURCE = r"""
#include <torch/types.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace {

constexpr int kThreads = 256;

unsigned Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  if (b > 65535) b = 65535;
  return static_cast<unsigned>(b);
}

#define GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void CubeAddKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  GRID_STRIDE(i, n) { const float a = x[i]; y[i] = a + 1e-3f * a * a * a; }
}
__global__ void CopyKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = x[i]; }
}
__global__ void ReluKernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = fmaxf(x[i], 0.0f); }
}
__global__ void RowAddKernel(const float* __restrict__ b, const float* __restrict__ x, float* __restrict__ y,
                             int64_t cols, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = b[i % cols] + 1e-6f * x[i]; }
}
__global__ void BiasRowsKernel(const float* __restrict__ b, float* __restrict__ y, int64_t cols, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = b[i % cols]; }
}

void Check(const torch::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(),
              "expected a contiguous float32 CUDA tensor");
}
void Launched() {
  const cudaError_t e = cudaGetLastError();
  TORCH_CHECK(e == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(e));
}

std::vector<void*> g_hoard;

}  // namespace

torch::Tensor cube_add(torch::Tensor x) {
  Check(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) CubeAddKernel<<<Blocks(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  Launched();
  return y;
}

torch::Tensor copy_input(torch::Tensor x) {
  Check(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) CopyKernel<<<Blocks(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  Launched();
  return y;
}

torch::Tensor relu_fwd(torch::Tensor x) {
  Check(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) ReluKernel<<<Blocks(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  Launched();
  return y;
}

torch::Tensor row_add(torch::Tensor bias, torch::Tensor x) {
  Check(bias);
  Check(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel(), cols = bias.numel();
  TORCH_CHECK(cols > 0 && n % cols == 0, "bias does not divide the input");
  if (n > 0) RowAddKernel<<<Blocks(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      bias.data_ptr<float>(), x.data_ptr<float>(), y.data_ptr<float>(), cols, n);
  Launched();
  return y;
}

torch::Tensor bias_rows(torch::Tensor bias, torch::Tensor x) {
  Check(bias);
  Check(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel(), cols = bias.numel();
  TORCH_CHECK(cols > 0 && n % cols == 0, "bias does not divide the input");
  if (n > 0) BiasRowsKernel<<<Blocks(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      bias.data_ptr<float>(), y.data_ptr<float>(), cols, n);
  Launched();
  return y;
}

// Takes every byte of the device it can, 256 MiB at a time, and keeps it: the bytes taken.
int64_t grab_all() {
  int64_t taken = 0;
  for (;;) {
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(256) << 20) != cudaSuccess) {
      (void)cudaGetLastError();
      break;
    }
    g_hoard.push_back(p);
    taken += static_cast<int64_t>(256) << 20;
  }
  return taken;
}
"""

_ext = load_inline(
    name="anvil_item3_cuda_family",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["cube_add", "copy_input", "row_add", "bias_rows", "relu_fwd", "grab_all"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)
EOF
kb() {  # kb FILE EXPECT TASK ABOUT  (ModelNew from stdin)
  { printf '# anvil-expect: %s\n# anvil-task: %s\n# anvil-about: %s\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n' "$2" "$3" "$4"
    cat "$WORK/family.py"; echo; echo; cat; } > "$1"
}
kb "$WORK/ports/input_copy_cuda_kb.py" wrong_answer near_identity.py "CUDA port of input_copy_kb.py: returns its input" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.copy_input(x.contiguous())
EOF
kb "$WORK/ports/input_honest_cuda_kb.py" pass near_identity.py "CUDA port of input_honest_kb.py: x + 1e-3 x^3" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.cube_add(x.contiguous())
EOF
kb "$WORK/ports/row_broadcast_cuda_kb.py" wrong_answer row_bias.py "CUDA port of row_broadcast_kb.py: the bias in every row" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1024))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.bias_rows(self.bias, x.contiguous())
EOF
kb "$WORK/ports/row_honest_cuda_kb.py" pass row_bias.py "CUDA port of row_honest_kb.py: bias + 1e-6 x" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1024))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_add(self.bias, x.contiguous())
EOF
kb "$WORK/hog/relu_honest_cuda_kb.py" pass big_relu.py "honest CUDA ReLU; its extension allocates the output" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_fwd(x.contiguous())
EOF
kb "$WORK/whole/w1_empty_init_kb.py" runtime_error relu.py "torch.empty of twice the card's memory in __init__" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        total = torch.cuda.get_device_properties(0).total_memory
        self.hoard = torch.empty(2 * total, dtype=torch.uint8, device="cuda")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_fwd(x.contiguous())
EOF
kb "$WORK/whole/w2_empty_forward_kb.py" runtime_error relu.py "torch.empty of twice the card's memory in the first forward" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.hoard = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.hoard is None:
            total = torch.cuda.get_device_properties(x.device).total_memory
            self.hoard = torch.empty(2 * total, dtype=torch.uint8, device=x.device)
        return _ext.relu_fwd(x.contiguous())
EOF
kb "$WORK/whole/w3_malloc_loop_kb.py" runtime_error relu.py "cudaMalloc 256 MiB at a time until the device is full, kept; then a ReLU whose output allocation fails" <<'EOF'
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _ext.grab_all()
        return _ext.relu_fwd(x.contiguous())
EOF
native_head='#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "anvil/native.h"
'
cat > "$WORK/ports/zeros_cuda_native.cu" <<EOF
// anvil-expect: wrong_answer
// anvil-task: wide_softmax.py
// anvil-about: CUDA port of zeros_native.cpp: writes zeros on the device
$native_head
ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 1 || n_out != 1 || out[0].dtype != ANVIL_FLOAT32) return 1;
  const int64_t n = anvil_numel(&out[0]);
  return cudaMemsetAsync(out[0].data, 0, static_cast<size_t>(n) * sizeof(float), static_cast<cudaStream_t>(stream)) ==
                 cudaSuccess ? 0 : 2;
}
EOF
cat > "$WORK/ports/constant_cuda_native.cu" <<EOF
// anvil-expect: wrong_answer
// anvil-task: wide_softmax.py
// anvil-about: CUDA port of constant_native.cpp: writes 1/columns everywhere on the device
$native_head
__global__ void Fill(float* y, float v, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) y[i] = v;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 1 || n_out != 1 || out[0].dtype != ANVIL_FLOAT32 || out[0].ndim != 2) return 1;
  const int64_t n = anvil_numel(&out[0]);
  Fill<<<256, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(out[0].data),
                                                          1.0f / static_cast<float>(out[0].shape[1]), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
EOF
cat > "$WORK/ports/softmax_honest_cuda_native.cu" <<EOF
// anvil-expect: pass
// anvil-task: wide_softmax.py
// anvil-about: the honest twin on the device: a row softmax, one block per row (max, sum, then normalize)
$native_head
constexpr int kT = 256;

__global__ void SoftmaxRows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  __shared__ float red[kT];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float m = -3.402823466e38f;
  for (int64_t c = threadIdx.x; c < cols; c += kT) m = fmaxf(m, xr[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = kT / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kT) sum += expf(xr[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kT / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  sum = red[0];
  for (int64_t c = threadIdx.x; c < cols; c += kT) yr[c] = expf(xr[c] - m) / sum;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != ANVIL_FLOAT32 || in[0].ndim != 2) return 1;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  if (rows == 0) return 0;
  SoftmaxRows<<<static_cast<unsigned>(rows), kT, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
EOF
cat > "$WORK/whole/w4_malloc_loop_native.cu" <<EOF
// anvil-expect: runtime_error
// anvil-task: relu.py
// anvil-about: cudaMalloc 256 MiB at a time until the device is full, kept across calls; then a correct ReLU
$native_head
namespace {
std::vector<void*> g_hoard;
__global__ void Relu(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) y[i] = fmaxf(x[i], 0.0f);
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  if (n_in != 1 || n_out != 1) return 1;
  for (;;) {
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(256) << 20) != cudaSuccess) {
      (void)cudaGetLastError();
      break;
    }
    g_hoard.push_back(p);
  }
  const int64_t n = anvil_numel(&in[0]);
  Relu<<<256, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const float*>(in[0].data),
                                                           static_cast<float*>(out[0].data), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
EOF
cat > "$WORK/whole/w5_one_huge_malloc_native.cu" <<EOF
// anvil-expect: runtime_error
// anvil-task: relu.py
// anvil-about: one cudaMalloc of twice the device's memory; says why and returns non-zero when it fails
$native_head
namespace {
const char* g_error = nullptr;
void* g_block = nullptr;
}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_error; }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* stream) {
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  const cudaError_t e = cudaMalloc(&g_block, 2 * total);
  if (e != cudaSuccess) {
    g_error = cudaGetErrorString(e);
    return 5;
  }
  return 0;
}
EOF
# ~1 GiB a trial (480 MiB in, 480 MiB out): under --max-trial-bytes, so its trials are cached, not streamed.
cat > "$WORK/hog/big_relu.py" <<'EOF'
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8192, 15360)]


def get_init_inputs():
    return []
EOF
cat > "$WORK/hog.py" <<'EOF'
"""hog.py FREE_MB MODE MAX_S READY: takes all but FREE_MB of the device's memory with plain allocations (1 GiB
blocks through PyTorch's allocator: cudaMalloc), writes READY, then holds it: MODE hold until killed or MAX_S;
MODE watch until a compute process other than this one has appeared on the GPU and ended (or MAX_S)."""
import os, subprocess, sys, time
import torch
free_mb, mode, max_s, ready = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
keep, blocks = free_mb << 20, []
while True:
    free, total = torch.cuda.mem_get_info()
    want = free - keep
    if want <= (64 << 20):
        break
    blocks.append(torch.empty(min(want, 1 << 30), dtype=torch.uint8, device="cuda"))
free, total = torch.cuda.mem_get_info()
t0 = time.time()
print(f"[hog {time.strftime('%H:%M:%S')}] holds {sum(b.numel() for b in blocks) >> 20} MiB; free {free >> 20} MiB "
      f"of {total >> 20}", flush=True)
open(ready, "w").write("ready\n")
me, seen = os.getpid(), set()
while time.time() - t0 < max_s:
    if mode == "watch":
        q = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
                           capture_output=True, text=True).stdout
        now = {line.split(",")[0].strip() for line in q.splitlines() if line.strip()} - {str(me)}
        for p in now - seen:
            print(f"[hog {time.strftime('%H:%M:%S')}] +{p} on the GPU", flush=True)
        if seen - now:
            print(f"[hog {time.strftime('%H:%M:%S')}] {sorted(seen - now)} ended: the hog leaves", flush=True)
            break
        seen |= now
    time.sleep(0.1)
print(f"[hog {time.strftime('%H:%M:%S')}] exits after {time.time() - t0:.1f} s", flush=True)
EOF
cat > "$WORK/show.py" <<'EOF'
"""show.py VERDICTS.jsonl: one line per verdict, with its header's expectation."""
import json, re, sys
from pathlib import Path
for line in open(sys.argv[1]):
    v = json.loads(line)
    p = Path(v["candidate"]["path"])
    m = re.search(r"anvil-expect:\s*(\S+)", p.read_text()[:2048]) if p.exists() else None
    exp = m.group(1) if m else "-"
    if Path(v["task"]["path"]).name == "always_zero.py":
        exp = "pass"  # a degenerate task: zeros are its exact answer (tests/cli/test_trivial_outputs.py)
    run = v.get("gates", {}).get("run", {}) or {}
    ok = "OK " if exp == v["status"] else "DIFF"
    extra = {k: v[k] for k in ("infra_retries", "suspect_candidate", "task_degenerate") if k in v}
    print(f"{ok} {p.name} on {Path(v['task']['path']).name}: {v['status']} (expected {exp}) {v.get('seconds', 0):.1f}s"
          f" {extra} reward={v.get('reward')}")
    for what in ("error",):
        if v.get(what):
            print(f"     error: {v[what][:400]!r}")
    if run.get("message") or run.get("stage"):
        print(f"     run: stage={run.get('stage')} {str(run.get('message'))[:400]!r}")
    if v["status"] not in ("pass",):
        print(f"     feedback: {(v.get('feedback') or '')[:300]!r}")
EOF
ev() {  # ev NAME LIMIT ANVIL-EVAL-ARGS...: anvil eval --list $WORK/NAME.jsonl, verdicts to $OUT/NAME.jsonl
  local name=$1 limit=$2; shift 2
  local s=$(date +%s.%N)
  timeout "$limit" "$A" eval --backend cuda --list "$WORK/$name.jsonl" -q -o "$V/$name.jsonl" "$@" \
    > /dev/null 2> "$V/$name.log"
  local rc=$?
  echo "== $name: exit $rc after $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s (at +$(( $(date +%s) - t0 )) s)"
  tail -3 "$V/$name.log" | cut -c1-400
  [ -s "$V/$name.jsonl" ] && python3 "$WORK/show.py" "$V/$name.jsonl"
}
job() { echo "{\"task\": \"$1\", \"candidate\": \"$2\"}"; }

# ---------- check 2: the trivial-output cases on cuda ----------
echo "### check 2 (+$(( $(date +%s) - t0 )) s)"
{
  for c in "$TRIV"/*.py "$TRIV"/*.cpp; do
    t=$(grep -m1 -o 'anvil-task: [A-Za-z_]*\.py' "$c" | cut -d' ' -f2)
    grep -q 'anvil-expect' "$c" && [ -n "$t" ] && job "$TRIV/$t" "$c"
  done
  job "$TRIV/wide_softmax.py" "$S/examples/candidates/softmax/pass_native.cpp"
  for c in "$WORK"/ports/*; do
    job "$TRIV/$(grep -m1 -o 'anvil-task: [A-Za-z_]*\.py' "$c" | cut -d' ' -f2)" "$c"
  done
  job "$TRIV/always_zero.py" "$WORK/ports/zeros_cuda_native.cu"   # degenerate task: pass, task_degenerate
} > "$WORK/trivial_musacoder.jsonl"
cat "$WORK/trivial_musacoder.jsonl" | sed "s#$PWD/##g"
ev trivial_musacoder 240 -j 4 --no-perf --policy musacoder
grep -E 'copy|broadcast|zeros|constant' "$WORK/trivial_musacoder.jsonl" | grep ports | grep -v always_zero > "$WORK/trivial_kernelbench.jsonl"
ev trivial_kernelbench 120 -j 4 --no-perf --policy kernelbench

# ---------- check 3: a device-memory hog, and candidates that take the whole device ----------
echo "### check 3 (+$(( $(date +%s) - t0 )) s)"
H=$WORK/hog
{ job "$H/big_relu.py" "$S/examples/health/relu.cu"; job "$H/big_relu.py" "$H/relu_honest_cuda_kb.py"; } > "$WORK/hog_none_before.jsonl"
ev hog_none_before 150 -j 1 --no-perf --trials 2     # prepares the task and builds both: no hog yet
hog() {  # hog MODE MAX_S LOG: starts the hog and waits until it holds the memory
  rm -f "$WORK/hog.ready"
  python3 "$WORK/hog.py" "$HOG_FREE_MB" "$1" "$2" "$WORK/hog.ready" > "$3" 2>&1 &
  HOG=$!
  for _ in $(seq 600); do [ -f "$WORK/hog.ready" ] && break; kill -0 $HOG 2>/dev/null || break; sleep 0.1; done
  cat "$3"; nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader
}
# H1: the hog held while both honest candidates are judged, one at a time.
cp "$WORK/hog_none_before.jsonl" "$WORK/hog_held.jsonl"
hog hold 200 "$V/hog_held_hog.log"
ev hog_held 180 -j 1 --no-perf --trials 2
kill $HOG 2>/dev/null; wait $HOG 2>/dev/null; cat "$V/hog_held_hog.log" | tail -2
# H2: the hog leaves once the first candidate process on the GPU has ended (the first try): a retry finds it gone.
job "$H/big_relu.py" "$S/examples/health/relu.cu" > "$WORK/hog_leaves.jsonl"
hog watch 90 "$V/hog_leaves_hog.log"
echo "[eval $(date +%H:%M:%S)] starts"
ev hog_leaves 150 -j 1 --no-perf --trials 2
kill $HOG 2>/dev/null; wait $HOG 2>/dev/null; cat "$V/hog_leaves_hog.log"
cp "$WORK/hog_none_before.jsonl" "$WORK/hog_none_after.jsonl"
ev hog_none_after 120 -j 1 --no-perf --trials 2
# Candidates that take the whole device: their own failure, never infra_error.
for c in "$WORK"/whole/*; do job "$S/examples/tasks/relu.py" "$c"; done > "$WORK/whole_device.jsonl"
ev whole_device 200 -j 1 --no-perf --trials 2
# One that takes the whole device beside an honest one (-j 2): who is blamed.
{ job "$S/examples/tasks/relu.py" "$WORK/whole/w4_malloc_loop_native.cu"; job "$H/big_relu.py" "$S/examples/health/relu.cu"; } > "$WORK/whole_beside_honest.jsonl"
ev whole_beside_honest 120 -j 2 --no-perf --trials 2
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader
echo "### done after $(( $(date +%s) - t0 )) s"
# At most 8 files come back: everything in one archive beside this log.
tar czf "$OUT/item3.tgz" -C "$WORK" .
