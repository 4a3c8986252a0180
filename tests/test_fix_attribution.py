"""The command that reruns an attribution (``ctxaudit.attribution.attribute_command``) names
the version the way its target resolves it again (``attribute_args``): a lightspeed-stack
tree by its spec and repository, not by the report's version (``main-gcd1a048`` names no
tree); and it leaves out the regions the unfixed tree's run left out. Milliseconds; the
real attribution on a lightspeed-stack failure is
``tests/lightspeed/test_lightspeed_attribution.py``."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.attribution import attribute_command
from ctxaudit.cli import build_parser
from ctxaudit.fixaudit import FixAuditOptions, fix_audit
from ctxaudit.target_report import Finding, TargetReport

BLOB = "You can reproduce this example by temporarily adding @reproduce_failure('6.1', b'AXic') as a decorator"  # noqa: E501
SHA = "cd1a04848fee8261aa186cf230ce0d5224a29969"


def lightspeed_report() -> TargetReport:
    r = TargetReport("lightspeed-stack", "main-gcd1a048", f"lightspeed-stack@{SHA}", "ci", 1, 0, 1)
    r.known = [
        {"id": "LS-A", "property": "S6", "affects": True},
        {"id": "LS-B", "property": "C1", "affects": True},
        {"id": "LS-C", "property": "S1", "affects": False},
    ]
    return r


def test_a_lightspeed_attribution_names_the_tree_its_target_resolves() -> None:
    failure = Finding(
        ["C1"], "C1: ...", "tests/lightspeed/inenv/test_lockstep.py::T::runTest", BLOB
    )
    cmd = attribute_command(lightspeed_report(), failure, "LS-B", ["LS-A"])
    words = shlex.split(cmd)
    assert words[0] == "CTXAUDIT_FINDINGS=LS-A"  # what the unfixed run left out
    args = build_parser().parse_args(words[2:])  # after "bin/ctxaudit"
    assert args.command == "attribute" and args.fix == "LS-B" and args.lightspeed_repo == "REPO"
    assert args.target == f"lightspeed-stack@{SHA}" and args.blob == "b'AXic'"
    assert args.test == failure.test and args.profile == "ci" and args.seed == 1
    assert targets.get("lightspeed-stack").claims(args.target)
    # by default, every finding that affects the version is left out
    assert attribute_command(lightspeed_report(), failure, "LS-B").startswith(
        "CTXAUDIT_FINDINGS=LS-A,LS-B "
    )


def test_a_gitreins_attribution_names_its_version() -> None:
    r = TargetReport("gitreins", "0.13.0", "0.13.0", "thorough", 5, 0, 1)
    cmd = attribute_command(r, Finding(["V6"], "V6", "tests/gitreins/t.py::test_x", ""), "GR-X")
    args = build_parser().parse_args(shlex.split(cmd)[2:])
    assert args.target == "gitreins==0.13.0" and args.lightspeed_repo is None
    assert cmd.startswith("CTXAUDIT_FINDINGS=none ")


def test_the_replays_leave_out_what_the_unfixed_run_left_out(tmp_path: Path) -> None:
    """``fix_audit(left_out=...)``: the unfixed tree's run kept a known finding's region
    in; its failure is replayed with the same regions left out, and the rerun command
    says so."""
    from tests.audit.test_fixes import FIX_X, fake_runner, report, tree

    inner = fake_runner([])
    envs: list[dict[str, str]] = []

    def run(copy: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        envs.append(dict(env))
        return inner(copy, paths, env, replays)

    r = report(["X", "Y"])
    fix_audit(
        r,
        tree(tmp_path),
        run,
        FixAuditOptions(
            ["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": FIX_X}, left_out=["Y"]
        ),
    )
    replays = envs[:2]  # the control, then X's tree
    assert all(e["CTXAUDIT_FINDINGS"] == "Y" for e in replays), replays
    (attributed,) = r.attributed
    assert attributed.owners == ["X"] and attributed.rerun.startswith("CTXAUDIT_FINDINGS=Y ")
