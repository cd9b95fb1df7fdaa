"""Run folders for issue 38's first target: every problem of a KernelBench tree gets a verdict at its real size.

Writes two KernelBench run folders (level_L_problem_P_sample_S_kernel.*):
- OUT/own: for each problem, the project's own candidates from tests/gpu/kernelbench_run whose `anvil-expect` is
  `pass` (symbolic links), judged with anvil's default rules;
- OUT/reference: for every other problem, the bench mode's candidate: the problem's own source with `ModelNew =
  Model`, the reference run as the candidate. Judge it with the legality rules off: `--policy kernelbench-v0.1`
  (torch ops allowed) and ANVIL_STATIC_VERDICTS=0 (the static rules' hits, py.no_extension and py.reference_model
  among them, kept as evidence): its verdict measures anvil's own costs on a task, not a kernel.

    python3 bench/scripts/all_problems.py --kernelbench ../shared/kernelbench --out RUNS
    anvil kernelbench --run RUNS/own --kernelbench ../shared/kernelbench --backend cuda ...
    ANVIL_STATIC_VERDICTS=0 anvil kernelbench --run RUNS/reference --kernelbench ../shared/kernelbench \
        --backend cuda --policy kernelbench-v0.1 ...

On the CPU, with examples/tasks/relu.py and softmax.py as a two-problem tree (level1/1_relu.py, 2_softmax.py), the
reference candidates pass that way, and are `cheat` (py.no_extension, py.reference_model) without it.

The reference candidates are made here, from the problems given, and never kept in the repository.
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWN = ROOT / "tests" / "gpu" / "kernelbench_run"
HEADER = ("# anvil-expect: pass\n"
          "# anvil-about: the reference itself as the candidate (bench/scripts/all_problems.py; judge it with "
          "--policy kernelbench-v0.1 and ANVIL_STATIC_VERDICTS=0)\n")


def problems(kernelbench):
    """[(level, number, path)] of every problem file, in order."""
    found = []
    for level_dir in sorted(Path(kernelbench).glob("level*")):
        m = re.fullmatch(r"level(\d+)", level_dir.name)
        if not m:
            continue
        for f in level_dir.glob("*.py"):
            n = re.match(r"(\d+)_", f.name)
            if n:
                found.append((int(m.group(1)), int(n.group(1)), f))
    return sorted(found)


def own_passing():
    """{(level, number): [candidate files expected to pass]}."""
    own = {}
    for f in sorted(OWN.glob("level_*_problem_*_sample_*_kernel.*")):
        m = re.match(r"level_(\d+)_problem_(\d+)_sample_\d+_kernel\.", f.name)
        expect = re.search(r"anvil-expect:\s*(\S+)", f.read_text()[:2048])
        if m and expect and expect.group(1) == "pass":
            own.setdefault((int(m.group(1)), int(m.group(2))), []).append(f)
    return own


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True, help="folder with level1/, level2/, ...")
    parser.add_argument("--out", required=True, help="where the run folders own/ and reference/ go")
    parser.add_argument("--all-reference", action="store_true",
                        help="the reference candidate for every problem, own candidates or not")
    args = parser.parse_args(argv)
    listed = problems(args.kernelbench)
    if not listed:
        sys.exit(f"all_problems: no level*/N_*.py problem under {args.kernelbench}")
    own_dir, ref_dir = Path(args.out, "own"), Path(args.out, "reference")
    own_dir.mkdir(parents=True, exist_ok=True)
    ref_dir.mkdir(parents=True, exist_ok=True)
    own = {} if args.all_reference else own_passing()
    counts = {"own": 0, "reference": 0}
    for level, number, path in listed:
        mine = own.get((level, number))
        if mine:
            for f in mine:
                link = own_dir / f.name
                if not link.exists():
                    link.symlink_to(f)
            counts["own"] += 1
            continue
        source = path.read_text()
        if not re.search(r"^class Model\b", source, re.M):
            print(f"all_problems: {path} defines no class Model: skipped", file=sys.stderr)
            continue
        (ref_dir / f"level_{level}_problem_{number}_sample_0_kernel.py").write_text(
            HEADER + source + "\n\nModelNew = Model\n")
        counts["reference"] += 1
    print(f"{len(listed)} problems: {counts['own']} with own candidates ({own_dir}), {counts['reference']} with the "
          f"reference as the candidate ({ref_dir})")


if __name__ == "__main__":
    main()
