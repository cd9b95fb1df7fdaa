"""What the task server's --warm-compiler saves the run's first compile baseline, on the CPU:

    .venv/bin/python bench/scripts/warm_compiler_cpu.py

Prints the import of torch.compile's modules in a fresh interpreter, then, for a server started with
--warm-compiler on (once it says the import is done) and one started without, the first compile baseline's
`dynamo` phase (docs/verdict.md, `baseline_phase_seconds`) and its compile.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "python" / "tests")]

from test_task_server import TASKS, Server, baseline  # noqa: E402

IMPORT = ("import time, torch; t = time.monotonic(); import torch._dynamo; d = time.monotonic(); "
          "import torch._inductor.compile_fx; print(f'torch._dynamo {d - t:.2f} s, '"
          "f'torch._inductor.compile_fx {time.monotonic() - d:.2f} s')")


def main():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    print("imports:", subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, env=env,
                                     check=True).stdout.strip())
    for flags in (("--warm-compiler", "on"), ("--warm-compiler", "off")):
        server = Server(*flags)
        try:
            while flags[1] == "on" and not server.ask({"op": "stats"})["compiler_imported"]:
                time.sleep(0.1)
            set_up, _ = baseline(server, TASKS / "relu.py", ["81"], mode="compile")
            print(" ".join(flags), f"dynamo {set_up['phases_ms']['dynamo']:.0f} ms,",
                  f"compile {set_up['compile_seconds']:.2f} s")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
