"""How the lightspeed-stack harness changes the compaction configuration a tree serves
under (the lockstep draws one per example), without a tree."""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import pytest

from ctxaudit.outcomes import CouldNotCheck, could_not_check
from ctxaudit.targets.lightspeed import harness
from ctxaudit.targets.lightspeed.fake_llm import Reply


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> harness.Service:
    """A service as ``start`` leaves it for ``configure``: its files written, the tree's
    ``configuration`` module a recorder of what it was asked to load."""
    loaded: list[str] = []
    configuration = types.ModuleType("configuration")
    configuration.configuration = types.SimpleNamespace(  # type: ignore[attr-defined]
        load_configuration=loaded.append
    )
    monkeypatch.setitem(sys.modules, "configuration", configuration)
    ls = harness.Service(harness.RunConfig(window=200), lambda call: Reply())
    ls._run_yaml = tmp_path / "run.yaml"
    ls.loaded = loaded  # type: ignore[attr-defined]
    yield ls
    shutil.rmtree(ls.folder, ignore_errors=True)


def test_configure_rewrites_the_file_and_has_the_tree_read_it(service: harness.Service) -> None:
    floor = harness.RunConfig(window=200, ratio=0.5, floor=140, buffer=2)
    service.configure(floor)
    path = service.folder / "lightspeed-stack.yaml"
    text = path.read_text()
    assert "token_floor: 140" in text and "buffer_turns: 2" in text
    assert service.loaded == [str(path)]  # type: ignore[attr-defined]
    assert service.config == floor


def test_configure_with_the_same_configuration_reads_nothing(service: harness.Service) -> None:
    service.configure(harness.RunConfig(window=200))
    assert service.loaded == []  # type: ignore[attr-defined]
    assert not (service.folder / "lightspeed-stack.yaml").exists()


def test_a_configuration_the_tree_refuses_is_could_not_check(
    service: harness.Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree's own code raised, but on the harness's file, not on a request: the
    check did not run, so it is never a finding."""

    def refuse(path: str) -> None:
        raise ValueError("token_floor: extra fields not permitted")

    monkeypatch.setattr(sys.modules["configuration"].configuration, "load_configuration", refuse)
    before = service.config
    with pytest.raises(CouldNotCheck, match="did not take the configuration") as raised:
        service.configure(harness.RunConfig(window=200, floor=140))
    assert could_not_check(raised.value) is not None
    assert service.config == before
