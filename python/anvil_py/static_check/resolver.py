"""Static resolution: what a name, attribute, call or subscript refers to, as a kind (see kinds.py).

Resolution is conservative: what cannot be resolved is None, and None produces no hit. The mixin reads the
analyzer's module scope, star imports, class records and extension factories (set up in analyzer.py and
binder.py); it never records hits.
"""

import ast
import builtins

from .kinds import EXT, EXTFN, OBJ, PATH, REF, SCALAR, SHAPE, STR, TENSOR, TRITON, UNKNOWN, ClassInfo, merge
from .syntax import const_str
from .torch_names import (AUTOGRAD_FUNCTIONS, COMPILERS, CONTAINER_LAYERS, EXT_LOADERS, PARAM_CLASSES,
                          SCALAR_RESULT_METHODS, TENSOR_SCALAR_ATTRS, TENSOR_TENSOR_ATTRS, TORCH_NONCOMPUTE_NS)

MAX_DEPTH = 24
BUILTIN_NAMES = frozenset(dir(builtins))


class Resolver:
    """Name resolution for the analyzer (a mixin)."""

    def lookup(self, name, scope):
        s = scope or self.mscope
        while s is not None:
            if name in s.globals:
                s = self.mscope
            if name in s.locals:
                return s.locals[name]
            s = s.parent
        if name == "Model":
            return REF
        if name not in BUILTIN_NAMES:
            for mod in self.star_imports:
                return ("qual", f"{mod}.{name}")
        return None

    def fold_str(self, e, scope, depth=0):
        """The value of a string expression built from constants ("ex" + "ec", a name bound to one, "".join of
        constants, an f-string of constants), or None."""
        if depth > MAX_DEPTH or e is None:
            return None
        d = depth + 1
        if isinstance(e, ast.Constant):
            return e.value if isinstance(e.value, str) else None
        if isinstance(e, ast.Name):
            s = scope or self.mscope
            while s is not None:
                if e.id in s.globals:
                    s = self.mscope
                if e.id in s.locals or e.id in s.consts:
                    return s.consts.get(e.id)
                s = s.parent
            return None
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            a, b = self.fold_str(e.left, scope, d), self.fold_str(e.right, scope, d)
            return a + b if a is not None and b is not None and len(a) + len(b) < 4096 else None
        if isinstance(e, ast.JoinedStr):
            parts = []
            for v in e.values:
                p = self.fold_str(v.value if isinstance(v, ast.FormattedValue) else v, scope, d)
                if p is None:
                    return None
                parts.append(p)
            return "".join(parts)
        if (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "join"
                and len(e.args) == 1 and isinstance(e.args[0], (ast.List, ast.Tuple)) and not e.keywords):
            sep = self.fold_str(e.func.value, scope, d)
            parts = [self.fold_str(x, scope, d) for x in e.args[0].elts]
            return sep.join(parts) if sep is not None and None not in parts else None
        return None

    def is_builtin(self, name, scope):
        return name in BUILTIN_NAMES and self.lookup(name, scope) is None

    def qual_of(self, e, scope):
        """The dotted path an expression resolves to ("builtins.open" for builtins), or None."""
        k = self.resolve(e, scope)
        if k is not None and k[0] == "qual":
            return k[1]
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name) and self.is_builtin(e.id, scope):
            return ".".join(["builtins", e.id, *reversed(parts)])
        return None

    def resolve(self, e, scope, depth=0):
        if depth > MAX_DEPTH:
            return None
        d = depth + 1
        t = type(e)
        if t is ast.Name:
            return self.lookup(e.id, scope)
        if t is ast.Attribute:
            return self.attr_of(self.resolve(e.value, scope, d), e.attr)
        if t is ast.Call:
            return self.call_result(e, scope, d)
        if t is ast.Subscript:
            return self.subscript_of(self.resolve(e.value, scope, d), e.slice)
        if t is ast.Constant:
            if isinstance(e.value, str):
                return STR
            return SCALAR if isinstance(e.value, (int, float, complex)) else None
        if t in (ast.List, ast.Tuple, ast.Set):
            return ("pycoll", tuple(self.resolve(x, scope, d) for x in e.elts[:64]))
        if t is ast.Dict:
            return ("pycoll", tuple(self.resolve(x, scope, d) for x in e.values[:64]))
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
            return ("pycoll", (self.resolve(e.elt, scope, d),))
        if t is ast.BinOp:
            if isinstance(e.op, ast.Mod) and const_str(e.left) is not None:
                return STR
            a, b = self.resolve(e.left, scope, d), self.resolve(e.right, scope, d)
            if PATH in (a, b) and isinstance(e.op, ast.Div):
                return PATH
            if TENSOR in (a, b):
                return TENSOR
            if a in (SCALAR, SHAPE) and b in (SCALAR, SHAPE):
                return SCALAR
            if a is not None and b is not None and a[0] == "pycoll" and b[0] == "pycoll":
                return ("pycoll", a[1] + b[1])
            return STR if a == STR and b == STR else None
        if t is ast.Compare:
            kinds = [self.resolve(x, scope, d) for x in [e.left, *e.comparators]]
            return TENSOR if TENSOR in kinds else SCALAR
        if t is ast.UnaryOp:
            k = self.resolve(e.operand, scope, d)
            return k if k in (TENSOR, SCALAR) else None
        if t is ast.IfExp:
            return self.resolve(e.body, scope, d) or self.resolve(e.orelse, scope, d)
        if t is ast.BoolOp:
            return merge(self.resolve(x, scope, d) for x in e.values)
        if t is ast.Lambda:
            return ("func", e)
        if t in (ast.NamedExpr, ast.Starred, ast.Await):
            return self.resolve(e.value, scope, d)
        if t is ast.JoinedStr:
            return STR
        return None

    def attr_of(self, base, attr):
        if base is None or base is UNKNOWN:
            return None
        kind = base[0]
        if kind == "qual":
            return ("qual", f"{base[1]}.{attr}")
        if kind in ("ext", "extfn"):
            return EXTFN
        if kind in ("self", "inst"):
            return self.class_member(base[1], attr)
        if kind == "class":
            if attr == "apply" and self.is_autograd_fn(base[1]):
                return self.class_member(base[1], "forward")
            return self.class_member(base[1], attr)
        if kind == "layer":
            if attr == "forward":
                return base
            if attr.endswith(("weight", "bias", "running_mean", "running_var")):
                return TENSOR
            return SCALAR
        if kind == "tensor":
            if attr == "shape":
                return SHAPE
            if attr in TENSOR_SCALAR_ATTRS:
                return SCALAR
            if attr in TENSOR_TENSOR_ATTRS:
                return TENSOR
            return ("tmethod", attr)
        if kind == "ref":
            return REF
        if kind == "path":
            return ("pathattr", attr)
        if kind == "pycoll" and attr in ("get", "setdefault", "pop", "__getitem__"):
            return ("pyget", base[1])
        return None

    def subscript_of(self, base, index):
        if base is None:
            return None
        kind = base[0]
        if base == SHAPE:
            return SHAPE if isinstance(index, ast.Slice) else SCALAR
        if base == TENSOR:
            return TENSOR
        if base == TRITON:
            return EXTFN
        if base == STR:
            return STR
        if kind == "container":
            return merge(base[1])
        if kind == "pycoll":
            if isinstance(index, ast.Slice):
                return base  # A slice of a collection is a collection of the same kinds.
            i = index.value if isinstance(index, ast.Constant) else None
            if isinstance(i, int) and not isinstance(i, bool) and -len(base[1]) <= i < len(base[1]):
                return base[1][i]
            return merge(base[1])
        if kind == "qual" and base[1] == "os.environ":
            return STR
        if kind == "qual" and base[1].endswith((".__mro__", ".__bases__")):
            return ("qual", base[1].rsplit(".", 1)[0])  # The class itself or its bases: the same root.
        key = const_str(index)
        if kind == "qual" and key and base[1] == "sys.modules":
            return ("qual", key)
        if kind == "qual" and key and base[1].endswith(".__dict__"):
            return ("qual", f"{base[1][:-len('.__dict__')]}.{key}")
        return None

    def call_result(self, call, scope, depth):
        f = call.func
        if isinstance(f, ast.Name) and self.is_builtin(f.id, scope):
            n = f.id
            if n == "getattr" and len(call.args) >= 2:
                name = self.fold_str(call.args[1], scope, depth)
                return None if name is None else self.attr_of(self.resolve(call.args[0], scope, depth), name)
            if n == "__import__" and call.args and const_str(call.args[0]):
                return ("qual", call.args[0].value.split(".")[0])
            if n in ("staticmethod", "classmethod") and call.args:
                return self.resolve(call.args[0], scope, depth)
            if n == "vars" and call.args:
                k = self.resolve(call.args[0], scope, depth)
                return ("qual", k[1] + ".__dict__") if k is not None and k[0] == "qual" else None
            if n in ("len", "int", "float", "round", "abs", "min", "max", "bool", "hash", "id", "ord", "divmod"):
                return SCALAR
            if n in ("list", "tuple", "set", "dict", "sorted", "range", "enumerate", "zip", "reversed"):
                return ("pycoll", ())
            return STR if n in ("str", "repr", "format") else None
        fk = self.resolve(f, scope, depth)
        if fk is None or fk is UNKNOWN:
            return None
        kind = fk[0]
        if kind == "qual":
            return self.qual_result(fk[1], call, scope, depth)
        if kind == "func":
            return EXT if id(fk[1]) in self.ext_factories else None
        if kind == "class":
            return ("inst", fk[1])
        if kind == "ref":
            return REF
        if kind in ("extfn", "layer", "container", "inst"):
            return TENSOR
        if kind == "pyget":
            return merge(fk[1])
        if kind == "tmethod":
            name = fk[1]
            if name in ("size", "stride"):
                return SCALAR if call.args else SHAPE
            return SCALAR if name in SCALAR_RESULT_METHODS else TENSOR
        return None

    def qual_result(self, p, call, scope, depth):
        parts = p.split(".")
        last = parts[-1]
        if p in ("functools.partial", "functools.partialmethod") and call.args:
            return self.resolve(call.args[0], scope, depth)
        if p == "importlib.import_module" and call.args and const_str(call.args[0]):
            return ("qual", call.args[0].value)
        if p in EXT_LOADERS or p.endswith(("cpp_extension.load_inline", "cpp_extension.load")):
            return EXT
        if p.startswith("pathlib.") and last in ("Path", "PurePath", "PosixPath"):
            return PATH
        if last == "Model":
            return REF
        if p in COMPILERS:
            return ("compiled", p)
        if parts[0] == "math":
            return SCALAR
        if parts[0] != "torch":
            return OBJ
        if len(parts) >= 3 and parts[1] == "nn" and last[:1].isupper():
            if last in PARAM_CLASSES:
                return TENSOR
            if last in CONTAINER_LAYERS:
                elems = []
                for a in list(call.args) + [kw.value for kw in call.keywords]:
                    k = self.resolve(a, scope, depth)
                    if k is not None and k[0] == "pycoll":
                        elems.extend(k[1])
                    else:
                        elems.append(k)
                return ("container", tuple(elems))
            return ("layer", p)
        if last in ("size", "Size", "stride"):
            return SHAPE
        if last in SCALAR_RESULT_METHODS or last in ("device", "finfo", "iinfo", "is_tensor"):
            return SCALAR
        return None if parts[1] in TORCH_NONCOMPUTE_NS else TENSOR

    def class_info(self, node):
        return self.class_infos.get(id(node)) or self._new_class_info(node)

    def _new_class_info(self, node):
        info = ClassInfo(node)
        self.class_infos[id(node)] = info
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                k = self.resolve(stmt.value, self.mscope)
                for t in stmt.targets:
                    if isinstance(t, ast.Name) and k is not None:
                        info.attrs[t.id] = k
        info.bases = [self.resolve(b, self.mscope) for b in node.bases]
        return info

    def class_member(self, cls, attr, seen=None):
        info = self.class_info(cls)
        if attr in info.methods:
            return ("func", info.methods[attr])
        if attr in info.attrs:
            return info.attrs[attr]
        return self.base_member(cls, attr, seen)

    def base_member(self, cls, attr, seen=None):
        seen = (seen or set()) | {id(cls)}
        for b in self.class_info(cls).bases:
            if b == REF:
                return REF
            if b is not None and b[0] == "class" and id(b[1]) not in seen:
                r = self.class_member(b[1], attr, seen)
                if r is not None:
                    return r
        return None

    def is_autograd_fn(self, cls, seen=None):
        seen = (seen or set()) | {id(cls)}
        for b in self.class_info(cls).bases:
            if b is None:
                continue
            if b[0] == "qual" and b[1] in AUTOGRAD_FUNCTIONS:
                return True
            if b[0] == "class" and id(b[1]) not in seen and self.is_autograd_fn(b[1], seen):
                return True
        return False
