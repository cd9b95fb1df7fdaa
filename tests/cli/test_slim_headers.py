"""The slim torch headers for a kernelbench candidate's .cu file (include/anvil/slim_torch, issue 5): a source they
build gets the same device code as with torch's full headers, and a source they cannot build is built with the full
headers, as load_inline does. Compile gate only (`--backend cuda` without a GPU stops after it), so this runs on the
CPU machine; ANVIL_PCH=0 keeps the CUDA-flavoured torch PCH out of the timing."""

import re
import subprocess
import uuid
from pathlib import Path

from conftest import eval_json

TASK = str(Path(__file__).resolve().parents[2] / "examples" / "tasks" / "relu.py")

# Only the load_inline prelude's <torch/types.h>: the full build stays at the prelude's cost. `BODY` computes `out`.
CUDA_SOURCE = r'''
#include <torch/types.h>
// TOKEN
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_forward(torch::Tensor x) {
  BODY
  return out;
}
'''

LAUNCH = ("auto out = torch::empty_like(x); int64_t n = x.numel(); "
          "relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);")

CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline

_ext = load_inline(name="NAME", cpp_sources=["torch::Tensor relu_forward(torch::Tensor x);"],
                   cuda_sources=[r"""SOURCE"""], functions=["relu_forward"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
'''


def candidate(tmp_path, name, body, header="#include <torch/types.h>"):
    source = CUDA_SOURCE.replace("#include <torch/types.h>", header).replace("BODY", body)
    source = source.replace("TOKEN", uuid.uuid4().hex + " (a fresh source: never in a cache)")
    path = tmp_path / f"{name}_kb.py"
    path.write_text(CANDIDATE.replace("NAME", name).replace("SOURCE", source))
    return path


def compile_gate(path, slim=True):
    env = {"ANVIL_PCH": "0", "ANVIL_SLIM_HEADERS": "1" if slim else "0"}
    verdicts, proc = eval_json("--backend", "cuda", "--task", TASK, "--candidate", str(path), "--no-perf", env=env)
    assert verdicts, proc.stderr[-3000:]
    gate = verdicts[0]["gates"]["compile"]
    assert gate["ok"], gate["summary"] + gate["log_tail"][-3000:]
    return gate


def device_code(gate, name):
    """The object's embedded device code, less nvcc's module id: a hash of the source's path (every build folder
    differs, so two full builds differ there too) that names internal symbols (`_INTERNAL_<hash>_...`)."""
    obj = Path(gate["artifacts"][name]).parent / "cuda.o"
    fatbin = obj.parent / "cuda.fatbin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", str(obj), str(fatbin)], check=True)
    code = fatbin.read_bytes()
    ids = set(re.findall(rb"_INTERNAL_([0-9a-f]{8})_", code))
    assert len(ids) <= 1, ids
    for module_id in ids:
        code = code.replace(module_id, b"<module>")
    return code


def test_slim_headers_build_the_same_device_code_as_the_full_ones(tmp_path):
    path = candidate(tmp_path, "slim_relu", LAUNCH)
    slim = compile_gate(path)
    assert slim["torch_headers"] == "slim", slim["log_tail"][-3000:]
    # nvcc ran in phases (src/compile/nvcc_phases.h), and the verdict has their times.
    assert "ran at once" in slim["log_tail"]
    assert all(slim["phase_seconds"][k] > 0 for k in ("nvcc_host_front", "nvcc_device", "nvcc_host_compile"))
    assert "-DAT_PER_OPERATOR_HEADERS" in slim["log_tail"] and "slim_torch" in slim["log_tail"]
    full = compile_gate(path, slim=False)
    assert full["torch_headers"] == "full"
    assert "slim_torch" not in full["log_tail"]
    assert slim["artifacts"]["slim_relu"] != full["artifacts"]["slim_relu"]  # Two builds, two cache entries.
    code = device_code(slim, "slim_relu")
    assert len(code) > 1000 and code == device_code(full, "slim_relu")
    # A cached artifact still says how it was built.
    again = compile_gate(path)
    assert again["cached"] and again["torch_headers"] == "slim"


def test_a_source_the_slim_headers_cannot_build_is_built_with_the_full_ones(tmp_path):
    # The free function torch::reshape (plumbing, allowed) is declared by ATen/Functions.h, which the slim headers
    # leave out; the method x.reshape would build.
    body = ("auto flat = torch::reshape(x, {-1}); auto out = torch::empty_like(flat); int64_t n = flat.numel(); "
            "relu_kernel<<<(n + 255) / 256, 256>>>(flat.data_ptr<float>(), out.data_ptr<float>(), n); "
            "out = out.view(x.sizes());")
    path = candidate(tmp_path, "free_function_reshape", body)
    gate = compile_gate(path)
    assert gate["torch_headers"] == "fallback", gate["log_tail"][-3000:]
    assert "did not build this source" in gate["log_tail"]
    # What the slim try said is not the candidate's business: no diagnostics, and the log shows the full build only.
    assert gate["diagnostics"] == [], gate["diagnostics"]
    assert "slim_torch" not in gate["log_tail"]
    assert gate["phase_seconds"]["nvcc"] > 0


def test_the_slim_extension_header_builds_a_source_that_includes_it(tmp_path):
    # Most model-written .cu files include <torch/extension.h>; the slim one hands over to <torch/types.h>.
    path = candidate(tmp_path, "extension_relu", LAUNCH, header="#include <torch/extension.h>")
    gate = compile_gate(path)
    assert gate["torch_headers"] == "slim", gate["log_tail"][-3000:]
