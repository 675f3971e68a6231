"""The checker stays readable: no function in ``check/`` over 60 lines, no module over 500."""

from __future__ import annotations

import ast
from pathlib import Path

import transformer_tutorial.check as check_package

CHECK_DIR = Path(check_package.__file__).resolve().parent
MAX_FUNCTION, MAX_FILE = 60, 500


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield node.name, node.lineno, node.end_lineno - start + 1


def test_no_function_over_60_lines():
    long = []
    for path in sorted(CHECK_DIR.glob("*.py")):
        for name, line, length in _functions(ast.parse(path.read_text())):
            if length > MAX_FUNCTION:
                long.append(f"{path.name}:{line} {name} ({length} lines)")
    assert not long, "functions over 60 lines: " + ", ".join(long)


def test_no_module_over_500_lines():
    long = [
        f"{path.name} ({n} lines)"
        for path in sorted(CHECK_DIR.glob("*.py"))
        if (n := len(path.read_text().splitlines())) > MAX_FILE
    ]
    assert not long, "modules over 500 lines: " + ", ".join(long)
