"""`anvil generate` against a real HTTP server that speaks the OpenAI protocol with scripted answers
(tests/support/openai_server.py), on the CPU backend: every answer recorded, every candidate judged, the run
database read back through anvil_runs, and reruns that resume, extend or refuse."""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from anvil_rl import prime_echo, repair_message
from anvil_runs import open_run
from conftest import EXAMPLES, NO_KEYS, ROOT, ModelServer, cache_dir, load_schema, run_anvil, validate

RELU = EXAMPLES / "candidates" / "relu"
FAST = ("--no-perf", "--trials", "2", "--cache-dir")


def fenced(path, lang="python"):
    return f"Here is my kernel.\n\n```{lang}\n{path.read_text()}```\n"


@pytest.fixture
def tasks(tmp_path):
    folder = tmp_path / "tasks" / "level1"
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLES / "tasks" / "relu.py", folder / "19_ReLU.py")
    return tmp_path / "tasks"


@pytest.fixture
def servers(tmp_path):
    started = []

    def start(*answers, rules=(), faults=None):
        started.append(ModelServer(tmp_path, list(answers), rules, faults))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def generate(url, tasks, out, *args, env=None):
    """One request at a time unless `args` say otherwise: a scripted server's answers then go in sample order."""
    one_at_a_time = () if "--concurrency" in args else ("--concurrency", "1")
    return run_anvil("generate", "--endpoint", url, "--model", "test-model", "--tasks", str(tasks), "--out", str(out),
                     *FAST, cache_dir(), *one_at_a_time, *args, env={**NO_KEYS, **(env or {})}, timeout=900)


def outcomes(db):
    """(sample, outcome or state) of every attempt, sorted; every verdict the run recorded is checked against the
    schema on the way."""
    with open_run(db) as run:
        for a in run.attempts():
            if a["verdict"] is not None:
                validate(a["verdict"], load_schema())
        return sorted((a["sample"], a["outcome"] or a["state"]) for a in run.attempts())


def test_every_answer_is_recorded_and_every_candidate_judged(tasks, servers, tmp_path):
    s = servers({"content": fenced(RELU / "pass_kb.py")}, {"content": fenced(RELU / "wrong_answer_kb.py")},
                {"content": "I would write a vectorized loop."}, {"refusal": "I cannot help with that."},
                {"content": fenced(RELU / "pass_native.cpp", "cpp")})
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "5", "--temperature", "0.5", "--max-tokens", "2048")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert outcomes(out) == [(0, "pass"), (1, "wrong_answer"), (2, "no_code"), (3, "refused"), (4, "pass")]
    with open_run(out) as run:
        assert run.info["model"] == "test-model" and run.info["prompt_id"] == "kernelbench-one-shot"
        assert run.info["sampling"] == {"temperature": 0.5, "max_tokens": 2048}
        [task] = run.tasks()
        assert (task["name"], task["level"], task["problem"]) == ("19_ReLU", 1, 19)
        attempts = run.attempts()
        assert attempts[0]["verdict"]["status"] == "pass" and attempts[0]["format"] == "kernelbench"
        assert attempts[4]["format"] == "native"
        assert attempts[2]["reward"] == -1 and attempts[3]["reward"] == -1
        [req] = run.requests(attempts[0]["id"])
        assert json.loads(req["response"])["choices"][0]["message"]["content"].startswith("Here is my kernel")
        assert req["completion_tokens"] > 0 and req["failure"] == "none"
        assert {"queue", "generate", "judge"} <= set(run.stage_times(attempts[0]["id"]))
    # What the model was asked: the task's own source, under the one-shot prompt, with the run's sampling.
    first = s.requests()[0]["body"]
    assert first["temperature"] == 0.5 and first["max_tokens"] == 2048
    assert "class Model(nn.Module)" in first["messages"][-1]["content"]
    assert "outcome" in proc.stdout and "pass" in proc.stdout
    # Run again: nothing is asked or judged again.
    sent = len(s.requests())
    proc = generate(s.url, tasks, out, "--samples", "5", "--temperature", "0.5", "--max-tokens", "2048")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(s.requests()) == sent
    # More samples extend the run; other settings are refused, naming what differs.
    proc = generate(s.url, tasks, out, "--samples", "6", "--temperature", "0.5", "--max-tokens", "2048")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(s.requests()) == sent + 1 and len(outcomes(out)) == 6
    proc = generate(s.url, tasks, out, "--samples", "6", "--temperature", "0.9", "--max-tokens", "2048")
    assert proc.returncode == 2 and "sampling" in proc.stderr, proc.stderr
    # A run's verdicts are all of one policy.
    proc = generate(s.url, tasks, out, "--samples", "6", "--temperature", "0.5", "--max-tokens", "2048",
                    "--policy", "kernelbench")
    assert proc.returncode == 2 and "settings" in proc.stderr and "kernelbench" in proc.stderr, proc.stderr


def test_a_broken_kernel_is_repaired_from_the_verifiers_feedback(tasks, servers, tmp_path):
    # Turn 1 answers a leaky ReLU; a request whose last message carries the verifier's "Wrong answer" feedback gets
    # the right kernel. A sample with no code is told so, and answers the right kernel then too.
    s = servers({"content": fenced(RELU / "wrong_answer_kb.py")}, {"content": "I would fuse the loops."},
                rules=[{"match": "Wrong answer", "answers": [{"content": fenced(RELU / "pass_kb.py")}]},
                       {"match": "no code block", "answers": [{"content": fenced(RELU / "pass_native.cpp", "cpp")}]}])
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "2", "--turns", "3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open_run(out) as run:
        attempts = [(a["sample"], a["turn"], a["outcome"]) for a in run.attempts()]
        assert attempts == [(0, 1, "wrong_answer"), (0, 2, "pass"), (1, 1, "no_code"), (1, 2, "pass")]
        repair = run.requests(run.attempts()[1]["id"])[0]["messages"]
        assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
        assert "leaky" in repair[2]["content"].lower()  # The model's own earlier answer.
        verdict = run.attempts()[0]["verdict"]
        assert verdict["feedback"].strip() in repair[3]["content"]  # The feedback, verbatim.
        # anvil_rl's BDR asks for repairs in the same words as the loop.
        assert repair[3]["content"] == repair_message(run.attempts()[0])
        no_code = run.requests(run.attempts()[3]["id"])[0]["messages"]
        assert no_code[3]["content"] == repair_message(run.attempts()[2])
    report = json.loads(run_anvil("kernelbench", "--run", str(out), "--json").stdout)
    assert [t["overall"]["pass_at_k_pct"]["1"] for t in report["turns"]] == [0.0, 100.0, 100.0]


def test_each_trajectorys_prime_echo_score_is_recorded_beside_its_turns(tasks, servers, tmp_path):
    s = servers({"content": fenced(RELU / "wrong_answer_kb.py")}, {"content": "I would fuse the loops."},
                {"content": fenced(RELU / "pass_kb.py")},
                rules=[{"match": "Wrong answer", "answers": [{"content": fenced(RELU / "pass_kb.py")}]},
                       {"match": "no code block", "answers": [{"content": fenced(RELU / "pass_native.cpp", "cpp")}]}])
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "3", "--turns", "3", "--bonus-first", "0.2", "--bonus-second",
                    "0.1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open_run(out) as run:
        assert run.info["config"]["prime_echo"] == {"alpha": 0.75, "bonus_first": 0.2, "bonus_second": 0.1}
        by_sample = {}
        for a in run.attempts():
            by_sample.setdefault(a["sample"], []).append(a)
    rewards = {k: [a["reward"] for a in v] for k, v in by_sample.items()}
    scores = {k: [a["prime_echo"] for a in v] for k, v in by_sample.items()}  # The sample's, on each of its turns.
    assert rewards[1] == [-1.0, 1.0] and scores[1] == pytest.approx([-0.4] * 2)  # no code, then a pass: -0.75+0.25+0.1
    assert rewards[2] == [1.0] and scores[2] == pytest.approx([1.2])              # a pass at once: 1 + 0.2
    assert [a["outcome"] for a in by_sample[0]] == ["wrong_answer", "pass"] and rewards[0] == [-1.0, 1.0]
    assert scores[0] == pytest.approx([prime_echo(rewards[0], bonus_first=0.2, bonus_second=0.1)] * 2)
    # Without the bonuses nothing is scored, and a rerun must name the same ones.
    again = generate(s.url, tasks, out, "--samples", "3", "--turns", "3")
    assert again.returncode == 2 and "prime_echo" in again.stderr, again.stderr
    half = generate(s.url, tasks, tmp_path / "other.db", "--bonus-first", "0.2")
    assert half.returncode == 2 and "--bonus-second" in half.stderr


def test_verdicts_stream_while_other_samples_are_still_generated(tasks, servers, tmp_path):
    # The sum task's first answer takes 20 s; meanwhile the ReLU sample's broken kernel is judged, repaired from its
    # feedback, and the repair judged: no sample waits for another's turn.
    shutil.copy(EXAMPLES / "tasks" / "sum_reduction.py", tasks / "level1" / "47_Sum.py")
    s = servers({"content": fenced(RELU / "wrong_answer_kb.py")},
                rules=[{"match": "torch.sum", "answers": [{"delay": 20, "content": "I would use a tree reduction."}]},
                       {"match": "Wrong answer", "answers": [{"content": fenced(RELU / "pass_kb.py")}]}])
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--turns", "2", "--concurrency", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open_run(out) as run:
        done = {(a["task_name"], a["turn"]): (a["outcome"], a["done_at"]) for a in run.attempts()}
        sum_turn2 = next(a["id"] for a in run.attempts() if a["task_name"] == "47_Sum" and a["turn"] == 2)
        # Its wait for a request slot, not the time since the run began (20 s and more).
        assert run.stage_times(sum_turn2)["queue"] < 5
    assert done[("19_ReLU", 1)][0] == "wrong_answer" and done[("19_ReLU", 2)][0] == "pass"
    assert done[("47_Sum", 1)][0] == "no_code" and ("47_Sum", 2) in done
    assert done[("19_ReLU", 2)][1] < done[("47_Sum", 1)][1], done


def test_a_server_that_goes_away_stops_the_run_and_a_rerun_finishes_it(tasks, servers, tmp_path):
    out = tmp_path / "run.db"
    proc = generate("http://127.0.0.1:9/v1", tasks, out, "--samples", "2", "--unreachable-after", "1")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "cannot reach http://127.0.0.1:9/v1" in proc.stderr and "run the same command again" in proc.stderr
    assert outcomes(out) == [(0, "server_error"), (1, "pending")]
    # The server is back (on another port: the endpoint is not part of the run's identity): the rerun finishes it.
    s = servers({"content": fenced(RELU / "pass_kb.py")})
    proc = generate(s.url, tasks, out, "--samples", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert outcomes(out) == [(0, "pass"), (1, "pass")]
    assert "1 machine failure(s) of an earlier run redone" in proc.stdout


def test_garbage_and_errors_from_the_server_are_server_errors_asked_again(tasks, servers, tmp_path):
    s = servers({"raw": "<html>oops</html>"}, {"status": 400, "body": "{\"error\": {\"message\": \"bad\"}}"},
                {"content": fenced(RELU / "pass_kb.py")})
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert outcomes(out) == [(0, "server_error"), (1, "server_error")]
    with open_run(out) as run:
        reqs = run.requests(run.attempts()[0]["id"])
        assert reqs[0]["failure"] == "bad_answer" and "<html>oops" in reqs[0]["message"]
    proc = generate(s.url, tasks, out, "--samples", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert outcomes(out) == [(0, "pass"), (1, "pass")]
    with open_run(out) as run:
        assert len(run.requests(run.attempts()[0]["id"])) == 2  # The failed request stays on record.


def test_dry_run_and_usage_errors(tasks, tmp_path):
    out = tmp_path / "run.db"
    proc = run_anvil("generate", "--model", "m", "--tasks", str(tasks), "--out", str(out), "--dry-run", env=NO_KEYS)
    assert proc.returncode == 0, proc.stderr
    assert "1 first-turn request(s) to send" in proc.stdout and "class ModelNew" in proc.stdout and "--- user ---" in proc.stdout
    assert not out.exists()
    for args, says in ((["--turns", "0"], "--turns"), (["--history", "all"], "--history"),
                       (["--format", "triton"], "--format"),
                       (["--problems", "x"], "--problems"), (["--levels", "3"], "no task"),
                       (["--prompt", "nope"], "no prompt 'nope'"), (["--api-key", "sk-x"], "command line")):
        proc = run_anvil("generate", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--tasks", str(tasks),
                         "--out", str(out), *args, env=NO_KEYS)
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)


def test_the_run_database_gives_the_papers_table_per_turn(servers, tmp_path):
    # Two tasks without a number or a level: two problems of level 0 (keyed by task), not one.
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(EXAMPLES / "tasks" / "relu.py", folder / "relu.py")
    shutil.copy(EXAMPLES / "tasks" / "relu.py", folder / "relu_again.py")
    (folder / "relu_again.py").write_text((folder / "relu.py").read_text() + "\n# the same op, another task\n")
    s = servers({"content": fenced(RELU / "pass_kb.py")}, {"content": "no code"}, {"content": "no code"},
                {"content": "no code"})
    out = tmp_path / "run.db"
    proc = generate(s.url, folder, out, "--samples", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_anvil("kernelbench", "--run", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["model"] == "test-model" and len(report["turns"]) == 1
    turn = report["turns"][0]
    assert [lv["level"] for lv in turn["levels"]] == [0]
    overall = turn["overall"]
    assert overall["level"] == "all" and overall["problems"] == 2 and overall["samples"] == 4
    assert overall["statuses"] == {"pass": 1, "no_code": 3}
    assert overall["pass_at_k_pct"]["1"] == 25.0 and overall["pass_at_k_pct"]["2"] == 50.0
    text = run_anvil("kernelbench", "--run", str(out))
    assert text.returncode == 0 and "turn 1 of 1" in text.stdout and "Pass@1" in text.stdout
    bad = run_anvil("kernelbench", "--run", str(out), "--turn", "2")
    assert bad.returncode == 2 and "--turn 2" in bad.stderr
    notdb = tmp_path / "notes.txt"
    notdb.write_text("hello")
    bad = run_anvil("kernelbench", "--run", str(notdb))
    assert bad.returncode == 2 and "not a run database" in bad.stderr


def test_the_musacoder_prompt_shows_the_spec_at_real_sizes_without_making_it(tmp_path):
    kernelbench = ROOT.parent / "shared" / "kernelbench"
    if not kernelbench.exists():
        pytest.skip("no ../shared/kernelbench")
    proc = run_anvil("generate", "--model", "m", "--tasks", str(kernelbench), "--levels", "1", "--problems", "1",
                     "--prompt", "musacoder", "--backend", "cuda", "--dry-run", "--cache-dir", str(tmp_path),
                     env=NO_KEYS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout
    assert "prompt musacoder v1" in text
    assert "in0: float32 [" in text and "strides [" in text  # The tensor metadata, from the meta device.
    assert "aten.mm.default" in text  # The op trace.
    assert "NVIDIA GPU (CUDA)" in text and "1. Semantics" in text


def test_log_probs_and_token_ids_are_recorded_when_asked(tasks, servers, tmp_path):
    s = servers({"content": "no code in these five words"})
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--logprobs", "--top-logprobs", "2", "--return-token-ids")
    assert proc.returncode == 0, proc.stderr[-3000:]
    body = s.requests()[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 2 and body["return_token_ids"] is True
    with open_run(out) as run:
        assert run.info["sampling"] == {"logprobs": True, "top_logprobs": 2, "return_token_ids": True}
        [req] = run.requests(run.attempts()[0]["id"])
        assert [t["token"] for t in req["logprobs"]] == ["no", "code", "in", "these", "five", "words"]
        assert all(t["logprob"] == -0.5 for t in req["logprobs"])
        assert req["token_ids"] == [1, 2, 3, 4, 5, 6]


def test_one_request_with_n_answers_several_samples(tasks, servers, tmp_path):
    # Four first-turn samples in one request (n = 4), each choice its sample's answer; the wrong one is repaired
    # from its own choice.
    s = servers({"content": fenced(RELU / "pass_kb.py")}, {"content": fenced(RELU / "wrong_answer_kb.py")},
                {"content": "I would write a vectorized loop."}, {"refusal": "I cannot help with that."},
                rules=[{"match": "Wrong answer", "answers": [{"content": fenced(RELU / "pass_kb.py")}]},
                       {"match": "no code block", "answers": [{"content": "Still no code."}]}])
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "4", "--n-per-request", "4", "--turns", "2", "--logprobs")
    assert proc.returncode == 0, proc.stderr[-3000:]
    bodies = [r["body"] for r in s.requests()]
    assert bodies[0]["n"] == 4 and all("n" not in b for b in bodies[1:]) and len(bodies) == 4
    with open_run(out) as run:
        attempts = run.attempts()
        assert [(a["sample"], a["turn"], a["outcome"]) for a in attempts] == [
            (0, 1, "pass"), (1, 1, "wrong_answer"), (1, 2, "pass"), (2, 1, "no_code"), (2, 2, "no_code"),
            (3, 1, "refused"), (3, 2, "refused")]
        first = [run.requests(a["id"])[0] for a in attempts if a["turn"] == 1]
        assert [q["choice"] for q in first] == [0, 1, 2, 3]
        assert len({q["response"] for q in first}) == 1  # One answer, recorded with each of its samples.
        assert first[0]["completion_tokens"] > 0 and all(q["completion_tokens"] is None for q in first[1:])
        assert [t["token"] for t in first[2]["logprobs"]][:3] == ["I", "would", "write"]
        repair = run.requests(attempts[2]["id"])[0]["messages"]
        assert "leaky" in repair[2]["content"].lower()  # Sample 1's own answer, not choice 0's.


def test_a_run_killed_mid_way_loses_nothing_and_a_rerun_finishes_it(tasks, servers, tmp_path):
    # Slow answers, one at a time: kill -9 while the run is asking, then run it again.
    s = servers({"content": "no code yet", "delay": 0.5})
    out = tmp_path / "run.db"
    args = [os.environ.get("ANVIL_BIN") or str(ROOT / "build" / "anvil"), "generate", "--endpoint", s.url,
            "--model", "test-model", "--tasks", str(tasks), "--out", str(out), "--samples", "8", *FAST, cache_dir(),
            "--concurrency", "1"]
    proc = subprocess.Popen(args, env={**os.environ, **NO_KEYS}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(s.requests()) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    asked_before = len(s.requests())
    kept = outcomes(out)  # The database is whole after a kill -9 (WAL): every recorded answer is there.
    answered = [o for _, o in kept if o == "no_code"]
    assert 2 <= len(answered) <= asked_before and len(kept) == 8
    proc = generate(s.url, tasks, out, "--samples", "8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert outcomes(out) == [(i, "no_code") for i in range(8)]
    # Only what had no answer was asked again (a request in flight at the kill may be asked twice).
    assert len(s.requests()) - asked_before <= 8 - len(answered)


def test_injected_server_faults_end_in_exactly_one_outcome_each(tasks, servers, tmp_path):
    answers = [{"content": fenced(RELU / "pass_kb.py")}] + [{"content": "no code"}] * 3
    s = servers(*(answers * 10), faults={"rate": 0.2, "seed": 3})
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "40", "--concurrency", "8", "--retries", "0",
                    "--unreachable-after", "0.5")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    first = outcomes(out)
    assert len(first) == 40 and len({sample for sample, _ in first}) == 40
    assert any(o == "server_error" for _, o in first)  # Faults were injected and recorded as the machine's.
    healthy = servers({"content": "no code"})
    proc = generate(healthy.url, tasks, out, "--samples", "40", "--concurrency", "8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    final = outcomes(out)
    assert len(final) == 40 and not [o for _, o in final if o in ("server_error", "pending")]
    report = json.loads(run_anvil("kernelbench", "--run", str(out), "--json").stdout)
    assert report["turns"][0]["overall"]["samples"] == 40
    assert sum(report["turns"][0]["overall"]["statuses"].values()) == 40


def test_export_writes_kernelbenchs_layout_and_json_lines(tasks, servers, tmp_path):
    s = servers({"content": fenced(RELU / "wrong_answer_kb.py")}, {"content": "no code"},
                {"content": fenced(RELU / "pass_native.cpp", "cpp")},
                rules=[{"match": "Wrong answer", "answers": [{"content": fenced(RELU / "pass_kb.py")}]},
                       {"match": "no code block", "answers": [{"content": "still no code"}]}])
    out = tmp_path / "run.db"
    proc = generate(s.url, tasks, out, "--samples", "3", "--turns", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, last = tmp_path / "first", tmp_path / "last"
    assert run_anvil("export", str(out), "--to-kernelbench", str(first), "--turn", "first").returncode == 0
    proc = run_anvil("export", str(out), "--to-kernelbench", str(last), "--jsonl", str(tmp_path / "a.jsonl"))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in last.iterdir())
    assert names == ["level_1_problem_19_sample_0_kernel.py", "level_1_problem_19_sample_1_kernel.py",
                     "level_1_problem_19_sample_2_kernel.cpp"]
    assert "leaky" in (first / names[0]).read_text().lower()  # Turn 1's code: the wrong kernel.
    assert (last / names[0]).read_text() == (RELU / "pass_kb.py").read_text()  # Turn 2 repaired it.
    assert (first / names[1]).read_text() == ""  # No code by then: an empty file.
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and {line["task"] for line in lines} == {"19_ReLU"}
    assert [(line["sample"], line["turn"], line["outcome"]) for line in lines][:2] == [(0, 1, "wrong_answer"),
                                                                                        (0, 2, "pass")]
    # The exported folder is a KernelBench run anvil can judge again; a problem tree is never written into.
    proc = run_anvil("kernelbench", "--run", str(last), "--kernelbench", str(tasks), "--no-perf", "--trials", "2",
                     "--cache-dir", cache_dir(), "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    statuses = json.loads(proc.stdout)["overall"]["statuses"]
    assert statuses["pass"] == 2 and sum(statuses.values()) == 3  # The empty file fails (today: py.no_extension).
    bad = run_anvil("export", str(out), "--to-kernelbench", str(tasks))
    assert bad.returncode == 2 and "problem tree" in bad.stderr


def test_a_candidate_judged_before_is_answered_from_the_verdict_cache(tasks, servers, tmp_path):
    # A candidate text of this test's own (a comment), so that no other test's verdict is in the shared cache.
    unique = (RELU / "pass_kb.py").read_text() + f"\n# {tmp_path}\n"
    s = servers({"content": f"```python\n{unique}```\n"})

    def run(out, *more):
        return generate(s.url, tasks, out, *more)

    proc = run(tmp_path / "a.db")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "(0 from the verdict cache)" in proc.stdout
    proc = run(tmp_path / "b.db", "--samples", "2")  # Another run, the same candidate twice.
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "(2 from the verdict cache)" in proc.stdout
    with open_run(tmp_path / "b.db") as r:
        attempts = r.attempts()
        assert [a["outcome"] for a in attempts] == ["pass", "pass"] and all(a["cached"] for a in attempts)
        assert attempts[0]["verdict"]["cached"] is True
        assert attempts[0]["verdict"]["candidate"]["path"].endswith("sample0_turn1.py")
    proc = run(tmp_path / "c.db", "--no-verdict-cache")
    assert proc.returncode == 0 and "(0 from the verdict cache)" in proc.stdout
    listing = json.loads(run_anvil("cache", "list", "--cache-dir", cache_dir(), "--json").stdout)
    assert listing["kinds"]["verdicts"]["entries"] >= 1


def test_the_same_candidate_answered_many_times_at_once_is_judged_once(tasks, servers, tmp_path):
    # Eight samples answer the same new kernel at once: one is judged, its verdict answers the seven that came
    # while it was judged.
    unique = (RELU / "pass_kb.py").read_text() + f"\n# {tmp_path}\n"
    s = servers({"content": f"```python\n{unique}```\n"})
    proc = generate(s.url, tasks, tmp_path / "run.db", "--samples", "8", "--concurrency", "8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "8 judged (7 from the verdict cache)" in proc.stdout, proc.stdout
    with open_run(tmp_path / "run.db") as r:
        attempts = r.attempts()
        assert [a["outcome"] for a in attempts] == ["pass"] * 8
        assert sum(not a["cached"] for a in attempts) == 1
        paths = {a["verdict"]["candidate"]["path"].rsplit("/", 1)[-1] for a in attempts}
        assert paths == {f"sample{i}_turn1.py" for i in range(8)}  # Each verdict names its own sample's file.
