"""docs/properties.md stays true to the code, and no document points outside the repository.

Fails when a property (the audit's lists, the model's docstrings), a registered
finding or a test file's ``properties`` marker is missing from the page, when a
``path::name`` or a repository path it cites no longer exists, or when a file
points at the specification outside the repository. Reads files only: fast.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ctxaudit.audit import PROPERTIES
from ctxaudit.properties import CATALOGUE
from ctxaudit.targets.gitreins import findings as gitreins_findings
from ctxaudit.targets.lightspeed import findings as lightspeed_findings

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "properties.md"
TEXT = DOC.read_text()
PROP = re.compile(r"\b[BVSC]\d\b")
MARKER = re.compile(r"mark\.properties\(([^)]*)\)")
TOP = {"model", "ctxaudit", "tests", "ledger", "mutation", "docs", "reports"}


def sections() -> dict[str, str]:
    """Each ``### <property> ...`` section's text, up to the next heading."""
    found = re.findall(r"^### (\w+)[^\n]*\n(.*?)(?=^##)", TEXT + "\n##", re.M | re.S)
    return dict(found)


SECTIONS = sections()


def test_every_property_has_a_section() -> None:
    known = {p for props in PROPERTIES.values() for p in props}
    for path in (ROOT / "model").glob("*.py"):
        known |= set(PROP.findall(path.read_text()))
    assert sorted(known - set(SECTIONS)) == [], "properties missing from docs/properties.md"
    assert sorted(set(SECTIONS) - known) == [], "sections for properties nobody checks"
    assert sorted(known) == sorted(CATALOGUE), "the catalogue and the checked properties differ"


def test_each_section_is_headed_by_the_catalogues_name() -> None:
    """``### <id> <name>``: the name is the catalogue's (ctxaudit/properties.py)."""
    headings = dict(re.findall(r"^### (\w+) ([^\n]*)$", TEXT, re.M))
    assert headings == {p.id: p.name for p in CATALOGUE.values()}


@pytest.mark.parametrize("finding", gitreins_findings.FINDINGS, ids=lambda f: f.id)
def test_gitreins_finding_is_under_its_property(finding: gitreins_findings.Finding) -> None:
    assert f"`{finding.id}`" in SECTIONS[finding.prop], f"{finding.id} not under {finding.prop}"


@pytest.mark.parametrize("finding", lightspeed_findings.FINDINGS, ids=lambda f: f.id)
def test_lightspeed_finding_is_under_its_properties(finding: lightspeed_findings.Finding) -> None:
    for prop in (finding.prop, *finding.also):
        assert f"`{finding.id}`" in SECTIONS[prop], f"{finding.id} not under {prop}"


def test_every_marked_test_file_is_named_under_its_properties() -> None:
    missing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        rel = path.relative_to(ROOT).as_posix()
        for args in MARKER.findall(path.read_text()):
            missing += [f"{rel} under {p}" for p in PROP.findall(args) if rel not in SECTIONS[p]]
    assert missing == [], "marked test files missing from docs/properties.md"


def _defined(tree: ast.Module, dotted: str) -> bool:
    body: list[ast.stmt] = tree.body
    for part in dotted.split("."):
        for node in body:
            names: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            if part in names:
                body = node.body if isinstance(node, ast.ClassDef) else []
                break
        else:
            return False
    return True


def test_cited_names_and_paths_exist() -> None:
    wrong = []
    for path, name in set(re.findall(r"`([\w/.-]+\.py)::([\w.]+)`", TEXT)):
        file = ROOT / path
        if not file.is_file() or not _defined(ast.parse(file.read_text()), name):
            wrong.append(f"{path}::{name}")
    for path in set(re.findall(r"`([\w.-]+(?:/[\w.-]+)+)(?:::[\w.]+)?`", TEXT)):
        if path.split("/")[0] in TOP and not (ROOT / path).exists():
            wrong.append(path)
    assert sorted(wrong) == [], "docs/properties.md cites what does not exist"


#: the specification outside the repository, by path or by its section names
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + "shared",
            "shared/" + "SPEC",
            "SPEC" + r"\.md",
            r"\bSPEC (?:section|\d|[BVSC]\d)",
        ]
    )
)
SCANNED = [
    "README.md",
    "pyproject.toml",
    "docs",
    "model",
    "ledger",
    "ctxaudit",
    "mutation",
    "tests",
]
SUFFIXES = {".py", ".md", ".toml", ".html", ".j2", ".txt", ".cfg"}
#: virtualenvs, caches and the mutation runner's work copies (copies of targets)
SKIPPED = {".venv", ".cache", "__pycache__", "work"}


def test_nothing_points_outside_the_repository() -> None:
    assert "docs/properties.md" in (ROOT / "README.md").read_text()
    hits = []
    for top in SCANNED:
        base = ROOT / top
        files = [base] if base.is_file() else base.rglob("*")
        for path in files:
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if SKIPPED & set(path.relative_to(ROOT).parts):  # not the checkout's own path
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if OUTSIDE.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert hits == [], "point to docs/properties.md instead:\n" + "\n".join(hits)


#: an absolute path of the machine a report was written on
MACHINE_PATH = re.compile(r"(?<![\w<.~-])/(?:root|home|work|tmp|Users|srv|var)/")


def test_no_committed_report_or_document_holds_a_machine_path() -> None:
    """Reports and documents name places relative to the checkout (or by a placeholder
    such as ``<tmp>``, ``<venv>``): a path of the machine they were written on is
    meaningless anywhere else."""
    import subprocess

    listed = subprocess.run(
        ["git", "ls-files", "reports", "docs", "*.md"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    found = [
        f"{name}: {m.group(0)!r}"
        for name in listed
        if (ROOT / name).is_file() and name.endswith((".md", ".json", ".html", ".svg", ".txt"))
        for m in [MACHINE_PATH.search((ROOT / name).read_text(errors="replace"))]
        if m
    ]
    assert found == [], "\n".join(found)


def _expected_summary(label: str) -> str:
    """The bare audit's last line for a default target's current release, from what is
    registered for it: each registered finding reproduces and its fix, where it has one
    for the version, is verified (the audit checks both; tests/<target> hold it to
    them), nothing else breaks (a plain install's bare audit said exactly these lines
    on 2026-12-06)."""
    from ctxaudit import targets

    kind, _, version = label.rpartition("-")
    target = targets.get(kind)
    ids = target.left_out(version) if target.excludes_known else []
    by_id = {f.id: f for f in target.findings()}
    on = sorted({p for i in ids for p in by_id[i].property.split("/")})
    parts = ["holds " + " ".join(p for p in target.properties if p not in on)]
    if ids:
        fixes = targets.fixes()
        forms = [fixes[i].form_for(version) for i in ids if i in fixes]  # a reason only: none
        fixed = sum(1 for form in forms if form is not None and (form.edits or form.patch))
        parts.append(f"known {len(ids)} finding(s) on {' '.join(on)}, {fixed} fix(es) "
                     "verified, the fully fixed tree holds")  # fmt: skip
    return f"ctxaudit: {label}: " + " · ".join([*parts, "new none"])


def test_the_readmes_sample_summary_is_what_the_registries_say() -> None:
    """The README's sample of the bare audit's last lines drifts when a finding is
    registered: each line must be the one the registries give now, for every default
    target, in order."""
    from ctxaudit import targets

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = [ln for ln in text.splitlines() if re.match(r"^ctxaudit: [a-z-]+-[\w.]+: holds ", ln)]
    labels = [ln.split(": ")[1] for ln in shown]
    defaults = [t.name for t in targets.all_targets() if t.default_spec]
    assert [label.rpartition("-")[0] for label in labels] == defaults
    assert shown == [_expected_summary(label) for label in labels]
