"""The lightspeed-stack trees the ``ls_*`` fixes' forms name, as tags and commit
prefixes: the same names ``ctxaudit/targets/lightspeed/findings.py`` registers its
findings for (a test checks the two agree). Defines no fix."""

#: main's head in the repository copy of 2026-08-21
MAIN = "cd1a0484"
#: the 0.6 line: its tags and release/0.6's head
RELEASE_06 = frozenset({"0.6.0", "0.6.1", "0.6.2", "b56fe5cb"})
#: the 0.7 line: its tag and release/0.7's head
RELEASE_07 = frozenset({"0.7.0rc1", "4db5a1ee"})

#: lightspeed-stack's own unit test that asserts the recent turns are exactly the items
#: after the last marker, on items no fold under the test's configuration wrote (a
#: marker that covers everything before it): the reading LS-BUFFER-TURNS-LOST reports
#: as losing the turns a fold keeps before its marker. With the fixes of
#: LS-BUFFER-TURNS-LOST and LS-BUFFER-SPLITS-TURNS together (the fold replayed as
#: whole turns) the markers are read as those folds would have written them, and the
#: items before the last marker come back; either fix alone leaves the test passing
MARKER_READING_PIN = (
    "tests/unit/utils/test_conversation_compaction.py::test_items_after_last_marker"
)
