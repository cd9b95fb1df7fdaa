"""Kinds of value the resolver tells apart, how telling each is, and the scope and class records it fills.

A kind is a tuple whose first item names it: the constants below, or ("qual", "dotted.path"), ("func", node),
("class", node), ("inst", node), ("self", node), ("layer", path), ("container", kinds), ("pycoll", kinds),
("pyget", kinds), ("tmethod", name), ("compiled", path), ("pathattr", name). None means unresolved.
"""

UNKNOWN = ("unknown",)
EXT = ("ext",)
EXTFN = ("extfn",)
REF = ("ref",)
TENSOR = ("tensor",)
SCALAR = ("scalar",)
SHAPE = ("shape",)
STR = ("str",)
PATH = ("path",)
TRITON = ("triton",)
OBJ = ("obj",)  # the result of a call into a non-torch library


def rank(kind):
    if kind is None or kind is UNKNOWN:
        return 0
    return {"ext": 5, "extfn": 5, "triton": 5, "layer": 4, "container": 4, "inst": 4, "ref": 4, "func": 3,
            "qual": 3, "class": 3, "compiled": 4}.get(kind[0], 1)


def merge(kinds):
    """The most telling kind among a container's elements."""
    best = None
    for k in kinds:
        if k is not None and (best is None or rank(k) > rank(best)):
            best = k
    return best


class Scope:
    """One function's names (or the module's): its locals, its `global` names, the enclosing scope and class, and
    the string values of names bound only to constant strings (`_N = "num" + "py"`; None once bound otherwise)."""

    __slots__ = ("parent", "cls", "locals", "globals", "consts")

    def __init__(self, parent, cls):
        self.parent = parent
        self.cls = cls
        self.locals = {}
        self.globals = set()
        self.consts = {}


class ClassInfo:
    """What a class defines: methods, attributes bound in its body or on `self`, and its resolved bases."""

    __slots__ = ("node", "methods", "attrs", "bases")

    def __init__(self, node):
        self.node = node
        self.methods = {}
        self.attrs = {}
        self.bases = []
