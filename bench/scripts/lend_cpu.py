"""What a compile baseline's lending of task code saves the sessions beside it, on the CPU:

    .venv/bin/python bench/scripts/lend_cpu.py [--python DIR] [--layers 24]

Starts the task server of DIR (default: this tree's python/; give an older tree's, e.g. from `git archive`, to
compare), asks it for a torch.compile baseline of a model whose inductor compile takes seconds here, and once the
compile has begun opens one session on each bundled example task, one after another. Prints, per session, the
seconds from its `open` to its answer and the milliseconds it says it waited for task code, then the compile's
seconds. Inductor's cache is a fresh folder: every run compiles anew.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "python" / "tests")]

from anvil_py import trial_channel  # noqa: E402
from test_task_server import SLOW_COMPILE  # noqa: E402 - the test's model, 12 layers there

TASKS = ["relu.py", "softmax.py", "matmul.py", "small_mlp.py", "sum_reduction.py", "linear_relu.py"]



def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=str(ROOT / "python"), help="the python/ tree whose task server runs")
    parser.add_argument("--layers", type=int, default=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        slow = Path(tmp) / "slow_compile.py"
        slow.write_text(SLOW_COMPILE.replace("range(12)", f"range({args.layers})"))
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ, PYTHONPATH=args.python, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"))
        proc = subprocess.Popen([sys.executable, "-m", "anvil_py.task_server", "--control-fd", str(theirs.fileno())],
                                pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        control.settimeout(600)
        try:
            trial_channel.receive(control)  # hello
            began = time.monotonic()
            trial_channel.send(control, {"op": "baseline", "id": 1, "task": str(slow), "prepared": str(slow),
                                         "seeds": ["3"], "mode": "compile"})
            time.sleep(3)  # dynamo traces first (imports included); inductor compiles for the rest.
            sent, answered, ends = {}, {}, {}
            compiled = None
            for n, name in enumerate(TASKS, start=10):
                task = str(ROOT / "examples" / "tasks" / name)
                ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                sent[n] = time.monotonic()
                trial_channel.send(control, {"op": "open", "id": n, "task": task, "prepared": task, "seeds": ["5"]},
                                   [peer.fileno()])
                peer.close()
                ends[n] = ours
                while n not in answered:
                    reply, _ = trial_channel.receive(control)
                    if reply["id"] == 1:
                        compiled = (reply, time.monotonic() - began)
                    else:
                        answered[reply["id"]] = (reply, time.monotonic())
            while compiled is None:
                reply, _ = trial_channel.receive(control)
                compiled = (reply, time.monotonic() - began)
            print(f"python: {args.python}")
            print("| task | open answered after s | waited for task code ms | answered before the compile |")
            print("|---|---|---|---|")
            for n, name in enumerate(TASKS, start=10):
                trial_channel.send(control, {"op": "close", "id": 100 + n, "session": n})
                closed, _ = trial_channel.receive(control)
                reply, at = answered[n]
                print(f"| {name} | {at - sent[n]:.2f} | {closed.get('waited_ms', 0):.0f} | "
                      f"{'yes' if at - began < compiled[1] else 'no'} |")
            reply, at = compiled
            print(f"compile baseline: answered after {at:.1f} s, compile_seconds {reply.get('compile_seconds', 0):.1f}, "
                  f"graphs {reply.get('compile_graphs')}, wait {reply.get('phases_ms', {}).get('wait', 0):.0f} ms")
        finally:
            control.close()
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
