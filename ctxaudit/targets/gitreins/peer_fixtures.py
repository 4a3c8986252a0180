"""The fixtures gitreins' own tests take from a ``tests/conftest.py`` its sdist does not ship.

The mutation audit's peer comparison (``mutation/__init__.py`` ``_run_peer``) runs the
tests of gitreins' source distribution against the same mutants as ours. The sdist leaves
out ``tests/conftest.py``, so every test that asks for one of its fixtures errors on the
unmutated tree and drops out of the peer's score. This pytest plugin gives those tests
what they expect, written for ctxaudit from how the tests use the fixtures:

- ``tmp_workdir``: a fresh folder (a ``str`` path) that is a git repository of its own,
  so git commands the target runs in it never reach an enclosing repository;
- ``isolated_job_store`` (autouse): ``GITREINS_JOB_DIR`` points into the test's temporary
  folder, so no test reads or writes the real job store under the home folder;
- ``llm_client``, ``evaluator``, ``judge``: one object of the target each, built from the
  table :data:`CONSTRUCTS`. The tests replace the LLM's ``chat`` (or the HTTP layer) with
  a mock; an unmocked call goes to a closed local port and fails at once.

The peer run loads it with ``-p ctxaudit.targets.gitreins.peer_fixtures``
(``[gitreins.peer]`` in its ``mutation.toml``). A ``conftest.py`` the peer's tree does
ship wins: pytest prefers a conftest's fixture to a plugin's of the same name.

Versions differ in their constructors, so the table is matched against the signature of
the version under test: a keyword argument the factory does not take there is left out
(:func:`accepted_kwargs`). Nothing here names a version.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: an address nothing listens on (the discard port), so an LLM call a test forgot to
#: mock fails with "connection refused" instead of leaving the machine
UNREACHABLE_LLM = "http://127.0.0.1:9/v1"


@dataclass(frozen=True)
class Construct:
    """A fixture ``name`` that returns ``factory(*<fixtures args>, **kwargs)``.

    ``factory`` is ``"module:attribute"`` in the target (imported when the fixture runs,
    so from the pinned work copy); ``args`` are names of other fixtures, passed
    positionally; keyword arguments the factory does not accept on the version under
    test are left out.
    """

    name: str
    factory: str
    args: tuple[str, ...] = ()
    kwargs: Mapping[str, object] = field(default_factory=dict)
    doc: str = ""


CONSTRUCTS: tuple[Construct, ...] = (
    Construct(
        "llm_client",
        "engine.llm:LLMClient",
        kwargs={"base_url": UNREACHABLE_LLM, "api_key": "ctxaudit-peer-key"},
        doc="an LLM client the tests mock; unmocked calls are refused locally",
    ),
    Construct(
        "evaluator",
        "engine.evaluator:AgenticEvaluator",
        args=("llm_client", "tmp_workdir"),
        # the tests that run the loop to its cap count on a small, explicit cap
        kwargs={"max_iterations": 5},
        doc="the agentic evaluator over tmp_workdir with llm_client",
    ),
    Construct(
        "judge",
        "engine.judge:Judge",
        args=("llm_client", "tmp_workdir"),
        doc="the judge over tmp_workdir with llm_client",
    ),
)

#: the files and folders that make a folder a git repository (``git rev-parse`` finds
#: it, ``git init`` in it is a re-initialisation); written directly, which is much
#: cheaper than starting git once per test
GIT_LAYOUT: Mapping[str, str | None] = {
    "HEAD": "ref: refs/heads/main\n",
    "config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
    "objects": None,
    "refs/heads": None,
    "refs/tags": None,
}


def resolve(factory: str) -> Callable[..., Any]:
    """The callable ``"module:attribute"`` names."""
    module, _, attr = factory.partition(":")
    obj: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return obj


def accepted_kwargs(func: Callable[..., Any], kwargs: Mapping[str, object]) -> dict[str, object]:
    """The part of ``kwargs`` that ``func``'s signature accepts."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(kwargs)
    names = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return {k: v for k, v in kwargs.items() if k in names}


def make_git_workdir(path: Path) -> Path:
    """Create ``path`` as an empty git repository (see :data:`GIT_LAYOUT`)."""
    git = path / ".git"
    for rel, text in GIT_LAYOUT.items():
        target = git / rel
        if text is None:
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return path


def _construct_fixture(spec: Construct) -> Any:
    def build(request: pytest.FixtureRequest) -> Any:
        factory = resolve(spec.factory)
        args = [request.getfixturevalue(a) for a in spec.args]
        return factory(*args, **accepted_kwargs(factory, spec.kwargs))

    build.__doc__ = spec.doc or f"{spec.factory}({', '.join(spec.args)})"
    build.__name__ = spec.name
    return pytest.fixture(name=spec.name)(build)


@pytest.fixture
def tmp_workdir(tmp_path: Path) -> str:
    """A fresh git repository folder for the test, as a ``str`` path."""
    return str(make_git_workdir(tmp_path / "workdir"))


@pytest.fixture(autouse=True)
def isolated_job_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``GITREINS_JOB_DIR`` in the test's temporary folder (subprocesses inherit it)."""
    jobs = str(tmp_path / "jobs")
    monkeypatch.setenv("GITREINS_JOB_DIR", jobs)
    return jobs


#: every fixture this plugin supplies (the peer report lists them)
SUPPLIED: tuple[str, ...] = (
    "tmp_workdir",
    "isolated_job_store",
    *(spec.name for spec in CONSTRUCTS),
)

# one module-level fixture per table entry, so pytest finds them when it loads the plugin
for _spec in CONSTRUCTS:
    globals()[f"_fixture_{_spec.name}"] = _construct_fixture(_spec)
del _spec
