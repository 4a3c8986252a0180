"""The audit's Python children keep their bytecode, and pytest's rewritten test modules,
in the targets' cache (``paths.bytecode_environ``), never beside a source, also where
``PYTHONDONTWRITEBYTECODE`` is set (this machine's and many CI images' default). Without
it every child compiled every module it imported again: 1.0 s of a short suite's 1.9 s,
paid by each replay, fixed tree and suite of an audit (a broken gitreins tree's audit
took 28 s, now 18 s). The bytecode of the runs' temporary copies is dropped when an
audit starts (``paths.prune_pycache``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from ctxaudit import paths
from tests.faults.test_outcomes import run_skipped_check


def test_a_suite_child_keeps_its_bytecode_in_the_cache_never_beside_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, suites = tmp_path / "cache", tmp_path / "suites"
    suites.mkdir()
    monkeypatch.setenv("CTXAUDIT_CACHE", str(cache))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    tests, output = run_skipped_check(suites)
    assert tests, output[-2000:]
    where = (suites / "test_known.py").resolve()
    kept = cache / "pycache" / where.parent.relative_to(where.anchor)
    # the rewritten test module (pytest's name for it) and ctxaudit's own modules
    assert list(kept.glob("__pycache__/test_known.*pytest*.pyc")) or list(
        kept.glob("test_known.*pytest*.pyc")
    ), sorted(p.name for p in (cache / "pycache").rglob("*.pyc"))[:20]
    assert list((cache / "pycache").rglob("pytest_plugin.cpython-*.pyc"))
    assert not list(suites.rglob("*.pyc")), "bytecode written beside a source"


def test_a_callers_own_prefix_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    env = paths.bytecode_environ({"PYTHONPYCACHEPREFIX": "/theirs", "PYTHONDONTWRITEBYTECODE": "1"})
    assert env == {"PYTHONPYCACHEPREFIX": "/theirs"}


def test_the_bytecode_of_temporary_copies_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXAUDIT_CACHE", str(tmp_path / "cache"))
    tmp = Path(tempfile.gettempdir()).resolve()
    copy = paths.pycache() / tmp.relative_to(tmp.anchor) / "ctxaudit-run-x" / "a.cpython-311.pyc"
    kept = paths.pycache() / "work" / "tree" / "b.cpython-311.pyc"
    for f in (copy, kept):
        f.parent.mkdir(parents=True)
        f.write_bytes(b"")
    paths.prune_pycache()
    assert not copy.exists() and kept.exists()
