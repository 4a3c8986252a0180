"""What a suite that did not run says of itself (``ctxaudit/pytest_results.py``): each
collection error in one line, the exception and where it was raised, or pytest's own
words where it raised none (two test modules of one name), never "1 error during
collection"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collect_errors(folder: Path, *paths: str) -> list[dict[str, str]]:
    results = folder / "results.json"
    env = {**os.environ, "CTXAUDIT_RESULTS": str(results), "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "ctxaudit.pytest_results", *paths],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return list(json.loads(results.read_text())["collect_errors"])


def test_a_module_that_does_not_import_names_the_exception_and_where(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("import runtime_that_is_not_installed\n")
    (tmp_path / "test_a.py").write_text("import helper\n\ndef test_a():\n    pass\n")
    (error,) = _collect_errors(tmp_path, "test_a.py")
    assert error["why"] == (
        "ModuleNotFoundError: No module named 'runtime_that_is_not_installed' "
        "(raised at helper.py:1)"
    )


def test_two_modules_of_one_name_say_pytests_own_words(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "test_same.py").write_text("def test_x():\n    pass\n")
    (error,) = _collect_errors(tmp_path, "a", "b")
    assert error["why"].startswith("import file mismatch: imported module 'test_same'")
    assert error["why"].endswith("(collecting b/test_same.py)")
