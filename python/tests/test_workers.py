"""The Python workers on their own: tensor directories, prepare, and task errors by stage."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from anvil_py import tensor_io

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad_tasks"


def test_tensor_dir_round_trip(tmp_path):
    values = [("a", torch.randn(3, 4)), ("b", torch.randn(5, dtype=torch.float64).to(torch.bfloat16)),
              ("c", torch.tensor([True, False])), ("d", torch.arange(6, dtype=torch.int64).reshape(2, 3).t()),
              ("e", 7), ("f", torch.empty(0, 3))]
    tensor_io.write_dir(tmp_path, values)
    back = tensor_io.read_dir(tmp_path)
    assert [n for n, _ in back] == ["a", "b", "c", "d", "e", "f"]
    for (_, want), (_, got) in zip(values, back):
        if isinstance(want, torch.Tensor):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert torch.equal(got, want.contiguous())
        else:
            assert got == want
    manifest = json.loads((tmp_path / "tensors.json").read_text())
    assert manifest["tensors"][1] == {"name": "b", "dtype": "bfloat16", "shape": [5], "file": "b.bin"}
    assert os.path.getsize(tmp_path / "a.bin") == 3 * 4 * 4
    # Read tensors are the candidate's own copies: writing to them (catalog B5) leaves the files, which the
    # next candidate reads, as they were — also when the files are read-only, as in the sandbox.
    os.chmod(tmp_path / "a.bin", 0o444)
    a = tensor_io.read_dir(tmp_path)[0][1]
    a.fill_(42)
    assert torch.equal(tensor_io.read_dir(tmp_path)[0][1], values[0][1])


def prepare(task, out, seeds="1,2"):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "anvil_py.task_worker", "prepare", "--task", str(task), "--out",
                           str(out), "--seeds", seeds], capture_output=True, text=True, env=env, timeout=300)


def test_prepare_writes_the_spec_and_no_trial_nor_weight(tmp_path):
    p = prepare(ROOT / "examples" / "tasks" / "small_mlp.py", tmp_path)
    assert p.returncode == 0, p.stderr
    spec = json.loads((tmp_path / "spec.json").read_text())
    assert [x["name"] for x in spec["params"]] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert spec["outputs"][0]["shape"] == [16, 32]
    assert len(spec["task"]["sha256"]) == 64
    # The task server makes each trial from its seed and builds the reference as prepare does: no trial's tensors
    # on the disk, no weight, and no seed in the spec.
    assert spec["trial_files"] is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]
    assert "seed" not in (tmp_path / "spec.json").read_text()


def test_each_seed_gives_fresh_inputs():
    from anvil_py.task_worker import make_inputs  # noqa: PLC0415

    def get_inputs():
        return [torch.randn(16, 8)]

    a, b = make_inputs(get_inputs, 1, "cpu")[0], make_inputs(get_inputs, 2, "cpu")[0]
    assert not torch.equal(a, b), "each trial needs fresh inputs"
    assert torch.equal(a, make_inputs(get_inputs, 1, "cpu")[0]), "a seed makes its inputs again"


def test_task_errors_name_their_stage(tmp_path):
    for name, stage in [("syntax_error.py", "import"), ("no_model.py", "missing"), ("bad_inputs.py", "get_inputs"),
                        ("bad_forward.py", "forward"), ("import_error.py", "import")]:
        out = tmp_path / name
        p = prepare(BAD / name, out)
        assert p.returncode == 3, (name, p.stderr)
        err = json.loads((out / "error.json").read_text())
        assert err["stage"] == stage, (name, err)
        assert err["message"]


def test_model_new_comes_from_the_reference_state_or_is_built_the_usual_way():
    """A ModelNew whose parameters and buffers the reference's state dict (the task server's weights) covers is built
    on the meta device and filled from it (no random initialization); one with other tensors (a plain attribute, a
    non-persistent buffer, other names) is built on the CPU as before. Both end with the reference's values."""
    from anvil_py import model_init

    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    spec = {"init_inputs": [], "init_seed": 42}

    class Same(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))

    class Loose(Same):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(3)  # Not a parameter or buffer: only __init__ knows its value.

    class Renamed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

    class Module:
        pass

    # As trial_channel.receive_weights gives them: ({name: tensor}, the state dict's names).
    want = {"net." + k: v.clone() for k, v in reference.state_dict().items()}
    served = ({k: v.clone() for k, v in want.items()}, list(want))
    for cls, fast in ((Same, True), (Loose, False), (Renamed, False)):
        module = Module()
        module.ModelNew = cls
        built = model_init._from_state(cls, [], spec.get("init_seed", 42), torch.device("cpu"),
                                       model_init._served_state(served))
        assert (built is not None) == fast, cls.__name__
        model = model_init.build_model_new(module, spec, torch.device("cpu"), served)
        assert not any(t.is_meta for t in model.state_dict().values())
        if cls is not Renamed:
            for k, v in want.items():
                assert torch.equal(model.state_dict()[k], v), (cls.__name__, k)
        else:  # Its own names: its own values, made under the init seed.
            torch.manual_seed(42)
            assert torch.equal(model.fc.weight, torch.nn.Linear(4, 3).weight)
        if cls is Loose:
            assert torch.equal(model.scale, torch.ones(3))
        if cls is Same:
            # Filled with the served tensors themselves: still parameters.
            weight = model.net[0].weight
            assert isinstance(weight, torch.nn.Parameter) and weight.requires_grad
    # Without weights (a task that has none): built the usual way, under the init seed.
    module = Module()
    module.ModelNew = Renamed
    model = model_init.build_model_new(module, spec, torch.device("cpu"))
    torch.manual_seed(42)
    assert torch.equal(model.fc.weight, torch.nn.Linear(4, 3).weight)


def test_kernel_trace_that_cannot_start_says_why_in_its_file(tmp_path):
    """The recorder's failures end in one `E` line anvil reports (perf.trace.error), never in a crash: a missing
    recorder library, and a CUPTI that cannot be loaded."""
    from anvil_py.kernel_trace import KernelTrace

    trace = KernelTrace(str(tmp_path / "no_such_libanvil_trace.so"))
    trace.mark("trial_0", 1, 2)  # A no-op without a recorder.
    trace.write(str(tmp_path / "a.tsv"))
    line = (tmp_path / "a.tsv").read_text()
    assert line.startswith("E\tcannot load ") and "no_such_libanvil_trace.so" in line
    lib = Path(os.environ.get("ANVIL_BIN") or ROOT / "build" / "anvil").parent / "libanvil_trace.so"
    if not lib.exists():
        return  # Built without CUPTI's headers: the first case is all there is.
    os.environ["ANVIL_CUPTI"] = str(tmp_path / "libcupti.so.missing")
    try:
        trace = KernelTrace(str(lib))
    finally:
        del os.environ["ANVIL_CUPTI"]
    assert trace.error and "cannot load CUPTI" in trace.error
    trace.write(str(tmp_path / "b.tsv"))
    assert (tmp_path / "b.tsv").read_text().startswith("E\tcannot load CUPTI")


def test_tamper_guard_sees_replaced_functions_and_swapped_code():
    from anvil_py import tensor_io, timing
    from anvil_py.tamper_guard import TamperGuard
    import torch

    guard = TamperGuard(None)
    assert guard.changes() == []
    original_code = tensor_io.write_dir.__code__
    original_elapsed = torch.cuda.Event.elapsed_time
    try:
        tensor_io.write_dir.__code__ = (lambda path, values: None).__code__  # Same function object, other code.
        torch.cuda.Event.elapsed_time = lambda self, end: 0.0
        assert guard.changes() == ["anvil_py.tensor_io.write_dir", "torch.cuda.Event.elapsed_time"]
    finally:
        tensor_io.write_dir.__code__ = original_code
        torch.cuda.Event.elapsed_time = original_elapsed
    assert guard.changes() == []
    assert timing.Timer  # The guard watched the timing module too (imported above).


def test_recheck_points_draw_what_the_engine_draws():
    # src/run/call_clock_test.cc pins the same draws for the engine's RecheckPoints.
    from anvil_py.timing import RECHECK_POINTS, recheck_points
    assert recheck_points(RECHECK_POINTS, 1, 0, 0) is None
    p = recheck_points(100_000_000, 12345, 3, 1)
    assert len(p) == RECHECK_POINTS and p[:4].tolist() == [73691360, 19907364, 46624592, 3505586]
    assert p[-1] == 85489051
    assert recheck_points(300_000, 2**64 - 1, 0, 0)[:3].tolist() == [143936, 288969, 117001]


def test_recheck_sample_picks_what_the_engine_picks():
    # src/run/call_clock_test.cc pins the same draws for the engine's RecheckSample.
    from anvil_py.timing import recheck_sample
    assert recheck_sample(50, 8, 12345) == [24, 32, 35, 36, 40, 44, 46, 47]
    assert recheck_sample(100, 8, 2**64 - 1) == [3, 5, 7, 33, 36, 45, 51, 82]
    assert recheck_sample(5, 8, 7) == [0, 1, 2, 3, 4]
    assert recheck_sample(0, 8, 7) == []


def test_a_load_inline_calls_key_is_its_arguments_but_the_name_as_torch_binds_them():
    import inspect

    import torch.utils.cpp_extension as ce

    from anvil_py import candidate_worker
    sig = inspect.signature(ce.load_inline)
    key = lambda *a, **k: candidate_worker._extension_call(sig, a, k)[0]["key"]  # noqa: E731
    base = key("a", "int f();", functions=["f"])
    assert key("b", ["int f();"], None, None, ["f"]) == base  # Another name; positional as torch reads them.
    assert key("a", "int f();", functions="f") == base  # A single function name is a list of one.
    assert key("a", "int g();", functions=["f"]) != base
    assert key("a", "int f();", functions=["f"], extra_cflags=["-O3"]) != base
    call, is_module = candidate_worker._extension_call(sig, ("a", "int f();"), {"is_python_module": False})
    assert not is_module and call["name"] == "a" and call["cpp_sources"] == ["int f();"]


def test_init_describes_forwards_inputs_as_placeholders(tmp_path):
    out = tmp_path / "init.json"
    subprocess.run([sys.executable, "-m", "anvil_py.task_worker", "init", "--task",
                    str(ROOT / "examples" / "tasks" / "linear_relu.py"), "--out", str(out)], check=True,
                   cwd=ROOT / "python")
    init = json.loads(out.read_text())
    assert [(d["dtype"], d["shape"]) for d in init["inputs"]] == [("float32", [32, 256])], init


def test_the_timers_state_is_read_only_once_it_times(tmp_path):
    # Native code in the candidate's process that rewrites what a timed call relies on (the driver's entry points,
    # catalog D8; on the CPU the clock it reads through a GOT slot) faults instead: the page is sealed at the first
    # call, the GOT bound at load and read-only (full RELRO).
    lib = Path(os.environ.get("ANVIL_BIN", ROOT / "build" / "anvil")).parent / "libanvil_timer.so"
    symbols = subprocess.run(["nm", str(lib)], capture_output=True, text=True, check=True).stdout
    offset = next(int(line.split()[0], 16) for line in symbols.splitlines() if line.endswith("g_sealedE"))
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "BIND_NOW" in dynamic, dynamic
    probe = tmp_path / "probe.py"
    probe.write_text(f"""
import ctypes, sys
from anvil_py.timing import CompiledTimer
timer = CompiledTimer({str(lib)!r}, cuda=False)
timer.call(lambda: None, None, None)
base = next(int(l.split("-")[0], 16) for l in open("/proc/self/maps") if l.rstrip().endswith("libanvil_timer.so"))
print("timed", flush=True)
ctypes.memset(base + {offset}, 0, 8)
print("wrote", flush=True)
""")
    run = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert run.stdout == "timed\n" and run.returncode == -11, (run.returncode, run.stdout, run.stderr[-2000:])


def test_an_output_whose_pages_were_made_unreadable_is_found_without_touching_them():
    # What a fault handler waiting on an output's pages leaves (red team: b4_lazy_pages_native.cpp): the worker's
    # copy into the task server's buffer gets EFAULT, and says so without reading the pages from Python (that would
    # run the handler, or here crash the test).
    import ctypes
    import mmap

    from anvil_py.trial_channel import _write_into
    m = mmap.mmap(-1, 3 * mmap.PAGESIZE)
    t = torch.frombuffer(m, dtype=torch.float32)
    t[:4] = torch.arange(4, dtype=torch.float32)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fd = os.memfd_create("out")
    assert libc.mprotect(t.data_ptr() + mmap.PAGESIZE, mmap.PAGESIZE, 0) == 0
    try:
        assert not _write_into(fd, t)
        assert _write_into(fd, t[: mmap.PAGESIZE // 4])  # its first page only
        assert _write_into(fd, torch.empty(0))
    finally:
        libc.mprotect(t.data_ptr() + mmap.PAGESIZE, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE)
    assert _write_into(fd, t)
    assert os.pread(fd, 16, 0) == torch.arange(4, dtype=torch.float32).numpy().tobytes()
    os.close(fd)


def test_the_report_channel_refuses_a_descriptor_put_in_its_place(tmp_path):
    # A candidate that puts /dev/null where anvil's pipe was would swallow the worker's seals and findings.
    from anvil_py.report_channel import ReportChannel
    read, write = os.pipe()
    report = ReportChannel(write)
    (tmp_path / "kernel_trace.tsv").write_text("abc")
    report.seal_file(str(tmp_path), "kernel_trace.tsv")
    line = json.loads(os.read(read, 65536).decode())
    assert line == {"kind": "file", "file": "kernel_trace.tsv",
                    "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, write)
    try:
        report.send({"kind": "ops", "compute": []})
        raise AssertionError("sent into /dev/null")
    except RuntimeError as err:
        assert "replaced" in str(err)


def test_a_model_new_that_computes_on_its_weights_in_init_keeps_them():
    # Legit sweep 2: a multiplier folded into a weight, a square weight kept transposed under its own name. The
    # reference's state dict loaded over them undid that (a wrong answer); KernelBench builds both under one seed.
    from anvil_py import model_init

    spec = {"init_inputs": [], "init_seed": 42}
    torch.manual_seed(42)

    class Ref(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

    ref = Ref()
    served = (dict(ref.state_dict()), list(ref.state_dict()))

    class Folded(Ref):
        def __init__(self):
            super().__init__()
            with torch.no_grad():
                self.fc.weight.mul_(2.0)

    class Transposed(Ref):
        def __init__(self):
            super().__init__()
            self.fc.weight = torch.nn.Parameter(self.fc.weight.data.t().contiguous())

    class Reinitialized(Ref):  # Another initialization, no computation on it: the reference's weights.
        def __init__(self):
            super().__init__()
            torch.nn.init.normal_(self.fc.weight)

    class Module:
        pass

    for cls, want in ((Folded, 2.0 * ref.fc.weight), (Transposed, ref.fc.weight.t()), (Reinitialized, ref.fc.weight)):
        module = Module()
        module.ModelNew = cls
        model = model_init.build_model_new(module, spec, torch.device("cpu"), served)
        assert torch.allclose(model.fc.weight, want), cls.__name__


def test_tensors_kept_outside_the_state_are_found_wherever_they_are():
    # A holder object or a functools.partial keeping a parameter: filled from the state dict on the meta device,
    # they kept the meta tensors (a runtime error).
    import functools
    import types

    from anvil_py import model_init

    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.holder = types.SimpleNamespace(weight=self.fc.weight)  # The parameter itself, kept elsewhere too.

    class Partial(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.f = functools.partial(torch.nn.functional.linear, bias=torch.zeros(4))

    class Clean(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.act = functools.partial(torch.nn.functional.leaky_relu, negative_slope=0.1)

    assert model_init.holds_loose_tensors(Holder()) and model_init.holds_loose_tensors(Partial())
    assert not model_init.holds_loose_tensors(Clean())


def test_tuples_of_the_init_inputs_reach_model_new_as_tuples():
    value = [3, (5, 7), [1, (2,)], "same", None]
    assert tensor_io.from_json_value(json.loads(json.dumps(tensor_io.to_json_value(value)))) == value


def test_the_reference_is_built_on_its_device_or_on_the_cpu_where_its_init_fails_there():
    """reference_model runs Model's __init__ on the device itself (seconds of random initialization on the CPU for a
    level-3 model) and says where; an __init__ that cannot run there (it reads a value) runs on the CPU. The meta
    device stands in for CUDA: one that holds no values."""
    from anvil_py import model_init
    from anvil_py.task_worker import reference_model

    class Task:
        @staticmethod
        def get_init_inputs():
            return [4]

    class Plain(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = torch.nn.Linear(n, n)

    class ReadsAValue(Plain):
        def __init__(self, n):
            super().__init__(n)
            self.scale = float(self.fc.weight.detach().abs().max())  # A value: not on the meta device.

    for cls, want in ((Plain, "meta"), (ReadsAValue, "cpu")):
        Task.Model = cls
        model, init_inputs, init_on = reference_model(Task, "meta", 42)
        assert (init_on, init_inputs, model.fc.weight.device.type) == (want, [4], "meta"), cls.__name__
    Task.Model = ReadsAValue
    model, _, init_on = reference_model(Task, "cpu", 42)
    torch.manual_seed(42)
    assert init_on == "cpu" and torch.equal(model.fc.weight, Plain(4).fc.weight)

    # ModelNew's __init__ runs where the server says the reference's ran (the hello's init_on): one computing on its
    # own weights gets them from that device's generator; an __init__ that fails there is the candidate's init error.
    spec = {"init_inputs": [4], "init_seed": 42}

    class Module:
        pass

    class Folded(Plain):
        def __init__(self, n):
            super().__init__(n)
            with torch.no_grad():
                self.fc.weight.mul_(2.0)

    module = Module()
    module.ModelNew = Folded
    torch.manual_seed(42)
    want = 2.0 * Plain(4).fc.weight
    served = ({"fc.weight": torch.zeros(4, 4), "fc.bias": torch.zeros(4)}, ["fc.weight", "fc.bias"])
    assert torch.equal(model_init.build_model_new(module, spec, torch.device("cpu"), served, "cpu").fc.weight, want)
    module.ModelNew = ReadsAValue
    try:
        model_init.build_model_new(module, spec, torch.device("cpu"), None, "meta")
        raise AssertionError("an __init__ that fails where the reference's ran must fail")
    except model_init.TaskError as e:
        assert e.stage == "init", e
