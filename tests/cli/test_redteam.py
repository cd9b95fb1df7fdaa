"""The red-team suite (tests/redteam/README.md): one hostile candidate per hack-catalog class that anvil can decide
on a CPU, each ending in its expected status and, for a cheat, naming the rule that caught it."""

import os
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, eval_json, validate

RELU = str(EXAMPLES / "tasks" / "relu.py")
SUITE = ROOT / "tests" / "redteam" / "relu"


def header(path, key):
    m = re.search(rf"anvil-{key}:\s*(\S+)", path.read_text()[:2048])
    return m.group(1) if m else None


# Caught only while being timed: evaluated with the perf gate on.
TIMED = {"b2_value_cache_native.cpp", "b3_batch_and_skip_native.cpp", "c4_phase_detect_native.cpp",
         "d5_forge_timing_native.cpp", "c4_torch_once_timed_kb.py", "d2_signal_after_return_native.cpp"}
# Candidates whose run-time layer (the sandbox) is the point: the static rules catch them first (their
# `anvil-static-rule`), so they are also run with ANVIL_STATIC_VERDICTS=0, which keeps static cheats as evidence
# and lets the candidate run into the layer behind.
RUNTIME = {"ANVIL_STATIC_VERDICTS": "0"}


def candidates():
    return sorted(p for p in SUITE.iterdir() if p.suffix in (".py", ".cpp"))


@pytest.fixture(scope="module")
def verdicts():
    untimed = [p for p in candidates() if p.name not in TIMED]
    got, proc = eval_json("--task", RELU, "--candidate", *[str(p) for p in untimed], "--trials", "3", "--no-perf")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    layered = [str(p) for p in untimed if header(p, "static-rule")]
    got_runtime, proc = eval_json("--task", RELU, "--candidate", *layered, "--trials", "3", "--no-perf", env=RUNTIME)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    static = {v["candidate"]["path"].split("/")[-1] + "#static": v for v in got if v["candidate"]["path"] in layered}
    got = [v for v in got if v["candidate"]["path"] not in layered] + got_runtime
    timed = [str(SUITE / n) for n in sorted(TIMED)]
    perf = ("--trials", "3", "--baselines", "none", "--warmup", "2", "--iters", "5")
    got_timed, proc = eval_json("--task", RELU, "--candidate", *timed, *perf)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    timed_layered = [p for p in timed if header(Path(p), "static-rule")]
    static.update({v["candidate"]["path"].split("/")[-1] + "#static": v for v in got_timed
                   if v["candidate"]["path"] in timed_layered})
    got_timed = [v for v in got_timed if v["candidate"]["path"] not in timed_layered]
    if timed_layered:
        more, proc = eval_json("--task", RELU, "--candidate", *timed_layered, *perf, env=RUNTIME)
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
        got_timed += more
    out = {**{v["candidate"]["path"].split("/")[-1]: v for v in got + got_timed}, **static}
    return out


@pytest.mark.parametrize("name", [p.name for p in candidates()])
def test_hostile_candidate_gets_its_verdict(verdicts, name):
    path = SUITE / name
    v = verdicts[name]
    assert v["status"] == header(path, "expect"), v["feedback"]
    rule = header(path, "rule")
    if rule:
        cheats = [h["rule"] for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
        assert rule in cheats, (cheats, v["feedback"])
        assert rule in v["feedback"]
    if v["status"] != "pass":
        assert v["reward"] < 0  # -1, or -0.5 + 0.5q for a partly correct replay (paper, eq. 2)


@pytest.mark.parametrize("name", [p.name for p in candidates() if header(p, "static-rule")])
def test_the_static_rules_catch_it_before_the_run_time_layer_does(verdicts, name):
    # The same candidate without ANVIL_STATIC_VERDICTS=0: a cheat named by the static rule, never built or run.
    v = verdicts[name + "#static"]
    cheats = [h["rule"] for h in v["gates"]["legal"]["hits"] if h["severity"] == "cheat"]
    assert v["status"] == "cheat" and header(SUITE / name, "static-rule") in cheats, (cheats, v["feedback"])
    assert not v["gates"]["run"]["ran"]


def test_a_candidate_honest_until_timed_is_seen_in_a_watched_timed_call(verdicts):
    # Its trials were honest; a random half of the timed calls ran under the aten trace.
    v = verdicts["c4_torch_once_timed_kb.py"]
    assert v["gates"]["run"]["compute_seen_in"].startswith("timed call"), v["gates"]["run"]
    assert "aten.relu" in " ".join(v["gates"]["run"]["aten_compute"])


def test_a_value_keyed_replay_cache_gains_nothing_while_timed(verdicts):
    # Its cache holds every input set of the trials; the timed calls' own sets were never seen, so every timed
    # call computes (3 ms) — rotating through the trials' sets, every one replayed in microseconds.
    v = verdicts["b2_value_cache_native.cpp"]
    perf = v["gates"]["perf"]
    assert perf["ran"] and perf["timing_sets"] == 5, perf
    assert perf["candidate"]["p25_ms"] >= 2.9, perf["candidate"]


def test_every_catalog_class_has_a_case():
    classes = {header(p, "class") for p in candidates()}
    assert {"A1", "A2", "A3", "A4", "A5", "B1", "B2", "B4", "B5", "B6", "B7", "C4", "D2", "D3", "D4", "D6",
            "E"} <= classes


def test_runs_report_their_sandbox_layers(verdicts):
    v = verdicts["b6_statistic_native.cpp"]
    assert "seccomp" in v["gates"]["run"]["sandbox"]
    assert "rlimits" in v["gates"]["run"]["sandbox"]


LEGIT = ROOT / "tests" / "redteam" / "legit"


def legit_candidates():
    return sorted(p for p in LEGIT.iterdir() if p.suffix in (".py", ".cpp"))


@pytest.fixture(scope="module")
def legit_verdicts():
    """Every legitimate candidate on its task (`anvil-task:`, an example task's name; relu by default), timed."""
    by_task = {}
    for p in legit_candidates():
        by_task.setdefault(header(p, "task") or "relu", []).append(str(p))
    got = {}
    for task, paths in by_task.items():
        verdicts, proc = eval_json("--task", str(EXAMPLES / "tasks" / f"{task}.py"), "--candidate", *paths,
                                   "--trials", "3", "--baselines", "none", "--warmup", "2", "--iters", "5")
        assert proc.returncode == 0, proc.stderr[-3000:]
        got.update({v["candidate"]["path"].split("/")[-1]: v for v in verdicts})
    return got


@pytest.mark.parametrize("name", [p.name for p in legit_candidates()])
def test_legitimate_candidate_passes(legit_verdicts, name):
    v = legit_verdicts[name]
    assert header(LEGIT / name, "expect") == "pass"
    assert v["status"] == "pass", v["feedback"]
    assert v["gates"]["perf"]["ran"], v["gates"]["perf"]


def test_the_sandbox_is_what_stops_reading_the_secret_seeds(verdicts):
    # No reference output is on the disk: the task server makes each from a secret seed kept in the prepared folder.
    # With the sandbox, the timing sets' seeds (which would let a candidate make each timed call's answer before
    # the timer) cannot be opened, and the attempt is reported...
    v = verdicts["d6_read_reference_native.cpp"]
    assert v["status"] == "runtime_error", v["feedback"]
    assert "cannot read" in v["gates"]["run"]["message"] and "kept_timing_seeds.json" in v["gates"]["run"]["message"]
    # ...also where Landlock is left out (a GPU driver that rejects it): the candidate's root holds the listed paths
    # alone; and where that root is left out too (a stricter driver), the prepared folder's secrets are covered
    # (`hidden`: /dev/null over each file)...
    layers = v["gates"]["run"]["sandbox"]
    if "userns" in layers:
        for switches, layer in (("-landlock", "root"), ("-landlock,-root", "hidden")):
            got, _ = eval_json("--task", RELU, "--candidate", str(SUITE / "d6_read_reference_native.cpp"), "--trials",
                               "3", env={**RUNTIME, "ANVIL_SANDBOX": switches})
            run = got[0]["gates"]["run"]
            assert got[0]["status"] == "runtime_error", got[0]["feedback"]
            assert "landlock" not in run["sandbox"] and layer in run["sandbox"], (switches, run["sandbox"])
            assert "cannot read" in run["message"] and "kept_timing_seeds.json" in run["message"], (switches, run)
    # ...and without the sandbox the seeds are there to read: the sandbox is what stops it. (Exec'd, as without the
    # zygote: a worker the zygote forked has the zygote's command line, so this candidate would not find the path
    # there — which is no defence: the path is in the worker's memory too.)
    got, proc = eval_json("--task", RELU, "--candidate", str(SUITE / "d6_read_reference_native.cpp"), "--trials", "3",
                          "--no-perf", env={**RUNTIME, "ANVIL_SANDBOX": "0", "ANVIL_ZYGOTE": "0"})
    assert got[0]["status"] == "runtime_error", got[0]["feedback"]
    assert "read the timing sets' secret seeds: [" in got[0]["gates"]["run"]["message"], got[0]
    # No isolation layer; the quotas' control groups stay (ANVIL_SANDBOX is about isolation, not quotas).
    assert got[0]["gates"]["run"]["sandbox"] in ([], ["cgroup"])


HELD_OUT = ROOT / "tests" / "redteam" / "held_out"


def eval_held_out(tmp_path, task_source, held_out, hostile):
    """A relu task (`task_source`) whose sidecar declares `held_out`, with `hostile` and the honest relu_kb
    candidate evaluated on it: their verdicts."""
    task = tmp_path / "relu_held_out.py"
    task.write_text(task_source)
    (tmp_path / "relu_held_out.anvil.json").write_text('{"held_out": ' + held_out + "}")
    honest = EXAMPLES / "candidates" / "relu" / "pass_kb.py"
    got, proc = eval_json("--task", str(task), "--candidate", str(hostile), str(honest), "--no-perf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_name = {v["candidate"]["path"].split("/")[-1]: v for v in got}
    return by_name[hostile.name], by_name[honest.name]


def test_a_kernel_specialized_for_the_benchmark_shape_fails_the_held_out_sets(tmp_path):
    """Catalog C1: the task's sidecar declares held-out input sets (module globals changed: other shapes, same
    model); a kernel that hard-codes the benchmark's shape is right on every trial and wrong on those, an honest
    one is right on all. Native candidates are built for the spec's shapes and skip them."""
    fixed = HELD_OUT / "c1_fixed_shape_kb.py"
    v, ok = eval_held_out(tmp_path, open(RELU).read(), '[{"batch_size": 5}, {"batch_size": 3, "dim": 333}]', fixed)
    assert v["status"] == header(fixed, "expect") == "wrong_answer"
    c = v["gates"]["correct"]
    assert c["passed"] == c["trials"] == 5
    assert [(h["changed"], h["ok"], h["problem"]) for h in c["held_out"]] == [
        ("batch_size=5", False, "shape"), ("batch_size=3, dim=333", False, "shape")]
    assert "held-out input sets" in v["feedback"] and "batch_size=5" in v["feedback"]
    assert v["reward"] < 0 and v["correctness_rate"] == 5 / 7
    assert ok["status"] == "pass"
    assert [h["ok"] for h in ok["gates"]["correct"]["held_out"]] == [True, True]


def test_a_kernel_probing_its_input_fails_a_held_out_set_of_mixed_structure(tmp_path):
    """Catalog C2: the sidecar swaps get_inputs for the task's own maker of mixed inputs (zero rows at random
    places); a kernel that decides from a probe of the first elements that the batch is all zero is right on every
    random trial and wrong there, an honest one is right on all."""
    source = open(RELU).read() + """

def get_inputs_mixed():
    # Zero rows at random places, the first always among them (what a probe of the first elements sees).
    x = torch.randn(batch_size, dim)
    x[torch.rand(batch_size) < 0.5] = 0
    x[0] = 0
    return [x]
"""
    probe = HELD_OUT / "c2_zero_probe_kb.py"
    v, ok = eval_held_out(tmp_path, source, '[{"get_inputs": {"use": "get_inputs_mixed"}}]', probe)
    assert v["status"] == header(probe, "expect") == "wrong_answer", v["feedback"]
    (held,) = v["gates"]["correct"]["held_out"]
    assert held["changed"] == "get_inputs=get_inputs_mixed" and not held["ok"]
    assert v["gates"]["correct"]["passed"] == v["gates"]["correct"]["trials"]
    assert ok["status"] == "pass"


def test_an_output_buffer_reused_from_call_to_call_is_not_a_replay(tmp_path):
    # Legitimate (catalog section 2): ModelNew keeps one output buffer and returns it from every call. Each timed
    # call's output is copied when the call returns, so the recheck compares what each set really got; before
    # that, every set's "last output" was the buffer's final content and an honest candidate was a cheat.
    source = (EXAMPLES / "candidates" / "relu" / "pass_kb.py").read_text()
    model = source[source.index("class ModelNew"):]
    reuse = source.replace(model, '''class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _ext.relu_forward(x.contiguous())
        if self.out is None or self.out.shape != y.shape:
            self.out = torch.empty_like(y)
        self.out.copy_(y)
        return self.out
''').replace("# anvil-expect: pass", "# anvil-expect: pass (one output buffer for every call)")
    cand = tmp_path / "reuse_buffer_kb.py"
    cand.write_text(reuse)
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--baselines", "none",
                           "--warmup", "1", "--iters", "6")
    assert v["status"] == "pass", v["feedback"]
    perf = v["gates"]["perf"]
    assert perf["timing_sets"] == 6 and perf["rechecked"] == list(range(6)), perf  # Six sets: all looked at.


def test_the_recheck_of_a_large_output_compares_drawn_elements_and_still_catches_a_replay(tmp_path):
    # An output over 2^18 elements is rechecked on the elements a seed anvil sends after the last call draws
    # (RecheckPoints): 1 MB instead of the whole. The C4 candidate replays its first output while timed: almost
    # every drawn element is wrong. The honest one passes. The task server compares the rechecks (nothing of them
    # reaches a file).
    task = tmp_path / "relu_large.py"
    task.write_text(Path(RELU).read_text().replace("batch_size = 16", "batch_size = 1024").replace(
        "dim = 1024", "dim = 512"))
    verdicts, proc = eval_json("--task", str(task), "--candidate", str(SUITE / "c4_phase_detect_native.cpp"),
                               str(EXAMPLES / "candidates" / "relu" / "pass_native.cpp"), "--trials", "3",
                               "--baselines", "none", "--warmup", "2", "--iters", "5", "--keep",
                               env={"TMPDIR": str(tmp_path)})
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    replay, honest = verdicts
    assert replay["status"] == "cheat" and "perf.recheck" in replay["feedback"], replay["feedback"]
    # The hit says how the last output differed: enough to tell a replay from rounding.
    (recheck,) = [h for h in replay["gates"]["legal"]["hits"] if h["rule"] == "perf.recheck"]
    assert "output out0 differs in " in recheck["message"] and "First mismatch at index" in recheck["message"], recheck
    assert honest["status"] == "pass", honest["feedback"]
    assert honest["gates"]["perf"]["rechecked"] == list(range(5))
    assert not list(tmp_path.glob("anvil-eval-*/trials/recheck_*")), "a recheck reached a file"


def raw_openat_candidate(path, flags, about):
    """A native ReLU candidate that first opens `path` with `flags` by a raw openat system call spelled as the
    instruction's bytes (0f 05: nothing a source or symbol scan can name, only the sandbox stops it), and computes
    ReLU honestly only when that open fails."""
    return '''// anvil-about: ABOUT; honest only when the open is refused
#include <cstdint>

#include "anvil/native.h"

static long RawOpenat(const char* path) {  // openat(AT_FDCWD, path, FLAGS, 0644)
  long ret;
  register long mode asm("r10") = 0644;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(257L), "D"(-100L), "S"(path), "d"(FLAGSL), "r"(mode)
               : "rcx", "r11", "memory");
  return ret;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const bool opened = RawOpenat("TARGET") >= 0;
  for (int64_t i = 0; i < n; ++i) y[i] = opened ? 0.0f : (x[i] > 0.0f ? x[i] : 0.0f);
  return 0;
}
'''.replace("TARGET", str(path)).replace("FLAGS", str(flags)).replace("ABOUT", about)


def test_without_landlock_a_candidate_still_cannot_write_outside_its_scratch(tmp_path):
    # The H200's driver does not start under Landlock, so there the sandbox runs without it. The rofs layer
    # (every mount read-only but the scratch, in the candidate's mount namespace) still stops the candidate
    # from planting files or overwriting cached reference outputs. This one computes ReLU honestly only when
    # its write fails.
    target = tmp_path / "planted.txt"
    cand = tmp_path / "plant_native.cpp"
    cand.write_text(raw_openat_candidate(target, 65, "writes outside its scratch"))  # O_WRONLY | O_CREAT
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                           env={**RUNTIME, "ANVIL_SANDBOX": "-landlock"})
    assert v["status"] == "pass", v["feedback"]
    assert "rofs" in v["gates"]["run"]["sandbox"] and "landlock" not in v["gates"]["run"]["sandbox"]
    assert not target.exists()
    # The same candidate without the layers plants its file (and is wrong): the layers are what stopped it.
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                           env={**RUNTIME, "ANVIL_SANDBOX": "-landlock,-rofs,-root"})
    assert v["status"] == "wrong_answer" and target.exists(), v["feedback"]


def test_without_landlock_a_candidate_still_cannot_read_outside_its_listed_paths(tmp_path, schema):
    # Without Landlock, files the user can read on disk (another task's cached reference outputs, the home
    # directory) are not in the candidate's root at all (layer `root`: bind mounts of the listed paths on an empty
    # tmpfs, pivot_root). This one computes ReLU honestly only when its read fails.
    secret = tmp_path / "cache" / "expected.bin"
    secret.parent.mkdir()
    secret.write_text("another task's reference outputs")
    cand = tmp_path / "peek_native.cpp"
    cand.write_text(raw_openat_candidate(secret, 0, "reads a file outside its job"))  # O_RDONLY
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                           env={**RUNTIME, "ANVIL_SANDBOX": "-landlock"})
    layers = v["gates"]["run"]["sandbox"]
    if "userns" not in layers:
        pytest.skip("no user namespaces here")
    assert v["status"] == "pass" and "root" in layers and "landlock" not in layers, (v["feedback"], layers)
    validate(v, schema)  # The schema knows every layer a verdict can name.
    # Without the layer the file is read (and the candidate is wrong): the layer is what stopped it.
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                           env={**RUNTIME, "ANVIL_SANDBOX": "-landlock,-root"})
    assert v["status"] == "wrong_answer" and "root" not in v["gates"]["run"]["sandbox"], v["feedback"]


PARENT_MEMORY = """// anvil-about: opens the memory of the processes above it (its parent, the anvil or zygote that started it,
// and theirs) for reading through /proc by raw system call instructions; honest only when every open is refused
#include <cstdint>

#include "anvil/native.h"

static long Raw(long n, long a = 0, long b = 0, long c = 0) {
  long ret;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}

// "/proc/<pid>/<leaf>", spelled without a string literal a scan could read.
static void ProcPath(char* out, long pid, const char* leaf) {
  const char head[] = {'/', 'p', 'r', 'o', 'c', '/'};
  int n = 0;
  for (char c : head) out[n++] = c;
  char digits[24];
  int d = 0;
  do { digits[d++] = static_cast<char>('0' + pid % 10); pid /= 10; } while (pid > 0);
  while (d > 0) out[n++] = digits[--d];
  out[n++] = '/';
  while (*leaf) out[n++] = *leaf++;
  out[n] = 0;
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) S ppid ..."), or 0.
static long ParentOf(long pid) {
  char path[64], buf[512];
  const char leaf[] = {'s', 't', 'a', 't', 0};
  ProcPath(path, pid, leaf);
  const long fd = Raw(257, -100, reinterpret_cast<long>(path), 0);
  if (fd < 0) return 0;
  const long n = Raw(0, fd, reinterpret_cast<long>(buf), sizeof(buf) - 1);
  Raw(3, fd);
  if (n <= 0) return 0;
  long i = n - 1;
  while (i > 0 && buf[i] != ')') --i;
  i += 4;  // ") S "
  long ppid = 0;
  while (i < n && buf[i] >= '0' && buf[i] <= '9') ppid = ppid * 10 + (buf[i++] - '0');
  return ppid;
}

static bool OpensAnAncestorsMemory() {
  const char leaf[] = {'m', 'e', 'm', 0};
  long pid = Raw(110);  // getppid
  for (int up = 0; up < 3 && pid > 1; ++up, pid = ParentOf(pid)) {
    char path[64];
    ProcPath(path, pid, leaf);
    const long fd = Raw(257, -100, reinterpret_cast<long>(path), 0);
    if (fd >= 0) return true;
  }
  return false;
}

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const bool opened = OpensAnAncestorsMemory();
  for (int64_t i = 0; i < n; ++i) y[i] = opened ? 0.0f : (x[i] > 0.0f ? x[i] : 0.0f);
  return 0;
}
"""


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_candidate_cannot_open_the_memory_of_anvil_or_the_zygote(tmp_path, zygote):
    # anvil holds the seeds and compares against the reference outputs; the zygote forks every later worker. A
    # child whose user is theirs (anvil run as root, or the same user) passes the uid part of the /proc/<pid>/mem
    # access check, and without Landlock (the H200) no path rule stops the open (/proc is even writable on a machine
    # with a GPU driver). The user namespace does: a process in another user namespace needs CAP_SYS_PTRACE in its
    # target's, and a candidate has none there.
    cand = tmp_path / "parent_memory_native.cpp"
    cand.write_text(PARENT_MEMORY)
    for sandbox in ("", "-landlock"):
        (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                               env={**RUNTIME, "ANVIL_SANDBOX": sandbox, "ANVIL_ZYGOTE": zygote})
        if "userns" not in v["gates"]["run"]["sandbox"]:
            pytest.skip("no user namespaces here")
        assert v["status"] == "pass", (sandbox, v["feedback"])
    if os.geteuid() != 0:
        return
    # The child of anvil run as root without the user namespace keeps root's capabilities and opens them: the
    # candidate works, and the user namespace is what stops it.
    (v,), proc = eval_json("--task", RELU, "--candidate", str(cand), "--trials", "2", "--no-perf",
                           env={**RUNTIME, "ANVIL_SANDBOX": "-landlock,-userns", "ANVIL_ZYGOTE": zygote})
    assert "userns" not in v["gates"]["run"]["sandbox"], v["gates"]["run"]["sandbox"]
    assert v["status"] == "wrong_answer", v["feedback"]


def test_held_out_auto_needs_no_sidecar_and_skips_what_the_reference_cannot_take(tmp_path):
    """`--held-out auto`: a task without a sidecar gets one held-out set, batch_size one smaller (16 -> 15); the
    kernel hard-coded for the benchmark's shape fails it, the honest one passes. A task whose model is sized by
    the batch (a [batch_size, 1] parameter) cannot take it: no set is made and the honest kernel passes."""
    fixed = HELD_OUT / "c1_fixed_shape_kb.py"
    honest = EXAMPLES / "candidates" / "relu" / "pass_kb.py"
    task = tmp_path / "relu_plain.py"
    task.write_text(open(RELU).read())
    got, proc = eval_json("--task", str(task), "--candidate", str(fixed), str(honest), "--no-perf",
                          "--held-out", "auto")
    assert proc.returncode == 0, proc.stderr[-3000:]
    v, ok = got
    assert v["status"] == "wrong_answer"
    assert [(h["changed"], h["ok"]) for h in v["gates"]["correct"]["held_out"]] == [("batch_size=15", False)]
    assert ok["status"] == "pass"
    assert [(h["changed"], h["ok"]) for h in ok["gates"]["correct"]["held_out"]] == [("batch_size=15", True)]

    sized = tmp_path / "relu_sized.py"
    sized.write_text(open(RELU).read().replace(
        "        super().__init__()",
        "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(batch_size, 1))", 1).replace(
        "return torch.relu(x)", "return torch.relu(x) * self.scale", 1))
    assert "self.scale" in sized.read_text() and "* self.scale" in sized.read_text()
    (ok,), proc = eval_json("--task", str(sized), "--candidate", str(honest), "--no-perf", "--held-out", "auto")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ok["status"] == "pass", ok["feedback"]
    assert ok["gates"]["correct"]["held_out"] == []
