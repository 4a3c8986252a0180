"""The one target interface (ctxaudit/targets/base.py) and its registry.

The three real targets satisfy it and agree with what the rest of the project knows
about them; a toy target registered here (one ``register`` call, no audit code touched)
is listed, resolved, run by the audit and reported.
"""

from __future__ import annotations

import ast
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import audit, targets
from ctxaudit.targets.base import BaseTarget, Described, Resolved, Target

ROOT = Path(__file__).resolve().parents[1]


def test_the_real_targets_are_registered_in_report_order() -> None:
    assert targets.names()[:8] == [
        "gitreins",
        "lightspeed-stack",
        "langchain",
        "openai-agents",
        "pydantic-ai",
        "google-adk",
        "strands-agents",
        "ledger",
    ]
    assert list(audit.PROPERTIES)[:8] == targets.names()[:8]


@pytest.mark.parametrize("name", ["gitreins", "ledger", "lightspeed-stack", "langchain"])
def test_each_real_target_satisfies_the_interface(name: str) -> None:
    t = targets.get(name)
    assert isinstance(t, Target) and t.name == name
    assert t.properties and all(p[0] in "BVSC" for p in t.properties)
    for suite in (*t.suites, *t.suite_ignores):
        assert (ROOT / suite).exists(), suite
    assert not t.findings_registry or (ROOT / t.findings_registry).is_file()
    for f in t.findings():
        assert set(f.property.split("/")) <= set(t.properties), f
    if t.mutation is not None:  # its mutation.toml has its table, with the same layout
        assert t.mutation.config is not None
        sections = tomllib.loads(t.mutation.config.read_text())
        section = sections[t.mutation.section]
        assert section["package"] == t.mutation.copy_dir.strip(".")
        assert section.get("source_root", "") == t.mutation.source_root


def test_unknown_names_and_specs_are_one_line_errors() -> None:
    with pytest.raises(targets.TargetError, match="unknown target 'nope'; registered: gitreins"):
        targets.get("nope")
    with pytest.raises(targets.TargetError, match=r"target 'gitreinz==1': expected .*'ledger'"):
        targets.parse("gitreinz==1")


def test_ledger_resolves_to_this_repository() -> None:
    r = targets.get("ledger").resolve()
    assert (r.root, r.copy_dir, r.spec) == (ROOT, "ledger", "ledger")
    assert (r.root / r.copy_dir / "__init__.py").is_file()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert r.version == version
    assert targets.parse("ledger") == [Described("ledger", "ledger", version)]


def test_pinned_gitreins_resolves_and_loads() -> None:
    t = targets.get("gitreins")
    r = t.resolve("")
    assert r.copy_dir == "engine" and (r.root / "engine/eval_cap.py").is_file()
    assert targets.parse("gitreins") == [Described("gitreins", r.version, r.version)]
    assert t.claims(str(r.root)) and not t.claims(str(ROOT))
    modules = t.load(r)
    assert Path(modules.eval_cap.__file__).is_relative_to(r.root)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "spec"), [("ledger", None), ("gitreins", "")])
def test_the_registry_resolves_as_the_mutation_runner_does(name: str, spec: str | None) -> None:
    import mutation

    r = targets.get(name).resolve(spec)
    assert mutation.resolve_target(name, spec) == (r.mutation_root, r.version, r.copy_dir)


# -- a fourth target: one class and one register() call ------------------------------------


class Toy(BaseTarget):
    """A toy target: its "implementation" is a folder with a VERSION file, its suite one
    test file that checks T1 (holds) and T2 (fails)."""

    name = "toy"
    properties = {"T1": "toy holds", "T2": "toy breaks", "T3": "never checked"}
    spec_forms = "'toy==X'"

    def __init__(self, home: Path) -> None:
        self.home = home
        self.suites = (str(home / "test_toy.py"),)

    def claims(self, spec: str) -> bool:
        return spec.startswith("toy")

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, self.resolve(spec).version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        version = (spec or "").partition("==")[2] or (self.home / "VERSION").read_text().strip()
        if not version[0].isdigit():
            raise targets.TargetError(f"toy: {version!r} is not a version")
        return Resolved(self.name, version, self.home, f"toy=={version}", copy_dir="toy")


SUITE = """
import pytest

@pytest.mark.properties("T1")
def test_holds():
    assert 1 + 1 == 2

@pytest.mark.properties("T2")
def test_breaks():
    assert False, "T2: the toy breaks"
"""


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Toy]:
    home = tmp_path / "toy"
    home.mkdir()
    (home / "VERSION").write_text("1.0\n")
    (home / "test_toy.py").write_text(textwrap.dedent(SUITE))
    target = Toy(home)
    targets.register(target)
    yield target
    targets.unregister("toy")


def test_a_toy_target_is_listed_and_resolved(toy: Toy) -> None:
    assert isinstance(toy, Target)
    assert "toy" in targets.names() and targets.get("toy") is toy
    assert audit.parse_target("toy==2.1") == [Described("toy", "toy==2.1", "2.1")]
    with pytest.raises(targets.TargetError, match="toy: 'x' is not a version"):
        audit.parse_target("toy==x")
    with pytest.raises(targets.TargetError, match="'toy==X'"):  # the forms name it too
        audit.parse_target("nothing-claims-this")
    assert targets.properties()["toy"]["T1"] == "toy holds"


def test_the_audit_runs_and_reports_a_toy_target(toy: Toy, tmp_path: Path) -> None:
    (target,) = audit.parse_target("toy")
    assert target.label == "toy-1.0"
    report = audit.run_target(target, "ci", 3, tmp_path / "reports")
    assert report.verdicts == {"T1": "holds", "T2": "fails", "T3": "not checked"}
    assert [f.message for f in report.findings] == ["T2: the toy breaks"]
    md = (tmp_path / "reports/toy-1.0/findings.md").read_text()
    assert "T2: the toy breaks" in md and "never checked" in md
    rerun = audit.rerun_command(report, report.findings[0].test)
    assert rerun.startswith("CTXAUDIT_PROFILE=ci bin/ctxaudit test '") and "seed=3" in rerun
    # no mutation scope: the audit says so and runs nothing
    code, why = audit.run_mutation(target, tmp_path / "reports")
    assert code == 2 and why == "mutation not run: not wired into the audit for toy trees yet"


def test_a_registered_module_path_is_imported_when_asked(tmp_path: Path) -> None:
    targets.register("ctxaudit.targets.ledger.target:TARGET", "ledger-again")
    try:
        assert targets.get("ledger-again") is targets.get("ledger")
    finally:
        targets.unregister("ledger-again")
    assert "ledger-again" not in targets.names()


def test_the_mutation_scope_is_data() -> None:
    scope = targets.get("gitreins").mutation
    assert scope is not None and scope.config is not None
    assert (scope.section, scope.copy_dir, scope.spec_option, scope.peer) == (
        "gitreins",
        "engine",
        "--gitreins",
        True,
    )
    assert scope.config.parent == ROOT / "ctxaudit/targets/gitreins"
    ls = targets.get("lightspeed-stack").mutation
    assert ls is not None and (ls.copy_dir, ls.source_root) == (".", "src")


@pytest.mark.parametrize(
    "path",
    [
        "ctxaudit/audit.py",
        "ctxaudit/mutation_audit.py",
        "ctxaudit/suite_run.py",
        "ctxaudit/cli.py",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ctxaudit/pipeline").glob("*.py")),
    ],
)
def test_the_audit_never_branches_on_a_target_name(path: str) -> None:
    """No comparison with a registered target's name: the audit asks the target."""
    tree = ast.parse((ROOT / path).read_text())
    names = set(targets.names())
    compared = [
        (node.lineno, c.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for c in [node.left, *node.comparators]
        if isinstance(c, ast.Constant) and c.value in names
    ]
    assert compared == []


def test_a_target_that_documents_no_spec_forms_is_still_listed(tmp_path: Path) -> None:
    """An installed harness's target with no ``spec_forms`` is named in ``--help`` and in
    the unknown-target error all the same."""

    class Plain(Toy):
        name = "plainharness"
        spec_forms = ""

        def claims(self, spec: str) -> bool:
            return spec == self.name

    targets.register(Plain(tmp_path))
    try:
        assert "; plainharness" in targets.forms() or targets.forms().endswith("plainharness")
        with pytest.raises(targets.TargetError, match="plainharness"):
            targets.parse("nosuch")
    finally:
        targets.unregister("plainharness")
