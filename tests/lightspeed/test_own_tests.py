"""lightspeed-stack's own tests (its ``tests/unit``, ``[lightspeed-stack.peer]`` in its
mutation.toml), as the fix audit's ``--own-tests`` and the mutation audit's peer
comparison run them: in the tree's peer environment (its ``dev`` group), from the tree's
folder, with the copy under test first on the path.

The tree's pyproject.toml puts its own ``src/`` on the path (``pythonpath``), which
would have the tests import the tree and never the copy: a fix that breaks them would
pass. So one of them runs on a copy of main, as it is and with a comparison turned
around in the copy only; it must pass, then fail.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxaudit import targets
from ctxaudit.suite_run import own_tests_runner

pytestmark = pytest.mark.lightspeed

COMPACTION = "src/utils/conversation_compaction.py"
#: the trigger's comparison (C1), and its own unit test that pins it
TRIGGER = "return estimated_tokens > threshold and"
TEST = "tests/unit/utils/test_conversation_compaction.py::test_should_compact"


def test_its_own_tests_import_the_copy_under_test(lightspeed_repo: Path, tmp_path: Path) -> None:
    kind = targets.get("lightspeed-stack")
    (target,) = kind.expand("lightspeed-stack@main", lightspeed_repo)
    resolved = kind.resolve(target.spec, lightspeed_repo)
    copy = tmp_path / "copy"
    shutil.copytree(resolved.root, copy, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    run = own_tests_runner(target)

    as_is = run(copy, [TEST])
    assert not as_is.error, as_is.error
    assert [(t["nodeid"], t["outcome"]) for t in as_is.tests] == [(TEST, "passed")]

    source = copy / COMPACTION
    text = source.read_text()
    assert text.count(TRIGGER) == 1, "the trigger's comparison moved: pick another edit"
    source.write_text(text.replace(TRIGGER, TRIGGER.replace(" > ", " < ")))
    broken = run(copy, [TEST])
    assert not broken.error, broken.error
    assert broken.failed() == {TEST}, "the tree's own code ran, not the copy's"
    # the tree itself is untouched
    assert TRIGGER in (resolved.root / COMPACTION).read_text()
