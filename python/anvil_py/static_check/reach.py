"""Whole-module conclusions: what ModelNew.forward reaches, and the hits that depend on it.

After the visit, "ref" and "cast" events of live code become py.reference_model and py.dtype_cast hits, and
"compute", "host" and "arith" events of functions that forward reaches (or that run in place of or around it:
ModelNew.__call__, decorators of forward, module hooks, Python bodies of torch ops) become py.torch_compute, py.host_compute
and py.tensor_arith;
a try whose body reaches the custom kernel and whose handler reaches torch compute is py.fallback; a .py the
candidate names that shadows a module is py.shadow_import; in the kernelbench format, a missing or unused
custom kernel is py.no_extension or py.unused_extension.
"""

import ast

from .kinds import REF
from .rules import CHEAT, EVIDENCE, SHADOWABLE
from .torch_names import CALL_MEMBERS
from .visitor import MODULE_KEY


class Reach:
    """Reachability and the conclusions drawn from it, for the analyzer (a mixin)."""

    def reach(self, roots):
        seen, stack = set(), list(roots)
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            stack.extend(self.edges.get(k, ()))
        return seen

    def summary(self, key, want, memo, active=None):
        """Whether function `key` (or what it reaches) has an event `want` ("ext" or "compute")."""
        if key in memo:
            return memo[key]
        active = active or set()
        if key in active:
            return False
        active.add(key)
        found = False
        for kind, _, _, severity, _, _ in self.events.get(key, []):
            if (want == "ext" and kind == "ext") or (want == "compute" and (
                    (kind in ("compute", "host") and severity == CHEAT) or kind == "ref")):
                found = True
                break
        if not found:
            found = any(self.summary(t, want, memo, active) for t in self.edges.get(key, ()))
        active.discard(key)
        memo[key] = found
        return found

    def find_model_new(self):
        k = self.module_syms.get("ModelNew")
        if k is not None and k[0] == "class":
            return k[1]
        return None

    def finish(self):
        model = self.find_model_new()
        forward_key = None
        roots = [MODULE_KEY]
        if model is not None:
            seen = set()
            stack = [model]
            while stack:
                cls = stack.pop()
                if id(cls) in seen:
                    continue
                seen.add(id(cls))
                info = self.class_info(cls)
                roots += [id(m) for m in info.methods.values()]
                for b in info.bases:
                    if b == REF:
                        self.hit("py.reference_model", CHEAT, cls, "inherits from the reference Model")
                    elif b is not None and b[0] == "class":
                        stack.append(b[1])
            fwd = self.class_member(model, "forward")
            if fwd is not None and fwd[0] == "func":
                forward_key = id(fwd[1])
        hot = self.reach([forward_key]) if forward_key is not None else set()
        around = self.around_forward(model, fwd if model is not None else None, hot)
        live = self.reach(roots)
        ext_memo, comp_memo = {}, {}
        for key in live | set(around):
            where = ""
            if key in hot and key != forward_key and key in self.funcs:
                where = f" (in {getattr(self.funcs[key], 'name', '<lambda>')}, reached from ModelNew.forward)"
            elif key in around:
                where = f" (in {getattr(self.funcs[key], 'name', '<lambda>')}, {around[key]})"
                hot.add(key)
            for kind, node, message, severity, _, _ in self.events.get(key, []):
                if kind == "ref":
                    self.hit("py.reference_model", CHEAT, node, message)
                elif kind == "cast":
                    self.hit("py.dtype_cast", EVIDENCE, node, message)
                elif key in hot and kind == "compute":
                    self.hit("py.torch_compute", severity, node, message + where)
                elif key in hot and kind == "host":
                    self.hit("py.host_compute", severity, node, message + where)
                elif key in hot and kind == "arith":
                    self.hit("py.tensor_arith", EVIDENCE, node, message + where)
            for tr in self.tries.get(key, []):
                self.check_fallback(key, tr, ext_memo, comp_memo)
        for stem, node in self.py_files:
            if stem in SHADOWABLE:
                self.hit("py.shadow_import", CHEAT, node, f"names {stem}.py, which shadows a module")
            for name, imp in self.imports:
                if name.split(".")[0] == stem:
                    self.hit("py.shadow_import", CHEAT, imp, f"imports {stem}, a file the candidate names")
        if self.fmt != "kernelbench":
            return
        anchor = model if model is not None else ast.Module(body=[], type_ignores=[])
        if not self.builds_extension:
            self.hit("py.no_extension", CHEAT, anchor, "no custom kernel is built (no load_inline/load/.so)")
        elif forward_key is not None and not self.summary(forward_key, "ext", ext_memo):
            self.hit("py.unused_extension", EVIDENCE, anchor, "a custom kernel is built but forward never calls it")

    def around_forward(self, model, fwd, hot):
        """Functions that run in place of or around forward, and what each does: ModelNew.__call__ (and
        _call_impl, __getattribute__), decorators of forward (and the functions they define), module hooks and
        Python bodies of torch ops (only with a ModelNew). Returns {key: description} for those forward itself
        does not reach."""
        if model is None:
            return {}
        roots = {}
        for name in CALL_MEMBERS:
            m = self.class_member(model, name)
            if m is not None and m[0] == "func":
                roots.setdefault(id(m[1]), f"ModelNew.{name}, which runs in place of forward")
        if fwd is not None and fwd[0] == "func" and not isinstance(fwd[1], ast.Lambda):
            for d in fwd[1].decorator_list:
                k = self.resolve(d.func if isinstance(d, ast.Call) else d, self.mscope)
                if k is not None and k[0] == "func":
                    roots.setdefault(id(k[1]), "a decorator of ModelNew.forward, which wraps it")
        for key, how in self.forward_roots.items():
            roots.setdefault(key, how)
        around = {}
        for key, how in roots.items():
            for k in self.reach([key]):
                if k not in hot and k in self.funcs:
                    around.setdefault(k, how)
        return around

    def check_fallback(self, key, tr, ext_memo, comp_memo):
        tid = id(tr)
        body_ext = False
        handler = None
        for kind, _, _, severity, tags, target in self.events.get(key, []):
            for tag_id, part in tags:
                if tag_id != tid:
                    continue
                if part == "body":
                    body_ext = body_ext or kind == "ext" or (
                        kind == "follow" and self.summary(target, "ext", ext_memo))
                elif handler is None and ((kind in ("compute", "host") and severity == CHEAT) or kind == "ref" or (
                        kind == "follow" and self.summary(target, "compute", comp_memo))):
                    handler = tr.handlers[part]
        if body_ext and handler is not None:
            self.hit("py.fallback", CHEAT, handler,
                     "the try body calls the custom kernel and the except handler falls back to torch")
