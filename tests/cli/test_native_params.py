"""A native candidate's parameters and buffers (named_parameters, then named_buffers): the task server sends them
by name (docs/protocol.md, "weights"), a buffer the state dict leaves out (not persistent) too; prepare writes no
weight at all (GBs for level 3)."""

import uuid
from pathlib import Path

import pytest

from conftest import EXAMPLES, cache_dir, eval_json


@pytest.mark.parametrize("persistent", [True, False])
def test_a_native_candidate_gets_the_buffers_either_way(tmp_path, persistent):
    name = f"scaled_mlp_{'p' if persistent else 'np'}_{uuid.uuid4().hex[:8]}"
    task = tmp_path / f"{name}.py"
    task.write_text((EXAMPLES / "tasks" / "small_mlp.py").read_text()
                    .replace("        self.fc2 = nn.Linear(hidden_size, output_size)\n",
                             "        self.fc2 = nn.Linear(hidden_size, output_size)\n"
                             f"        self.register_buffer('scale', torch.full((1,), 2.5), persistent={persistent})\n")
                    .replace("return self.fc2(self.relu(self.fc1(x)))",
                             "return self.fc2(self.relu(self.fc1(x))) * self.scale"))
    source = (EXAMPLES / "candidates" / "small_mlp" / "pass_native.cpp").read_text()
    candidate = tmp_path / "scaled_native.cpp"
    candidate.write_text(source.replace("if (n_in != 5 || n_out != 1) return 1;",
                                        "if (n_in != 6 || n_out != 1) return 1;")
                         .replace("  return 0;\n}", "  const float s = *static_cast<const float*>(in[5].data);\n"
                                  "  float* y = static_cast<float*>(out[0].data);\n"
                                  "  for (int64_t i = 0; i < batch * out_f; ++i) y[i] *= s;\n  return 0;\n}"))
    (v,), p = eval_json("-t", str(task), "-c", str(candidate), "--baselines", "none", "--no-perf")
    assert v["status"] == "pass", v["feedback"] + p.stderr
    (prepared,) = [d for d in Path(cache_dir(), "tasks").glob(f"{name}-*") if d.is_dir()]
    assert not (prepared / "params").exists() and not (prepared / "state_dict.pt").exists()
