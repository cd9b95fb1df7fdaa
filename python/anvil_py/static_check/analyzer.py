"""The analyzer, which combines the mixins of this package, and check_source(), the in-process entry point."""

import ast
import sys

from .binder import Binder
from .events import ComputeEvents
from .hack_rules import HackRules
from .kinds import Scope
from .reach import Reach
from .resolver import Resolver
from .rules import VERSION
from .syntax import StripMain, const_str
from .torch_names import STORAGE_META
from .visitor import MODULE_KEY, Ctx, Visitor

EXCERPT_CHARS = 240
RECURSION_LIMIT = 5000  # the visitor recurses once per AST level; Python's parser caps nesting well below this


class Analyzer(Resolver, Binder, Visitor, HackRules, ComputeEvents, Reach):
    """One candidate's analysis: `run()` binds the module, visits it and draws conclusions into `hits`."""

    def __init__(self, tree, lines, fmt):
        self.tree = tree
        self.lines = lines
        self.fmt = fmt
        self.hits = {}
        self.mscope = Scope(None, None)
        self.module_syms = self.mscope.locals
        self.star_imports = []
        self.classes = []
        self.class_infos = {}
        self.ext_factories = set()
        self.builds_extension = False
        self.events = {MODULE_KEY: []}
        self.edges = {MODULE_KEY: set()}
        self.tries = {}
        self.funcs = {}
        self.imports = []
        self.py_files = []
        self.docstrings = set()
        self.forward_roots = {}  # functions that run in place of or around forward: id -> how they are reached
        self.storage_meta = set()  # storage calls whose only use is a metadata attribute (data_ptr, nbytes)
        self.call_args = set()  # expressions passed directly as a call's argument
        self.attr_bases = set()  # attributes that are the base of another attribute (only the outer is judged)

    def hit(self, rule, severity, node, message):
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        key = (rule, severity, line, col)
        if key in self.hits:
            return
        excerpt = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.hits[key] = {"rule": rule, "severity": severity, "line": line, "col": col,
                          "excerpt": excerpt[:EXCERPT_CHARS], "message": message}

    def run(self):
        self.prepare()
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Expr) and const_str(n.value) is not None:
                self.docstrings.add(id(n.value))
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute):
                self.attr_bases.add(id(n.value))
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Call) and n.attr in STORAGE_META:
                self.storage_meta.add(id(n.value))
            elif isinstance(n, ast.Call):
                self.call_args.update(id(a) for a in [*n.args, *[kw.value for kw in n.keywords]])
        ctx = Ctx(self.mscope, MODULE_KEY)
        for stmt in self.tree.body:
            self.visit(stmt, ctx)
        self.finish()


def check_source(text, fmt="kernelbench", filename="<candidate>"):
    """Returns the report dict for Python source `text`."""
    report = {"version": VERSION, "hits": [], "parse_error": None}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        report["parse_error"] = f"SyntaxError: {e.msg} (line {e.lineno})"
        return report
    except (ValueError, RecursionError, MemoryError) as e:
        report["parse_error"] = f"{type(e).__name__}: {e}"
        return report
    try:
        tree = StripMain().visit(tree)
        analyzer = Analyzer(tree, text.splitlines(), fmt)
        analyzer.run()
    except RecursionError:
        report["parse_error"] = "RecursionError: source too deeply nested to analyse"
        return report
    report["hits"] = sorted(analyzer.hits.values(), key=lambda h: (h["line"], h["col"], h["rule"]))
    return report
