"""What a call or operator computes, as events: "compute", "host" (tensor data handed to Python or numpy), "arith", "ext" (the custom kernel), "ref" (the
reference Model), "cast" (lower precision) or "follow" (a call into a local function, an edge of the graph).

Events are recorded per function; reach.py turns those that ModelNew.forward reaches into hits.
"""

import ast

from .kinds import STR, TENSOR, UNKNOWN
from .rules import CHEAT, EVIDENCE
from .syntax import const_str
from .torch_names import (AMBIGUOUS_METHODS, ARITH_OPERATORS, ARRAY_INTERFACES, ATEN_OP_NS, AUTOCAST,
                          CALLBACK_METHODS, DROPOUT_LAYERS, HALF_DTYPES, HOST_FUNCTIONS, HOST_METHODS,
                          MATMUL_OPERATORS, NOOP_LAYERS, POINTER_CASTS, RAW_MEMORY_FUNCTIONS, RAW_MEMORY_METHODS,
                          RAW_MEMORY_PREFIXES, STORAGE_METHODS, TENSOR_COMPUTE_METHODS, TEXT_METHODS, is_plumbing,
                          torch_compute)

RAW = "reads or writes tensor memory from Python"


class ComputeEvents:
    """Compute events of calls and operators for the analyzer (a mixin)."""

    def on_arith(self, node, ctx):
        scope = ctx.scope
        if isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return
            operands = [node.left, *node.comparators]
            if any(self.resolve(x, scope) == TENSOR for x in operands):
                self.event(ctx, "arith", node, "compares tensors with a Python operator", EVIDENCE)
            return
        if isinstance(node.op, ast.MatMult):
            self.event(ctx, "compute", node, "uses the @ operator (a torch matmul)", CHEAT)
            return
        left = node.target if isinstance(node, ast.AugAssign) else node.left
        kinds = (self.resolve(left, scope), self.resolve(node.right if isinstance(node, ast.BinOp) else node.value,
                                                         scope))
        if TENSOR in kinds and STR not in kinds:
            op = type(node.op).__name__
            self.event(ctx, "arith", node, f"tensor arithmetic with a Python operator ({op})", EVIDENCE)

    def call_events(self, call, scope):
        """(kind, message, severity, follow target) for one call: compute, ext, ref, cast or follow."""
        f = call.func
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
                and f.value.func.id == "super" and self.is_builtin("super", scope)):
            if scope.cls is None:
                return []
            return self.callee_events(self.base_member(scope.cls, f.attr), call, scope, f"super().{f.attr}")
        if isinstance(f, ast.Name) and self.is_builtin(f.id, scope):
            return self.builtin_events(f.id, call, scope)
        k = self.resolve(f, scope)
        if k is None or k is UNKNOWN:
            if isinstance(f, ast.Attribute) and self.resolve(f.value, scope) in (None, UNKNOWN):
                return self.method_events(f.attr, call, scope, known_tensor=False)
            return []
        return self.callee_events(k, call, scope, ast.unparse(f)[:80])

    def builtin_events(self, name, call, scope):
        """bytes(t.untyped_storage()), memoryview(t), repr(t): a tensor's data as bytes or text."""
        a = call.args[0] if call.args else None
        if a is None:
            return []
        k = self.resolve(a, scope)
        if name in ("bytes", "bytearray", "memoryview", "list", "tuple", "iter") and self.is_storage_call(a):
            return [("host", f"{RAW} ({name}() of a tensor's storage)", CHEAT, None)]
        if name in ("bytes", "bytearray", "memoryview") and k == TENSOR:
            return [("host", f"{RAW} ({name}() of a tensor)", CHEAT, None)]
        if name in ("repr", "str", "format", "ascii") and k == TENSOR:
            return [("host", f"formats a tensor's values as text ({name}()), to parse them back on the host",
                     CHEAT, None)]
        return []

    @staticmethod
    def is_storage_call(e):
        return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
                and e.func.attr in ("storage", "untyped_storage", "_typed_storage"))

    def class_events(self, cls, call, scope, label, depth):
        """Instantiating a local class runs its __init__; one that exposes __array_interface__ hands memory to
        numpy."""
        out = []
        if any(self.class_member(cls, n) is not None for n in ARRAY_INTERFACES):
            out.append(("host", f"{RAW} (builds {cls.name}, which has an array interface)", CHEAT, None))
        init = self.class_member(cls, "__init__")
        if init is not None and init[0] == "func":
            out += self.callee_events(init, call, scope, label, depth + 1)
        return out

    def callee_events(self, k, call, scope, label, depth=0):
        if k is None or depth > 8:
            return []
        kind = k[0]
        if kind == "qual":
            return self.qual_events(k[1], call, scope)
        if kind == "layer":
            name = k[1].split(".")[-1]
            if name in NOOP_LAYERS:
                return []
            if name in DROPOUT_LAYERS:
                return [("compute", f"calls torch layer {name} ({label})", EVIDENCE, None)]
            return [("compute", f"calls torch layer {name} ({label})", CHEAT, None)]
        if kind == "container":
            out = []
            for e in k[1]:
                out += self.callee_events(e, call, scope, label, depth + 1)
            return out
        if kind == "func":
            return [("follow", "", CHEAT, id(k[1]))]
        if kind == "class":
            return self.class_events(k[1], call, scope, label, depth)
        if kind == "inst":
            m = self.class_member(k[1], "forward") or self.class_member(k[1], "__call__")
            return self.callee_events(m, call, scope, label, depth + 1)
        if kind == "ref":
            return [("ref", f"runs the reference Model ({label})", CHEAT, None)]
        if kind == "compiled":
            return [("compute", f"calls a function compiled by {k[1]} ({label})", CHEAT, None)]
        if kind == "extfn":
            return [("ext", "", EVIDENCE, None)]
        if kind == "tmethod":
            return self.method_events(k[1], call, scope, known_tensor=True)
        return []

    def qual_events(self, p, call, scope):
        parts = p.split(".")
        if p in RAW_MEMORY_FUNCTIONS or p.startswith(RAW_MEMORY_PREFIXES) or (
                parts[0] == "ctypes" and parts[-1] in RAW_MEMORY_METHODS):
            return [("host", f"{RAW} ({p})", CHEAT, None)]
        if p in POINTER_CASTS and id(call) not in self.call_args:
            return [("host", f"{RAW} ({p} to a pointer it keeps and reads)", CHEAT, None)]
        if parts[:2] == ["torch", "Tensor"] and len(parts) == 3 and parts[2] in CALLBACK_METHODS | TEXT_METHODS:
            return self.method_events(parts[2], call, scope, known_tensor=True)
        if parts[:2] == ["torch", "ops"] and len(parts) >= 4 and parts[2] not in ATEN_OP_NS:
            return [("ext", "", EVIDENCE, None)]
        if torch_compute(p):
            return [("compute", f"calls {p}", CHEAT, None)]
        if parts[:2] == ["torch", "Tensor"] and len(parts) == 3 and parts[2] in HOST_METHODS:
            return [("host", f"hands tensor data to the host ({p})", CHEAT, None)]
        if p in HOST_FUNCTIONS and any(self.resolve(a, scope) in (TENSOR, UNKNOWN) for a in call.args[:1]):
            return [("host", f"hands tensor data to numpy ({p})", CHEAT, None)]
        if p in MATMUL_OPERATORS:
            return [("compute", f"calls {p} (a torch matmul on tensors)", CHEAT, None)]
        if parts[0] == "operator" and parts[-1] in ARITH_OPERATORS:
            return [("arith", f"calls {p}", EVIDENCE, None)]
        if p in AUTOCAST:
            return [("cast", f"{p} lowers precision", EVIDENCE, None)]
        if parts[:2] == ["torch", "Tensor"] and parts[-1] in ("half", "bfloat16"):
            return [("cast", f"{p} lowers precision", EVIDENCE, None)]
        if parts[-1] == "Model":
            return [("ref", f"runs the reference Model ({p})", CHEAT, None)]
        return []

    def method_events(self, name, call, scope, known_tensor):
        if name in RAW_MEMORY_METHODS:
            return [("host", f"{RAW} (.{name}())", CHEAT, None)]
        if name in CALLBACK_METHODS:
            return [("host", f"runs a Python function on each element on the host (.{name}())", CHEAT, None)]
        if name in TEXT_METHODS and known_tensor:
            return [("host", f"formats a tensor's values as text (.{name}()), to parse them back on the host",
                     CHEAT, None)]
        if name in STORAGE_METHODS and (known_tensor or name != "storage") and id(call) not in self.storage_meta:
            return [("host", f"{RAW} (reads .{name}() beyond its address and size)", CHEAT, None)]
        if name in HOST_METHODS and (known_tensor or name != "tolist"):
            return [("host", f"hands tensor data to the host (.{name}())", CHEAT, None)]
        if name in ("half", "bfloat16"):
            return [("cast", f".{name}() lowers precision", EVIDENCE, None)]
        if name in ("to", "type"):
            for a in [*call.args, *[kw.value for kw in call.keywords]]:
                q = self.qual_of(a, scope)
                s = const_str(a) or ""
                if q in HALF_DTYPES or "Half" in s or "BFloat16" in s or s in ("float16", "bfloat16"):
                    return [("cast", f".{name}() to a half/bfloat16 dtype lowers precision", EVIDENCE, None)]
            return []
        if is_plumbing(name) or name not in TENSOR_COMPUTE_METHODS:
            return []
        if name in AMBIGUOUS_METHODS and not known_tensor:
            return []
        return [("compute", f"calls tensor method .{name}()", CHEAT, None)]
