"""Static evidence for the `legal` gate: reads a candidate's Python with `ast` and reports rule hits.

Runs in the trusted process, never imports or executes the candidate, and uses the standard library only
(no torch), so it is fast and safe on hostile code. A hit of severity "cheat" changes the verdict; "evidence"
is only recorded. Resolution is static and conservative: what cannot be resolved produces no hit.

    python -m anvil_py.static_check --candidate FILE [--format kernelbench|native]

prints one JSON object {"version": 1, "hits": [...], "parse_error": null | "..."} and exits 0. Each hit is
{"rule", "severity", "line", "col", "excerpt", "message"}; line and col are 1-based (col counts UTF-8 bytes).
Rule ids and what they mean are in RULES (rules.py); `check_source()` is the in-process entry point.

The modules, in the order the analysis uses them:
    rules.py        rule ids, severities, the call/import rule tables and the hack name sets
    torch_names.py  torch's names: the plumbing allowlist (Appendix J), compute namespaces and methods
    kinds.py        kinds of value the resolver tells apart, scopes, facts about a class
    syntax.py       small AST helpers: string constants, a function's own nodes, dropping `__main__` blocks
    resolver.py     what an expression refers to: names, attributes, calls, subscripts, class members
    binder.py       binding names: imports, assignments, parameters, class attributes, module preparation
    visitor.py      the walk: call-graph keys, try tags, events recorded per function
    hack_rules.py   hits at the node where they occur (threads, files, monkeypatching, imports, strings)
    events.py       what a call or operator computes (torch compute, the extension, the reference Model)
    reach.py        whole-module conclusions: what ModelNew.forward reaches, fallbacks, unused kernels
    analyzer.py     the analyzer that combines them, and check_source()
    __main__.py     the command line
"""

from .analyzer import check_source
from .rules import CHEAT, EVIDENCE, RULES, VERSION

__all__ = ["CHEAT", "EVIDENCE", "RULES", "VERSION", "check_source"]
