"""The command line: `python -m anvil_py.static_check --candidate FILE [--format kernelbench|native]
[--kernelbench-checks cpu|cuda]`.

Prints the report of check_source() as one JSON line and exits 0; exits 2 when the file cannot be read.
"""

import argparse
import json
import sys

from . import __doc__ as PACKAGE_DOC
from . import kernelbench_checks
from .analyzer import check_source
from .rules import VERSION


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m anvil_py.static_check", description=PACKAGE_DOC.split("\n")[0])
    parser.add_argument("--candidate", required=True, help="the candidate's Python file")
    parser.add_argument("--format", default="kernelbench", choices=["kernelbench", "native"])
    parser.add_argument("--kernelbench-checks", choices=["cpu", "cuda"],
                        help="also KernelBench's static checker, with its backend check for this backend")
    args = parser.parse_args(argv)
    try:
        with open(args.candidate, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        print(f"static_check: cannot read {args.candidate}: {e}", file=sys.stderr)
        return 2
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        report = {"version": VERSION, "hits": [], "parse_error": f"the file is not UTF-8: {e}"}
    else:
        report = check_source(text, args.format, args.candidate)
        if args.kernelbench_checks:
            report["hits"] += kernelbench_checks.check(text, args.kernelbench_checks)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
