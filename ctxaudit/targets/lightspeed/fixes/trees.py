"""The lightspeed-stack trees the ``ls_*`` fixes' forms name, as tags and commit
prefixes: the same names ``ctxaudit/targets/lightspeed/findings.py`` registers its
findings for (a test checks the two agree). Defines no fix."""

#: main's head in the repository copy of 2026-08-21
MAIN = "cd1a0484"
#: the 0.6 line: its tags and release/0.6's head
RELEASE_06 = frozenset({"0.6.0", "0.6.1", "0.6.2", "b56fe5cb"})
#: the 0.7 line: its tag and release/0.7's head
RELEASE_07 = frozenset({"0.7.0rc1", "4db5a1ee"})
