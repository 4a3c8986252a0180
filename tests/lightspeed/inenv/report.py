"""How the lightspeed-stack lockstep reports a difference: which property, side by side."""

from __future__ import annotations

import itertools

from ctxaudit.targets.lightspeed.wire import ItemView
from model import settlement as model


def shown_by(
    got: list[ItemView],
    expected: list[ItemView],
    before: tuple[model.Turn, ...],
    outcome: model.Outcome,
) -> str:
    """Which settlement property an S6 difference shows, when it can tell (``S1/``...).

    With no owner in the tree, what was written is seen only in the
    conversation: a turn stored that nobody should write (S1), a turn stored
    twice (S3), a turn whose items are not the original input and output (S2).
    """
    kept = len(model.flatten(before))
    added, wanted = got[kept:], expected[kept:]
    if got[:kept] != expected[:kept]:
        return ""
    if outcome.writer is None and added:
        return "S1/"
    if wanted and len(added) > len(wanted) and all(item in wanted for item in added):
        return "S3/"  # the turn's items, some of them more than once
    if wanted and added and added[-1] == wanted[-1]:  # the answer is there, not as it should be
        return "S2/"
    return ""


def side_by_side(title: str, label: str, got: list[ItemView], expected: list[ItemView]) -> str:
    """The two lists item by item, the first difference marked ``>>``."""
    lines = [title, f"   {'#':>3}  {label:<48} | model"]
    first = next(
        (i for i, pair in enumerate(itertools.zip_longest(got, expected)) if pair[0] != pair[1]),
        None,
    )
    for index, (g, e) in enumerate(itertools.zip_longest(got, expected)):
        mark = ">>" if index == first else ("!!" if g != e else "  ")
        left = str(g) if g is not None else "<missing>"
        right = str(e) if e is not None else "<absent>"
        lines.append(f"{mark} {index:>3}  {left[:48]:<48} | {right[:60]}")
    return "\n".join(lines)
