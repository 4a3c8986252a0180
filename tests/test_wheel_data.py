"""Every file of the ``ctxaudit`` package that is not Python ships in the wheel: each is
matched by a ``[tool.setuptools.package-data]`` pattern. A file left out works in a
checkout and silently not in an installed build (the committed locks of the PyPI
targets were: their releases' environments were then resolved afresh, with newer
dependencies the suites do not import)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_data_file_of_the_package_is_shipped() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["ctxaudit"]
    tracked = subprocess.run(
        ["git", "ls-files", "ctxaudit"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    data = [Path(f).relative_to("ctxaudit").as_posix() for f in tracked if not f.endswith(".py")]
    assert data, "no data files found: is this a git checkout?"
    left_out = [f for f in data if not any(fnmatch.fnmatchcase(f, p) for p in patterns)]
    assert left_out == [], f"not in the wheel (pyproject.toml package-data): {left_out}"
