"""The walk over the module: which function each node belongs to, and the events recorded for it.

Every function and lambda is a key of the call graph (the module body is MODULE_KEY); `event()` records what
a node does under its function's key, with the try body or handler it sits in, and `edges` link a function
to those it calls or defines. The per-node rules are in hack_rules.py and events.py.
"""

import ast

from .rules import CHEAT, EVIDENCE, FRAME_ATTRS
from .syntax import const_str

MODULE_KEY = 0


class Ctx:
    """Where the visit is: the scope, the call-graph key, the enclosing try parts, the class whose body it is."""

    __slots__ = ("scope", "key", "tags", "method_cls")

    def __init__(self, scope, key, tags=(), method_cls=None):
        self.scope = scope
        self.key = key
        self.tags = tags
        self.method_cls = method_cls


class Visitor:
    """The recursive visit for the analyzer (a mixin)."""

    def visit(self, node, ctx):
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            self.visit_function(node, ctx)
            return
        if t is ast.ClassDef:
            self.on_class(node, ctx)
            for e in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
                self.visit(e, ctx)
            body_ctx = Ctx(ctx.scope, ctx.key, ctx.tags, method_cls=node)
            for stmt in node.body:
                self.visit(stmt, body_ctx)
            return
        if t in (ast.Try, ast.TryStar):
            self.tries.setdefault(ctx.key, []).append(node)
            tid = id(node)
            for s in node.body:
                self.visit(s, Ctx(ctx.scope, ctx.key, ctx.tags + ((tid, "body"),), ctx.method_cls))
            for i, h in enumerate(node.handlers):
                if h.type is not None:
                    self.visit(h.type, ctx)
                hctx = Ctx(ctx.scope, ctx.key, ctx.tags + ((tid, i),), ctx.method_cls)
                for s in h.body:
                    self.visit(s, hctx)
            for s in node.orelse + node.finalbody:
                self.visit(s, ctx)
            return
        if t is ast.Call:
            self.on_call(node, ctx)
        elif t in (ast.BinOp, ast.AugAssign, ast.Compare):
            self.on_arith(node, ctx)
        if t in (ast.BinOp, ast.JoinedStr):
            folded = self.fold_str(node, ctx.scope)
            if folded is not None:
                self.on_string(node, folded)
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete):
            self.on_store(node, ctx)
        elif t in (ast.Import, ast.ImportFrom):
            self.on_import(node, ctx)
        elif t is ast.Attribute:
            if node.attr in FRAME_ATTRS:
                self.hit("py.gc_frame", CHEAT, node, f"reads frame internals (.{node.attr})")
            self.on_attribute(node, ctx)
        elif t is ast.Name:
            self.on_name(node, ctx)
        elif t is ast.Subscript:
            if isinstance(node.ctx, ast.Load) and self.qual_of(node.value, ctx.scope) == "os.environ":
                self.hit("py.file_access", EVIDENCE, node, "reads the environment")
        elif t is ast.Constant:
            if isinstance(node.value, str) and id(node) not in self.docstrings:
                self.on_string(node)
        elif t in (ast.List, ast.Tuple):
            words = {const_str(e) for e in node.elts}
            if words & {"pip", "pip3"} and "install" in words:
                self.hit("py.pip_install", CHEAT, node, "runs pip install")
        for child in ast.iter_child_nodes(node):
            self.visit(child, ctx)

    def visit_function(self, fn, ctx):
        is_lambda = isinstance(fn, ast.Lambda)
        if not is_lambda:
            for d in fn.decorator_list:
                self.visit(d, ctx)
            self.note_decorated(fn, ctx.scope)
        for d in [*fn.args.defaults, *[x for x in fn.args.kw_defaults if x is not None]]:
            self.visit(d, ctx)
        key = id(fn)
        self.funcs[key] = fn
        self.events.setdefault(key, [])
        self.edges.setdefault(key, set())
        if ctx.key != MODULE_KEY and ctx.method_cls is None:
            self.edges[ctx.key].add(key)
        scope = self.build_scope(fn, ctx.scope, None if is_lambda else ctx.method_cls)
        inner = Ctx(scope, key)
        if is_lambda:
            self.visit(fn.body, inner)
            return
        if fn.name in ("__torch_function__", "__torch_dispatch__"):
            self.hit("py.lazy_tensor", CHEAT, fn, f"defines {fn.name}, which can defer or fake results")
        for d in fn.decorator_list:
            if self.qual_of(d.func if isinstance(d, ast.Call) else d, ctx.scope) == "torch.compile":
                self.event(inner, "compute", d, "uses torch.compile, so torch generates the kernels", CHEAT)
        for stmt in fn.body:
            self.visit(stmt, inner)

    def event(self, ctx, kind, node, message="", severity=CHEAT, target=None):
        self.events[ctx.key].append((kind, node, message, severity, ctx.tags, target))
        if target is not None:
            self.edges.setdefault(ctx.key, set()).add(target)
