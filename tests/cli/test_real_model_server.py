# anvil-test-label: model_server
"""anvil against a real OpenAI-compatible server, not our scripted one: llama-cpp-python's server
(scripts/model_server_venv.sh) serving a tiny llama whose weights are random, written by this test with the gguf
package (no weights are downloaded). What it proves: the client speaks to a real implementation of the protocol,
the server's chat template is applied to our messages, and finish_reason, usage and log-probs come back the way
anvil records them. The model writes noise, so every answer ends as `truncated` or `no_code`.

    scripts/model_server_venv.sh && ctest --test-dir build -L model_server"""

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from anvil_runs import open_run
from conftest import EXAMPLES, NO_KEYS, ROOT, cache_dir, run_anvil

VENV = Path(os.environ.get("ANVIL_MODEL_SERVER_VENV", ROOT / ".venv-model-server"))
PYTHON = VENV / "bin" / "python"
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")

WRITE_MODEL = r"""
import sys
import gguf
import numpy as np

path = sys.argv[1]
rng = np.random.default_rng(0)
n_vocab, n_embd, n_ff, n_head = 259, 64, 128, 4
w = gguf.GGUFWriter(path, "llama")
w.add_name("anvil-test-random-llama")
w.add_context_length(16384)
w.add_embedding_length(n_embd)
w.add_block_count(1)
w.add_feed_forward_length(n_ff)
w.add_head_count(n_head)
w.add_head_count_kv(n_head)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_dimension_count(n_embd // n_head)
w.add_file_type(0)
# A byte-level SentencePiece vocabulary: <unk>, <s>, </s> and the 256 bytes, so any text tokenizes.
w.add_tokenizer_model("llama")
w.add_token_list(["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)])
w.add_token_scores([0.0] * n_vocab)
w.add_token_types([2, 3, 3] + [6] * 256)
w.add_unk_token_id(0)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_chat_template(sys.argv[2])

def t(name, *shape):
    w.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

t("token_embd.weight", n_vocab, n_embd)
w.add_tensor("blk.0.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
    t(f"blk.0.{name}.weight", n_embd, n_embd)
w.add_tensor("blk.0.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
t("blk.0.ffn_gate.weight", n_ff, n_embd)
t("blk.0.ffn_up.weight", n_ff, n_embd)
t("blk.0.ffn_down.weight", n_embd, n_ff)
w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
t("output.weight", n_vocab, n_embd)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
"""

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason=f"no model server venv at {VENV}: run "
                                                             "scripts/model_server_venv.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llama")
    model = tmp / "tiny.gguf"
    subprocess.run([str(PYTHON), "-c", WRITE_MODEL, str(model), TEMPLATE], check=True, timeout=120)
    port = free_port()
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen([str(PYTHON), "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "tiny",
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "16384", "--logits_all", "true",
                             "--n_threads", "1"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    else:
        proc.kill()
    if proc.poll() is not None:
        pytest.fail("llama-cpp-python's server did not start:\n" + (tmp / "server.log").read_text()[-3000:])
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_model_check_talks_to_a_real_server(server):
    proc = run_anvil("model-check", "--endpoint", server, "--model", "tiny", env=NO_KEYS, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def tasks(tmp_path):
    folder = tmp_path / "tasks" / "level1"
    folder.mkdir(parents=True)
    (folder / "19_ReLU.py").write_text((EXAMPLES / "tasks" / "relu.py").read_text())
    return tmp_path / "tasks"


def test_generate_records_what_a_real_server_answers(server, tasks, tmp_path):
    out = tmp_path / "run.db"
    proc = run_anvil("generate", "--endpoint", server, "--model", "tiny", "--tasks", str(tasks),
                     "--out", str(out), "--samples", "2", "--max-tokens", "12", "--temperature", "1.0", "--seed",
                     "3", "--logprobs", "--top-logprobs", "2", "--concurrency", "1", "--no-perf", "--cache-dir",
                     cache_dir(), env=NO_KEYS, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open_run(out) as run:
        attempts = run.attempts()
        assert len(attempts) == 2
        for a in attempts:
            [q] = run.requests(a["id"])
            assert q["failure"] == "none" and q["http_status"] == 200
            assert q["finish_reason"] in ("length", "stop")
            assert a["outcome"] == ("truncated" if q["finish_reason"] == "length" else "no_code")
            # The server's own count of what it read and wrote: the prompt went through its template.
            assert q["prompt_tokens"] > 1000 and 1 <= q["completion_tokens"] <= 12
            assert q["logprobs"] and len(q["logprobs"]) == q["completion_tokens"]
            assert all(t["logprob"] <= 0 for t in q["logprobs"])
            body = json.loads(q["response"])
            assert body["choices"][0]["message"]["role"] == "assistant"


def test_a_server_that_ignores_n_leaves_the_other_samples_to_a_rerun(server, tasks, tmp_path):
    # llama-cpp-python answers one choice whatever n asks: the second sample is the machine's failure, said so.
    out = tmp_path / "run.db"
    proc = run_anvil("generate", "--endpoint", server, "--model", "tiny", "--tasks", str(tasks),
                     "--out", str(out), "--samples", "2", "--n-per-request", "2", "--max-tokens", "4", "--no-perf",
                     "--cache-dir", cache_dir(), env=NO_KEYS, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open_run(out) as run:
        attempts = run.attempts()
        outcomes = [a["outcome"] for a in attempts]
        if outcomes.count("server_error") == 0:
            pytest.skip("this llama-cpp-python answers n choices")
        assert outcomes[1] == "server_error"
        [q] = run.requests(attempts[1]["id"])
        assert q["failure"] == "bad_answer" and "n-per-request" in q["message"]
