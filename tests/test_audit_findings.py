"""How the audit turns a failed test into findings: property ids and the
shrunk reproduction, for plain failures and Hypothesis' multi-failure groups."""

from __future__ import annotations

from ctxaudit.audit import extract_findings

PLAIN = """\
>       assert got.compacted == [False, True], (
E       AssertionError: V8/V1: compaction_threshold=0.9 means ratio 0.9: got [False, False]
E       assert [False, False] == [False, True]

tests/gitreins/test_config.py:51: AssertionError
"""

GROUP = """\
  + Exception Group Traceback (most recent call last):
  | ExceptionGroup: Hypothesis found 2 distinct failures. (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | AssertionError: V4: progress lists [0] as verified, the model [1]
    | Failing test case: <state machine>
    | state = ValveLockstep()
    | state.fail(failure=Failure(text='boom'))
    | state.teardown()
    | You can reproduce this test case by adding @reproduce_failure('6', b'AX') as a decorator
    +---------------- 2 ----------------
    | AssertionError: the target loop crashed: RuntimeError('x')
    | Failing test case: <state machine>
    | state = ValveLockstep()
    | You can reproduce this test case by adding @reproduce_failure('6', b'AY') as a decorator
"""


def test_plain_failure_names_its_properties() -> None:
    (f,) = extract_findings({"nodeid": "t", "longrepr": PLAIN, "properties": ["V8"]})
    assert f.properties == ["V8", "V1"]
    assert f.message.startswith("V8/V1: compaction_threshold=0.9")


def test_group_gives_one_finding_each_with_its_reproduction() -> None:
    found = extract_findings({"nodeid": "t", "longrepr": GROUP, "properties": ["V1", "V4"]})
    assert [f.properties for f in found] == [["V4"], ["V1", "V4"]]
    assert "state.fail(failure=Failure(text='boom'))" in found[0].reproduction
    assert found[0].reproduction.rstrip().endswith("as a decorator")
    assert "Failing test case" in found[1].reproduction
