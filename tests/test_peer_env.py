"""The peer suite's environment of a PyPI library (``ctxaudit/targets/pypi.py``): what it
is resolved from, its own key, where its tests come from, and that only a target that
declares a peer suite has one. A toy library on disk: no network, nothing built."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from ctxaudit import targets
from ctxaudit.targets import pypi_build, uvenv
from ctxaudit.targets.base import Resolved, TargetError
from ctxaudit.targets.pypi import Env, Library, Tree

PYPROJECT = """
[project]
name = "toylib"
version = "1.0.0"

[dependency-groups]
test = ["pytest>=9", "toy-helpers<2", {include-group = "lint"}]
lint = ["ruff"]
dev = [
  "pytest>=9", "Sphinx_Docs[theme]>=1", "toy-helpers<2", "pytest>=9", "mypy; python_version>'3.9'"
]
"""


def _library(tmp_path: Path) -> Library:
    (tmp_path / "locks").mkdir()
    return Library(
        name="toylib",
        dist="toylib",
        marker="toylib/core.py",
        pinned="1.0.0",
        locks=tmp_path / "locks",
        what="a toylib tree",
        env_prefix="CTXAUDIT_TOYLIB",
    )


def test_peer_requirements_are_the_release_its_test_group_and_the_test_pins(
    tmp_path: Path,
) -> None:
    lib = _library(tmp_path)
    (tmp_path / "sdist").mkdir()
    (tmp_path / "sdist" / "pyproject.toml").write_text(PYPROJECT)
    got = lib.peer_requirements("1.0.0", tmp_path / "sdist")
    # an include-group entry is not a requirement; the lint group is not the tests'
    assert got == ["toylib==1.0.0", "pytest>=9", "toy-helpers<2", *uvenv.test_pins("toylib")]


def test_another_group_less_the_tools_the_tests_do_not_need(tmp_path: Path) -> None:
    lib = dataclasses.replace(
        _library(tmp_path), peer_group="dev", peer_omit=frozenset({"sphinx-docs", "mypy"})
    )
    (tmp_path / "sdist").mkdir()
    (tmp_path / "sdist" / "pyproject.toml").write_text(PYPROJECT)
    got = lib.peer_requirements("1.0.0", tmp_path / "sdist")
    # omitted by normalized name whatever the spelling and extras; a repeat is kept once
    assert got == ["toylib==1.0.0", "pytest>=9", "toy-helpers<2", *uvenv.test_pins("toylib")]
    missing = dataclasses.replace(lib, peer_group="testing")
    with pytest.raises(TargetError, match=r"no \[dependency-groups\] 'testing'"):
        missing.peer_requirements("1.0.0", tmp_path / "sdist")


def test_a_group_that_is_an_extra_of_the_project(tmp_path: Path) -> None:
    """strands-agents lists its test tools in ``[project.optional-dependencies] dev``."""
    lib = dataclasses.replace(
        _library(tmp_path),
        peer_group="dev",
        peer_table="optional-dependencies",
        peer_omit=frozenset({"ruff"}),
    )
    (tmp_path / "sdist").mkdir()
    (tmp_path / "sdist" / "pyproject.toml").write_text(
        '[project]\nname = "toylib"\n[project.optional-dependencies]\n'
        'dev = ["pytest>=9", "ruff==0.1", "toy-helpers<2"]\n'
    )
    got = lib.peer_requirements("1.0.0", tmp_path / "sdist")
    assert got == ["toylib==1.0.0", "pytest>=9", "toy-helpers<2", *uvenv.test_pins("toylib")]
    with pytest.raises(TargetError, match=r"no \[optional-dependencies\] 'testing'"):
        dataclasses.replace(lib, peer_group="testing").peer_requirements(
            "1.0.0", tmp_path / "sdist"
        )


def test_the_peer_environment_has_its_own_key(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    reqs = ["toylib==1.0.0", "pytest>=9"]
    key = lib.peer_env_key("1.0.0", reqs)
    assert key != lib.env_key("1.0.0")  # never the release's own environment
    assert key != lib.peer_env_key("1.0.0", [*reqs, "toy-helpers"])
    # a committed peer lock is what the key is over
    (tmp_path / "locks" / "toylib-1.0.0-peer.txt").write_text("toylib==1.0.0 --hash=sha256:00\n")
    assert lib.committed_peer_lock("1.0.0") == tmp_path / "locks" / "toylib-1.0.0-peer.txt"
    committed = lib.peer_env_key("1.0.0", reqs)
    assert committed != key
    (tmp_path / "locks" / "toylib-1.0.0-peer.txt").write_text("toylib==1.0.0 --hash=sha256:11\n")
    assert lib.peer_env_key("1.0.0", reqs) != committed


def test_a_local_tree_with_tests_is_its_own_peer_suite(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    root = tmp_path / "checkout"
    (root / "tests").mkdir(parents=True)
    assert lib.peer_tests(Tree("toylib", "1.0.0", root, "path")) == root


def test_the_cached_sdist_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXAUDIT_CACHE", str(tmp_path / "cache"))
    lib = _library(tmp_path)
    sdist = tmp_path / "cache" / "toylib" / "peer" / "1.0.0"
    (sdist / "tests").mkdir(parents=True)
    (sdist / "pyproject.toml").write_text(PYPROJECT)
    # an unpacked sdist in the cache is never fetched again (uvenv.run would fail here)
    monkeypatch.setattr(uvenv, "run", lambda *a, **k: pytest.fail("fetched again"))
    assert lib.peer_tests(Tree("toylib", "1.0.0", tmp_path / "wheel", "pypi")) == sdist


def test_only_a_target_that_declares_one_has_a_peer_suite() -> None:
    kind = targets.get("pydantic-ai")  # its sdists ship no tests
    assert kind.mutation is not None and not kind.mutation.peer
    resolved = Resolved("pydantic-ai", "0", Path("/nonexistent"), "pydantic-ai")
    assert kind.peer_suite(resolved) is None  # nothing resolved, nothing fetched


@pytest.mark.parametrize("name", ["langchain", "openai-agents", "strands-agents"])
def test_a_target_whose_sdist_ships_tests_declares_its_peer_suite(name: str) -> None:
    library = importlib.import_module(f"ctxaudit.targets.{name.replace('-', '_')}.tree").LIBRARY
    kind = targets.get(name)
    assert kind.mutation is not None and kind.mutation.peer
    lock = library.committed_peer_lock(library.pinned)
    assert lock is not None, "the pinned release's peer lock is committed"
    text = lock.read_text()
    assert f"{name}=={library.pinned} " in text and "--hash=sha256:" in text


def test_the_peer_suite_runs_with_its_own_environment_variables(tmp_path: Path) -> None:
    lib = dataclasses.replace(
        _library(tmp_path), extra_environ={"RIG": "1"}, peer_environ={"KEY": "fake"}
    )
    env = Env(tmp_path / "env", tmp_path / "env" / "venv" / "bin" / "python", "k", tmp_path)
    tree = Tree("toylib", "1.0.0", tmp_path / "tree", "pypi")
    rig, peer = lib.child_environ(env, tree), lib.child_environ(env, tree, peer=True)
    assert rig["RIG"] == "1" and "KEY" not in rig
    assert peer["KEY"] == "fake" and "RIG" not in peer
    assert peer["PYTHONPATH"] == rig["PYTHONPATH"]  # the tree first on the path all the same
    plain = dataclasses.replace(lib, peer_environ=None)  # then the rig's settings apply
    assert plain.child_environ(env, tree, peer=True)["RIG"] == "1"


def test_where_the_test_group_asks_another_range_the_harness_tests_decide(
    tmp_path: Path,
) -> None:
    """langchain 1.2.0's tests ask for pytest<9, openai-agents 0.7.0's for
    cryptography<46: a test pin or a pin of the release's lock outside the group's range
    made the peer environment unresolvable (could not check). The group's range wins
    there, and only there; every other pin of the release's lock still constrains it."""
    lib = _library(tmp_path)
    (tmp_path / "sdist").mkdir()
    (tmp_path / "sdist" / "pyproject.toml").write_text(
        '[dependency-groups]\ntest = ["pytest>=8,<9", "cryptography>=45,<46", "toy-helpers"]\n'
    )
    got = lib.peer_requirements("1.0.0", tmp_path / "sdist")
    pins = uvenv.test_pins("toylib")
    assert [p for p in pins if p.startswith("pytest==")], "ctxaudit pins pytest"
    assert got == [
        "toylib==1.0.0",
        "pytest>=8,<9",
        "cryptography>=45,<46",
        "toy-helpers",
        *[p for p in pins if not p.startswith("pytest==")],
    ]
    release = tmp_path / "locks" / "toylib-1.0.0.txt"
    release.write_text(
        "# a lock\ncryptography==50.0.2 \\\n    --hash=sha256:00\n    # via toylib\n"
        "toy-helpers==3.1 \\\n    --hash=sha256:11\n"
        'tomli==2.0.1 ; python_full_version < "3.11" \\\n    --hash=sha256:22\n'
    )
    out = tmp_path / "constraints.txt"
    relaxed = pypi_build.release_constraints(release, got, out)
    assert relaxed == ["cryptography<46,>=45 (the release's lock: 50.0.2)"]
    # the pins the group has no range of (or a range they are in) stay, markers kept
    assert out.read_text().splitlines() == [
        "toy-helpers==3.1",
        'tomli==2.0.1 ; python_full_version < "3.11"',
    ]
