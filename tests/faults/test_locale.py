"""ctxaudit reads its own files and a target's as UTF-8 whatever the locale (issue #47:
an ASCII locale could not read a gitreins tree's ``pyproject.toml``).

A source scan: no text read of ctxaudit's or the mutation engine's leaves the encoding to
the locale. (Python's UTF-8 mode hides the fault under the C locale; an ISO-8859-1 or
``PYTHONUTF8=0`` ASCII one shows it, and no such locale is installed here to run under.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _reads_without_encoding(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        keywords = {k.arg for k in node.keywords}
        if name == "read_text" and "encoding" not in keywords and not node.args:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: read_text()")
        if name == "open" and isinstance(func, ast.Name) and "encoding" not in keywords:
            mode = node.args[1] if len(node.args) > 1 else None
            text = not (isinstance(mode, ast.Constant) and "b" in str(mode.value))
            if text:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: open() in text mode")
    return found


@pytest.mark.fault("ascii-locale")
def test_every_text_read_names_its_encoding() -> None:
    files = sorted([*ROOT.glob("ctxaudit/**/*.py"), *ROOT.glob("mutation/**/*.py")])
    found = [hit for path in files for hit in _reads_without_encoding(path)]
    assert not found, "reads whose encoding is the locale's:\n" + "\n".join(found)
