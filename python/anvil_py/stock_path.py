"""The stock path `anvil bench throughput` measures anvil against: what a KernelBench-style harness does per
candidate, in a fresh Python process — import torch, build the reference Model, import the candidate (whose
load_inline compiles its extension from scratch in a build folder of its own), then KernelBench's checks: N
correctness trials against the reference (allclose, atol = rtol = 1e-2) and timed calls bracketed by CUDA events
(cpu: perf_counter) after warmup. No sandbox, no static checks, no kernel trace: this is the baseline, not a
verifier. Prints one JSON object: {"compiled", "correct", "trials_passed", "runtime_ms", "seconds": {phase: s},
"error"}.
"""

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _to(x, device):
    import torch
    return x.to(device) if isinstance(x, torch.Tensor) else x


def main():
    p = argparse.ArgumentParser(prog="anvil_py.stock_path")
    p.add_argument("--task", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--device", default="cuda")
    p.add_argument("--build-dir", required=True, help="load_inline's build folder (TORCH_EXTENSIONS_DIR)")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=100)
    args = p.parse_args()
    os.environ["TORCH_EXTENSIONS_DIR"] = args.build_dir
    result = {"compiled": False, "correct": False, "trials_passed": 0, "runtime_ms": None, "seconds": {},
              "error": None}
    last = time.perf_counter()

    def lap(phase):
        nonlocal last
        now = time.perf_counter()
        result["seconds"][phase] = now - last
        last = now

    try:
        import torch
        lap("import")
        device = torch.device(args.device)
        ref = _module(args.task, "stock_reference")
        torch.manual_seed(42)
        init = ref.get_init_inputs()
        model = ref.Model(*init).to(device)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        lap("reference")
        cand = _module(args.candidate, "stock_candidate")  # load_inline compiles here.
        torch.manual_seed(42)
        new = cand.ModelNew(*init).to(device)
        result["compiled"] = True
        lap("compile")
        with torch.no_grad():
            for trial in range(args.trials):
                torch.manual_seed(1000 + trial)
                inputs = [_to(x, device) for x in ref.get_inputs()]
                want = model(*inputs)
                got = new(*inputs)
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                if got.shape != want.shape or not torch.allclose(got, want, atol=1e-2, rtol=1e-2):
                    break
                result["trials_passed"] += 1
            result["correct"] = result["trials_passed"] == args.trials
            lap("trials")
            if result["correct"]:
                torch.manual_seed(42)
                inputs = [_to(x, device) for x in ref.get_inputs()]
                for _ in range(args.warmup):
                    new(*inputs)
                times = []
                for _ in range(args.iters):
                    if device.type == "cuda":
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        start.record()
                        new(*inputs)
                        end.record()
                        torch.cuda.synchronize(device)
                        times.append(start.elapsed_time(end))
                    else:
                        t0 = time.perf_counter()
                        new(*inputs)
                        times.append((time.perf_counter() - t0) * 1e3)
                result["runtime_ms"] = sum(times) / len(times)
                lap("timing")
    except BaseException as err:  # noqa: BLE001 - the candidate's failure is the result
        result["error"] = f"{type(err).__name__}: {err}"[:500]
        result["traceback"] = traceback.format_exc()[-2000:]
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
