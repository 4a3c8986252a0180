"""Which of a peer suite's test files run: ``[<target>.peer] tests`` (paths or globs,
``**`` for nested folders) filtered by ``tests_matching``; without ``tests`` only the
top level of ``tests/`` is looked at, as gitreins' peer suite always was. A toy tree
on disk, no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutation.config import ConfigError, PeerSuite, load_targets, target_config
from mutation.peer import _conftests, select_tests

TOY = """
[toy]
package = "toy"
tests = ["tests/toy"]
[[toy.files]]
path = "toy/m.py"
functions = ["f"]
[toy.peer]
name = "toy's own tests"
selection_reason = "the files that import toy"
"""


def _tree(root: Path) -> Path:
    files = {
        "tests/test_top.py": "from toy.m import f\n",
        "tests/test_other.py": "import os\n",
        "tests/unit/conftest.py": "",
        "tests/unit/deep/test_nested.py": "from toy.m import f\n",
        "tests/unit/deep/test_unrelated.py": "import json\n",
        "tests/unit/deep/helper.txt": "from toy.m import f\n",
        "tests/integration/test_live.py": "from toy.m import f\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _peer(tmp_path: Path, extra: str) -> PeerSuite:
    path = tmp_path / "targets.toml"
    path.write_text(TOY + extra)
    peer = load_targets(path)["toy"].peer
    assert peer is not None
    return peer


def _rel(root: Path, files: list[str]) -> list[str]:
    return [str(Path(f).relative_to(root)) for f in files]


def test_default_is_the_top_level_of_tests(tmp_path: Path) -> None:
    root = _tree(tmp_path / "sdist")
    peer = _peer(tmp_path, "tests_matching = 'from toy'\n")
    assert peer.tests == ("tests/test_*.py",)
    assert _rel(root, select_tests(root, peer)) == ["tests/test_top.py"]


def test_nested_globs_and_paths(tmp_path: Path) -> None:
    root = _tree(tmp_path / "sdist")
    peer = _peer(
        tmp_path,
        "tests = ['tests/unit/**/test_*.py', 'tests/test_top.py',"
        " 'tests/unit/deep/test_nested.py']\n"
        "tests_matching = 'from toy'\n",
    )
    # each file once, sorted; the integration folder and non-test files are not named
    assert _rel(root, select_tests(root, peer)) == [
        "tests/test_top.py",
        "tests/unit/deep/test_nested.py",
    ]


def test_without_tests_matching_every_named_file_runs(tmp_path: Path) -> None:
    root = _tree(tmp_path / "sdist")
    peer = _peer(tmp_path, "tests = ['tests/unit/**/test_*.py']\n")
    assert _rel(root, select_tests(root, peer)) == [
        "tests/unit/deep/test_nested.py",
        "tests/unit/deep/test_unrelated.py",
    ]


def test_the_report_names_the_conftests_pytest_loads(tmp_path: Path) -> None:
    root = _tree(tmp_path / "sdist")
    (root / "tests/integration/conftest.py").write_text("")
    nested = str(root / "tests/unit/deep/test_nested.py")
    assert _conftests(root, (nested,)) == ["tests/unit/conftest.py"]


@pytest.mark.parametrize("tests", ["[]", "['/abs/test_x.py']", "['']"])
def test_bad_tests_is_a_config_error(tmp_path: Path, tests: str) -> None:
    with pytest.raises(ConfigError, match=r"\[toy.peer\] tests"):
        _peer(tmp_path, f"tests = {tests}\n")


def test_label_defaults_to_the_targets_possessive(tmp_path: Path) -> None:
    assert _peer(tmp_path, "").label == "toy's tests"
    assert target_config("gitreins").peer is not None
    assert target_config("gitreins").peer.label == "gitreins' tests"
    assert target_config("gitreins").peer.tests == ("tests/test_*.py",)


def test_langchain_selects_its_nested_summarization_tests(tmp_path: Path) -> None:
    peer = target_config("langchain").peer
    assert peer is not None
    root = tmp_path / "sdist"
    impl = root / "tests/unit_tests/agents/middleware/implementations"
    impl.mkdir(parents=True)
    (impl / "test_summarization.py").write_text(
        "from langchain.agents.middleware.summarization import SummarizationMiddleware\n"
    )
    (impl / "test_tool_call_limit.py").write_text("from langchain.agents.middleware import x\n")
    (root / "tests/integration_tests").mkdir(parents=True)
    (root / "tests/integration_tests/test_summarization_live.py").write_text(
        "from langchain.agents.middleware import SummarizationMiddleware\n"
    )
    assert _rel(root, select_tests(root, peer)) == [
        "tests/unit_tests/agents/middleware/implementations/test_summarization.py"
    ]


def test_openai_agents_selects_its_session_and_runner_tests(tmp_path: Path) -> None:
    peer = target_config("openai-agents").peer
    assert peer is not None
    compaction = "from agents.memory import OpenAIResponsesCompactionSession\n"
    files = {
        "tests/memory/test_compaction.py": compaction,
        "tests/test_agent_runner.py": "from agents import SQLiteSession\n",
        "tests/deferred_session_writes/test_recovery.py": "class S(SessionABC): ...\n",
        "tests/test_live_example.py": "relay(session=SimpleNamespace(id='x'))\n",  # realtime
        "tests/test_tool.py": "from agents import function_tool\n",
        "tests/extensions/memory/test_redis_session.py": "from agents import SQLiteSession\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert _rel(tmp_path, select_tests(tmp_path, peer)) == [
        "tests/deferred_session_writes/test_recovery.py",
        "tests/memory/test_compaction.py",
        "tests/test_agent_runner.py",
    ]


def test_the_worker_plugin_is_hashable() -> None:
    """pytest plugins are kept in sets (pluggy; inline-snapshot, which openai-agents'
    tests load, collects every registered plugin into one)."""
    from mutation.worker import Plugin

    a, b = Plugin(plan={}, out=None), Plugin(plan={}, out=None)
    assert len({a, b}) == 2
