"""Form choice on a real lightspeed-stack tree that no form names: main with OpenTelemetry
tracing added to its A2A endpoint (what a commit after main does), read as a commit no
fix names. Every fix outside A2A takes main's form (its text is main's); the A2A fix's
edit that the tracing line breaks is named. Text level: no environment is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit import fixes as fixlib
from ctxaudit import targets
from ctxaudit.targets.lightspeed import tree as lstree
from ctxaudit.targets.lightspeed.fixes import trees as ls_trees
from tests.lightspeed.conftest import lightspeed_repo  # noqa: F401  (the fixture)

A2A = "src/app/endpoints/a2a.py"
A2A_FIX = "LS-A2A-COMPACTED-TURN-LOST"
#: a commit after main that no form names
AFTER_MAIN = "e6bcd873"
#: inside the block of A2A's build_agent call, which the A2A fix's second edit quotes
ARGS = "                configuration,\n                shields=query_request.shield_ids,\n"
TRACED = (
    "                configuration,\n"
    '                tracer=trace.get_tracer("a2a"),  # the agent run gets a span\n'
    "                shields=query_request.shield_ids,\n"
)


@pytest.mark.lightspeed
def test_a_tree_after_main_gets_mains_forms_where_its_text_is_mains(
    lightspeed_repo: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    main = lstree.resolve("lightspeed-stack@main", lightspeed_repo)
    assert main.commit is not None and main.commit.startswith(ls_trees.MAIN), main.commit
    after = fixlib.copy_tree(main.root, tmp_path / "after-main", AFTER_MAIN)
    a2a = after / A2A
    text = a2a.read_text()
    assert text.count(ARGS) == 1, "main's A2A build_agent call changed: update ARGS"
    a2a.write_text(text.replace(ARGS, TRACED))

    every = targets.fixes()
    ls = {fid: fix for fid, fix in every.items() if fid.startswith("LS-")}
    with_edits = [
        fix
        for fid, fix in sorted(ls.items())
        if fid != A2A_FIX and (form := fix.form_for(ls_trees.MAIN)) and form.edits
    ]
    assert len(with_edits) == 9, [f.finding for f in with_edits]
    # each fix outside A2A takes the form main takes, though no form names this commit
    for fix in with_edits:
        assert fixlib.choose(fix, after, AFTER_MAIN) is fix.form_for(ls_trees.MAIN), fix.finding
    got = fixlib.fixed_copy(after, tmp_path / "fixed", AFTER_MAIN, [*with_edits, every[A2A_FIX]])
    assert got.applied == [f.finding for f in with_edits], got.failed
    # the A2A fix: which edit of which form did not match, and where its text stops
    why = got.failed[A2A_FIX]
    assert f"version {AFTER_MAIN}" not in why.replace(f"({AFTER_MAIN})", "")
    assert (
        "the form for 0.7.0rc1, 4db5a1ee, cd1a0484: edit 2 of 3, src/app/endpoints/a2a.py: "
        "the text to replace is not found (its line 5 of 6 is where it stops matching: "
        "'shields=query_request.shield_ids,')"
    ) in why, why
    # main itself still takes the A2A form
    assert fixlib.choose(every[A2A_FIX], main.root, AFTER_MAIN).edits
