"""The kernelbench-format build path (issue 5): the precompiled torch header makes the same object as the plain
compile, and the verdict reports the compile's phases."""

import json
import uuid
from pathlib import Path

from conftest import EXAMPLES, eval_json, run_anvil

RELU = str(EXAMPLES / "tasks" / "relu.py")

# A C++ ReLU for torch tensors; `// TOKEN` becomes a fresh comment where a source must never be in a cache.
RELU_SOURCE = '''
#include <torch/extension.h>
// TOKEN
torch::Tensor relu_forward(torch::Tensor x) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
  return out;
}
'''

CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""@RELU@"""
_ext = load_inline(name="pch_probe", cpp_sources=[_SOURCE], functions=["relu_forward"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
'''.replace("@RELU@", RELU_SOURCE)


def test_precompiled_header_builds_the_same_object(tmp_path):
    candidate = tmp_path / "pch_probe_kb.py"
    candidate.write_text(CANDIDATE.replace("TOKEN", uuid.uuid4().hex + " (a fresh source: never in a cache)"))
    # The shared test cache: its PCH is built now or was by an earlier test.
    with_pch, proc = eval_json("--task", RELU, "--candidate", str(candidate), "--no-perf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    compile_gate = with_pch[0]["gates"]["compile"]
    assert with_pch[0]["status"] == "pass", with_pch[0]["feedback"]
    assert compile_gate["pch"] in ("built", "cached"), compile_gate["log_tail"][-2000:]
    assert compile_gate["phase_seconds"]["cxx"] > 0 and compile_gate["phase_seconds"]["link"] > 0
    assert "-Winvalid-pch" in compile_gate["log_tail"]
    assert "not used because" not in compile_gate["log_tail"]  # g++ used it (-Winvalid-pch says when not).

    proc = run_anvil("eval", "--json", "-q", "--task", RELU, "--candidate", str(candidate), "--no-perf",
                     "--cache-dir", str(tmp_path / "plain-cache"), env={"ANVIL_PCH": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    plain = [json.loads(proc.stdout)]
    assert plain[0]["status"] == "pass"
    assert plain[0]["gates"]["compile"]["pch"] == ""
    assert "pch" not in plain[0]["gates"]["compile"]["phase_seconds"]

    objects = [Path(v["gates"]["compile"]["artifacts"]["pch_probe"]).parent / "main.o" for v in (with_pch[0], plain[0])]
    assert objects[0] != objects[1]
    assert objects[0].read_bytes() == objects[1].read_bytes()


def test_a_shared_pch_folder_that_does_not_exist_yet_is_made_and_read(tmp_path):
    # ANVIL_PCH_CACHE names a folder no build has used: the first build makes the PCH there and its compile, in the
    # compilers' sandbox (which reads only folders that exist when it is made), must be able to read it.
    candidate = tmp_path / "pch_probe_kb.py"
    candidate.write_text(CANDIDATE.replace("TOKEN", uuid.uuid4().hex))
    shared = tmp_path / "shared-pch"
    proc = run_anvil("eval", "--json", "-q", "--task", RELU, "--candidate", str(candidate), "--no-perf",
                     "--cache-dir", str(tmp_path / "cache"), env={"ANVIL_PCH_CACHE": str(shared)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    v = json.loads(proc.stdout)
    assert v["status"] == "pass", v["gates"]["compile"]["log_tail"][-2000:]
    assert v["gates"]["compile"]["pch"] == "built"
    assert list(shared.glob("artifacts/*/torch/extension.h.gch"))


# load_inline inside ModelNew.__init__: extraction builds the model to see the call. `INIT` is what __init__ does
# before it: nothing (built on the meta device), or `.item()` on a tensor, which the meta device cannot answer
# (built again on the CPU).
LAZY_CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""@RELU@"""


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        INIT
        self.ext = load_inline(name="lazy_relu", cpp_sources=[_SOURCE], functions=["relu_forward"])

    def forward(self, x):
        return self.ext.relu_forward(x)
'''.replace("@RELU@", RELU_SOURCE.replace("// TOKEN", "// lazy"))


def test_extensions_built_in_init_are_extracted(tmp_path):
    for name, init in [("meta", "pass"), ("cpu_fallback", "self.scale = torch.ones(3).sum().item()")]:
        candidate = tmp_path / f"lazy_{name}_kb.py"
        candidate.write_text(LAZY_CANDIDATE.replace("INIT", init))
        verdicts, proc = eval_json("--task", RELU, "--candidate", str(candidate), "--no-perf")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert verdicts[0]["status"] == "pass", (name, verdicts[0]["feedback"])
        assert list(verdicts[0]["gates"]["compile"]["artifacts"]) == ["lazy_relu"], name


# load_inline on forward's first call, under a name made anew in every process (as candidates do to dodge torch's
# build cache): extraction calls forward once on placeholder inputs to see the call, and the run finds the build by
# the call's other arguments (its key), not by the name.
FIRST_CALL_CANDIDATE = '''
import uuid

import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""@RELU@"""
_ext = None


def _extension():
    global _ext
    if _ext is None:
        _ext = load_inline(f"relu_{uuid.uuid4().hex}", [_SOURCE], functions=["relu_forward"])
    return _ext


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _extension().relu_forward(x.contiguous())
'''.replace("@RELU@", RELU_SOURCE.replace("// TOKEN", "// lazy"))


def test_an_extension_built_on_the_first_call_under_a_name_of_its_own_is_found(tmp_path):
    candidate = tmp_path / "first_call_kb.py"
    candidate.write_text(FIRST_CALL_CANDIDATE)
    verdicts, proc = eval_json("--task", RELU, "--candidate", str(candidate), "--no-perf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    v = verdicts[0]
    assert v["status"] == "pass", v["feedback"]
    [name] = v["gates"]["compile"]["artifacts"]
    assert name.startswith("relu_"), name  # The extraction's name; the run's own was another uuid.
