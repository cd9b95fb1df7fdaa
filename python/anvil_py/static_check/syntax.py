"""Small AST helpers: string constants, the nodes of a function's own scope, dropping `__main__` blocks."""

import ast


def const_str(e):
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None


class StripMain(ast.NodeTransformer):
    """Drops `if __name__ == "__main__":` blocks (their else branch stays)."""

    def visit_If(self, node):
        t = node.test
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
                and {const_str(t.left), const_str(t.comparators[0])} >= {"__main__"}
                and any(isinstance(x, ast.Name) and x.id == "__name__" for x in (t.left, t.comparators[0]))):
            return [self.visit(s) for s in node.orelse]
        return self.generic_visit(node)


def iter_local(fn):
    """Nodes of a function's own scope: nested functions, lambdas and classes are yielded, not entered."""
    stack = list(reversed(fn.body)) if isinstance(fn.body, list) else [fn.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
