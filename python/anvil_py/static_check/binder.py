"""Binding names to kinds: imports, definitions, assignments, loop targets, parameters, class attributes.

`prepare()` binds the module before the visit (module symbols, extension factories, names that functions
set with `global`, attributes set on `self`); `build_scope()` binds one function's scope when the visit
enters it. A binding keeps the most telling kind seen (see kinds.rank).
"""

import ast

from .kinds import EXT, REF, SCALAR, SHAPE, TENSOR, TRITON, UNKNOWN, Scope, merge, rank
from .syntax import const_str, iter_local
from .torch_names import KERNEL_DECORATORS


class Binder:
    """Scopes and bindings for the analyzer (a mixin; resolution comes from resolver.Resolver)."""

    def bind_import(self, node, scope):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    scope.locals[a.asname] = ("qual", a.name)
                else:
                    top = a.name.split(".")[0]
                    scope.locals[top] = ("qual", top)
            return
        mod = "." * (node.level or 0) + (node.module or "")
        for a in node.names:
            if a.name == "*":
                if mod.startswith("torch"):
                    self.star_imports.append(mod)
                continue
            path = f"{mod}.{a.name}" if mod else a.name
            scope.locals[a.asname or a.name] = REF if a.name == "Model" else ("qual", path)

    def def_kind(self, node, scope):
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            q = self.qual_of(target, scope)
            if q in KERNEL_DECORATORS:
                self.builds_extension = True
                return TRITON
        return ("func", node)

    def bind(self, scope, name, kind):
        if name in scope.globals:
            scope = self.mscope
        cur = scope.locals.get(name)
        if kind is not None and kind is not UNKNOWN:
            if cur is None or rank(kind) >= rank(cur):
                scope.locals[name] = kind
        elif name not in scope.locals:
            scope.locals[name] = UNKNOWN

    def bind_target(self, t, kind, value, scope):
        if isinstance(t, ast.Name):
            self.bind(scope, t.id, kind)
        elif isinstance(t, ast.Starred):
            self.bind_target(t.value, kind, None, scope)
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and rank(kind) >= 4:
            owner = scope  # a dict or list that holds extensions or layers, bound where the name lives
            while owner is not None and t.value.id not in owner.locals and t.value.id not in owner.globals:
                owner = owner.parent
            self.bind(owner or self.mscope, t.value.id, ("pycoll", (kind,)))
        elif isinstance(t, (ast.Tuple, ast.List)):
            elems = None
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                elems = [(self.resolve(v, scope), v) for v in value.elts]
            elif kind is not None and kind[0] == "pycoll" and len(kind[1]) == len(t.elts):
                elems = [(k, None) for k in kind[1]]
            else:
                each = SCALAR if kind in (SHAPE, SCALAR) else TENSOR if kind == TENSOR else None
                elems = [(each, None)] * len(t.elts)
            for sub, (k, v) in zip(t.elts, elems):
                self.bind_target(sub, k, v, scope)

    def iter_kind(self, it, scope):
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and self.is_builtin(it.func.id, scope):
            if it.func.id == "range":
                return SCALAR
            if it.func.id == "enumerate" and it.args:
                return ("pycoll", (SCALAR, self.iter_kind(it.args[0], scope)))
        k = self.resolve(it, scope)
        if k is None:
            return None
        if k[0] in ("container", "pycoll"):
            return merge(k[1])
        return SCALAR if k == SHAPE else TENSOR if k == TENSOR else None

    def bind_const(self, scope, t, value):
        """Records the string value of a name bound to a constant string (None once bound to anything else)."""
        if not isinstance(t, ast.Name) or not isinstance(t.ctx, ast.Store):
            return
        if t.id in scope.globals:
            scope = self.mscope
        v = self.fold_str(value, scope) if value is not None else None
        if t.id not in scope.consts:
            scope.consts[t.id] = v
        elif scope.consts[t.id] != v:
            scope.consts[t.id] = None

    def bind_statement(self, n, scope):
        if isinstance(n, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            for t in ast.walk(n.target):
                self.bind_const(scope, t, None)
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            if getattr(n, "value", None) is None:
                return
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, ast.Name):
                    self.bind_const(scope, t, n.value)
                else:
                    for sub in ast.walk(t):
                        self.bind_const(scope, sub, None)
            k = self.resolve(n.value, scope)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                self.bind_target(t, k, n.value, scope)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            self.bind_target(n.target, self.iter_kind(n.iter, scope), None, scope)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                if item.optional_vars is not None:
                    self.bind_target(item.optional_vars, self.resolve(item.context_expr, scope), None, scope)
        elif isinstance(n, (ast.Call, ast.AugAssign)):  # list.append/extend/insert and += grow a local list
            name, added = None, None
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add):
                name, added = n.target.id, self.resolve(n.value, scope)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                  and n.func.attr in ("append", "extend", "insert") and n.args):
                name, added = n.func.value.id, self.resolve(n.args[-1], scope)
                if n.func.attr != "extend":
                    added = ("pycoll", (added,))
            cur = scope.locals.get(name) if name else None
            if cur is not None and cur[0] == "pycoll" and added is not None and added[0] == "pycoll":
                scope.locals[name] = ("pycoll", (cur[1] + added[1])[:64])

    def param_kind(self, fn, arg, default):
        ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if "Tensor" in ann:
            return TENSOR
        if isinstance(default, ast.Constant) or ann in ("int", "float", "bool", "str"):
            return SCALAR
        return TENSOR if getattr(fn, "name", "") == "forward" else UNKNOWN

    def build_scope(self, fn, parent, method_cls):
        scope = Scope(parent, method_cls or (parent.cls if parent is not None else None))
        a = fn.args
        params = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
        pairs = list(zip(params, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
        decos = {ast.unparse(d) for d in getattr(fn, "decorator_list", [])}
        for i, (arg, default) in enumerate(pairs):
            if method_cls is not None and i == 0 and "staticmethod" not in decos:
                scope.locals[arg.arg] = ("class", method_cls) if "classmethod" in decos else ("self", method_cls)
            else:
                scope.locals[arg.arg] = self.param_kind(fn, arg, default)
        for extra in (a.vararg, a.kwarg):
            if extra is not None:
                scope.locals[extra.arg] = UNKNOWN
        if isinstance(fn, ast.Lambda):
            return scope
        nodes = list(iter_local(fn))
        for n in nodes:
            if isinstance(n, ast.Global):
                scope.globals.update(n.names)
        for n in nodes:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                self.bind_import(n, scope)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope.locals[n.name] = self.def_kind(n, scope)
            elif isinstance(n, ast.ClassDef):
                scope.locals[n.name] = REF if n.name == "Model" else ("class", n)
        stmts = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
                                                    ast.With, ast.AsyncWith, ast.comprehension, ast.Call,
                                                    ast.AugAssign))]
        stmts.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        for _ in range(2):
            for n in stmts:
                self.bind_statement(n, scope)
        return scope

    def prepare(self):
        """Module symbols, extension factories, module globals set by functions, class attributes."""
        top = []
        stack = list(reversed(self.tree.body))
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.TryStar)):
                for field in ("finalbody", "orelse", "handlers", "body"):
                    stack.extend(reversed(getattr(n, field, []) or []))
                continue
            if isinstance(n, ast.ExceptHandler):
                stack.extend(reversed(n.body))
                continue
            top.append(n)
        for n in top:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                self.bind_import(n, self.mscope)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.module_syms[n.name] = self.def_kind(n, self.mscope)
            elif isinstance(n, ast.ClassDef):
                self.module_syms[n.name] = REF if n.name == "Model" else ("class", n)
        functions = [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.classes = [n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)]
        for fn in functions:
            local = Scope(self.mscope, None)
            body = list(iter_local(fn))
            for n in body:
                if isinstance(n, (ast.Import, ast.ImportFrom)):
                    self.bind_import(n, local)
            loads = any(isinstance(n, ast.Call) and self.resolve(n, local) == EXT for n in body)
            if loads and any(isinstance(n, ast.Return) and n.value is not None for n in body):
                self.ext_factories.add(id(fn))
        self.class_infos = {}  # built above before module assignments were bound
        for n in top:
            self.bind_statement(n, self.mscope)
        for n in iter_local(self.tree):  # loop, with and comprehension targets at module level
            if isinstance(n, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.comprehension)):
                self.bind_statement(n, self.mscope)
        for fn in functions:  # module names that functions set: `global` and stores into module dicts
            nodes = list(iter_local(fn))
            if not any(isinstance(n, ast.Global) or (isinstance(n, ast.Assign) and any(
                    isinstance(t, ast.Subscript) for t in n.targets)) for n in nodes):
                continue
            scope = self.build_scope(fn, self.mscope, None)
            for n in nodes:
                if isinstance(n, ast.Assign):
                    k = self.resolve(n.value, scope)
                    for t in n.targets:
                        if isinstance(t, ast.Name) and t.id in scope.globals and rank(k) >= 4:
                            self.bind(self.mscope, t.id, k)
        for _ in range(2):
            for cls in self.classes:
                self.collect_class_attrs(cls)

    def collect_class_attrs(self, cls):
        info = self.class_info(cls)
        methods = sorted(info.methods.values(), key=lambda m: (m.name != "__init__", m.lineno))
        for m in methods:
            if not m.args.args:
                continue
            selfname = m.args.args[0].arg
            scope = self.build_scope(m, self.mscope, cls)

            def is_self(e):
                return isinstance(e, ast.Name) and e.id == selfname

            for n in iter_local(m):
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
                    k = self.resolve(n.value, scope)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Attribute) and is_self(t.value):
                            self.set_attr(info, t.attr, k)
                        elif (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute)
                              and is_self(t.value.value) and rank(k) >= 4):
                            self.set_attr(info, t.value.attr, ("pycoll", (k,)))
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                    f, args = n.func, n.args
                    if isinstance(f.value, ast.Attribute) and is_self(f.value.value) and f.attr in (
                            "append", "extend", "insert") and args:
                        k = self.resolve(args[-1], scope)
                        elems = k[1] if k is not None and k[0] == "pycoll" else (k,)
                        cur = info.attrs.get(f.value.attr)
                        old = cur[1] if cur is not None and cur[0] == "container" else ()
                        info.attrs[f.value.attr] = ("container", old + tuple(elems))
                    elif is_self(f.value) and f.attr in ("add_module", "register_module", "register_buffer",
                                                         "register_parameter") and len(args) >= 2:
                        name = const_str(args[0])
                        if name:
                            kind = TENSOR if f.attr.startswith("register_b") or f.attr.endswith("parameter") \
                                else self.resolve(args[1], scope)
                            self.set_attr(info, name, kind)
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
                      and len(n.args) == 3 and is_self(n.args[0]) and const_str(n.args[1])):
                    self.set_attr(info, n.args[1].value, self.resolve(n.args[2], scope))

    @staticmethod
    def set_attr(info, name, kind):
        cur = info.attrs.get(name)
        if kind is not None and (cur is None or rank(kind) >= rank(cur)):
            info.attrs[name] = kind
