"""Two red-team sweep tables side by side (tests/redteam/sweep/run.py --out), e.g. one policy against another:
the candidates whose verdict differs, with each side's cheat rules.

    python3 bench/scripts/sweep_diff.py A.md B.md [--a-section "## Default"] [--names musacoder kernelbench]
"""

import argparse
import re
import sys


def rows(path, section=None):
    text = open(path).read()
    if section:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end > 0 else None]
    out = {}
    for line in text.splitlines():
        m = re.match(r"\| `([^`]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]*) \|", line)
        if m:
            out[m.group(1)] = (m.group(4).strip(), m.group(5).strip().strip("*"), m.group(6).strip())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--a-section")
    ap.add_argument("--b-section")
    ap.add_argument("--names", nargs=2, default=["A", "B"])
    args = ap.parse_args()
    a, b = rows(args.a, args.a_section), rows(args.b, args.b_section)
    both = sorted(set(a) & set(b))
    same = sum(a[k][1] == b[k][1] for k in both)
    print(f"{len(both)} candidates in both; {same} with the same verdict, {len(both) - same} different.\n")
    print(f"| candidate | expected | {args.names[0]} | {args.names[1]} |")
    print("|---|---|---|---|")
    for k in both:
        if a[k][1] != b[k][1]:
            print(f"| `{k}` | {a[k][0]} | {a[k][1]} ({a[k][2]}) | {b[k][1]} ({b[k][2]}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
