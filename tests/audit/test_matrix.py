"""The release-audit matrix (ctxaudit/matrix.py) on small report fixtures.

Fixtures: tests/audit/fixtures/reports (regenerate with make_fixtures.py): gitreins
0.13.0, 0.14.0, 0.15.0, 0.17.1 and a ledger; GR-GAP-062 affects 0.13.0 and 0.14.0
and is fixed in 0.15.0.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import matrix
from ctxaudit.matrix.view import summary_lines

FIXTURES = Path(__file__).parent / "fixtures" / "reports"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixtures, so the written matrix sits next to them as in reports/."""
    out = tmp_path_factory.mktemp("reports") / "reports"
    shutil.copytree(FIXTURES, out)
    return out


@pytest.fixture(scope="module")
def m(reports: Path) -> matrix.Matrix:
    return matrix.build(matrix.find_reports(reports))


@pytest.fixture(scope="module")
def written(m: matrix.Matrix, reports: Path) -> tuple[str, str]:
    md, page = matrix.write(m, reports)
    assert (md, page) == (reports / "matrix.md", reports / "matrix.html")
    return md.read_text(), page.read_text()


def _by(m: matrix.Matrix, version: str) -> matrix.VersionReport:
    return next(v for v in m.versions if v.version == version)


def _findings(target: str, version: str, **extra: Any) -> dict[str, Any]:
    return {
        "target": target,
        "version": version,
        "exit_status": 0,
        "ok": True,
        "verdicts": {"B1": "holds"},
        "findings": [],
        "known": [],
        **extra,
    }


def _write(root: Path, data: dict[str, Any]) -> Path:
    d = root / f"{data['target']}-{data['version']}"
    d.mkdir(parents=True)
    (d / "findings.json").write_text(json.dumps(data))
    return d


# ----------------------------------------------------------------------------- ordering


def test_versions_in_release_order_ledger_last(tmp_path: Path) -> None:
    versions = ["0.10.0", "git-abc", "0.9.0", "0.13.0", "0.10.0rc1", "local-tree"]
    dirs = [
        _write(tmp_path, _findings("ledger" if v == "git-abc" else "gitreins", v)) for v in versions
    ]
    got = [v.label for v in matrix.build(dirs).versions]
    assert got == [
        "gitreins 0.9.0",
        "gitreins 0.10.0rc1",
        "gitreins 0.10.0",
        "gitreins 0.13.0",
        "gitreins local-tree",  # not PEP 440: after the releases
        "ledger git-abc",
    ]


def test_fixture_order_and_consecutive_pairs(m: matrix.Matrix) -> None:
    assert [v.version for v in m.versions] == [
        "0.13.0",
        "0.14.0",
        "0.15.0",
        "0.17.1",
        "git-abc1234",
    ]
    assert [(c.target, c.before, c.after) for c in m.changes] == [
        ("gitreins", "0.13.0", "0.14.0"),
        ("gitreins", "0.14.0", "0.15.0"),
        ("gitreins", "0.15.0", "0.17.1"),
    ]  # never across targets


# ----------------------------------------------------------------------------- changes


def test_diff_fixed_and_appeared(m: matrix.Matrix) -> None:
    c = m.changes[1]  # 0.14.0 -> 0.15.0
    assert c.fixed == ["GR-GAP-062"]
    assert c.appeared == []
    assert ("V7", "fails", "holds") in c.verdicts
    assert ("B6", "holds", "not checked") in c.verdicts
    assert ("V2", "fails", "fails") not in c.verdicts
    assert c.new_findings == (2, 0)
    assert m.changes[0].fixed == ["GR-POC-14-TRANSPORT-COMPACTS"]
    back = matrix.diff(_by(m, "0.15.0"), _by(m, "0.14.0"))
    assert back.appeared == ["GR-GAP-062"] and back.fixed == []


def test_diff_ignores_findings_not_checked_on_both(m: matrix.Matrix, tmp_path: Path) -> None:
    old = matrix.load_version(_write(tmp_path, _findings("gitreins", "0.12.0", registered=[])))
    assert old.known == [] and old.known_state("GR-GAP-062") is None
    c = matrix.diff(old, _by(m, "0.13.0"))
    assert c.appeared == [] and c.fixed == []


def test_unchanged_pair_is_empty(m: matrix.Matrix) -> None:
    v = _by(m, "0.17.1")
    assert matrix.diff(v, v).empty


def test_known_rows_show_appearing_and_disappearing(m: matrix.Matrix) -> None:
    rows = {r.id: r for r in m.known}
    gap = rows["GR-GAP-062"]
    assert gap.affected == ["0.13.0", "0.14.0"]
    assert gap.runs() == [("0.13.0", "0.14.0", "0.15.0")]
    assert rows["GR-POC-14-TRANSPORT-COMPACTS"].runs() == [("0.13.0", "0.13.0", "0.14.0")]
    assert rows["GR-V2-UNLIMITED-COMPACTS"].runs() == [("0.13.0", "0.17.1", None)]
    assert rows["GR-V2-UNLIMITED-COMPACTS"].registered == ["0.17.1"]


def test_runs_regression_and_unchecked() -> None:
    states: dict[str, bool | None] = {"1": True, "2": False, "3": True, "4": None}
    row = matrix.KnownRow("gitreins", "X", "V7", "", states, [])
    # fixed in 2, back in 3; 4 did not check it, so nothing says it was fixed
    assert row.runs() == [("1", "1", "2"), ("3", "3", None)]


# ----------------------------------------------------------------------------- scores


def test_scores_per_kind_from_mutation_json(m: matrix.Matrix) -> None:
    mu = _by(m, "0.17.1").mutation
    assert mu is not None
    got = {
        k: (s.total, s.detected, s.undetected, s.equivalent, s.score) for k, s in mu.kinds.items()
    }
    assert got == {
        # killed + crashed(->Killed) of 4
        "removed-write": (4, 2, 2, 0, 50.0),
        # killed, timeout, catalogue killed; one survivor; one equivalent left out
        "wrong-comparison": (5, 3, 1, 1, 75.0),
        # killed, flaky(->Survived)
        "other": (2, 1, 1, 0, 50.0),
    }
    assert list(mu.kinds) == ["removed-write", "wrong-comparison", "other"]
    assert mu.overall.score == 60.0
    assert mu.gate_passed is False and mu.gate_failures == 3
    assert mu.md_path is not None and mu.md_path.name == "mutation.md"
    ledger = _by(m, "git-abc1234").mutation
    assert ledger is not None and ledger.md_path is None
    assert mu.fixes == () and "fixed" not in (matrix.View.gate(_by(m, "0.17.1")) or "")


def test_a_fixed_tree_mutation_run_says_so(reports: Path, tmp_path: Path) -> None:
    """``--mutate fixed``: the gate the matrix shows names the tree it was decided on."""
    copy = tmp_path / "reports"
    shutil.copytree(reports / "gitreins-0.17.1", copy / "gitreins-0.17.1")
    path = copy / "gitreins-0.17.1" / "mutation.json"
    mte = json.loads(path.read_text())
    mte["config"]["fixes"] = ["GR-V2-UNLIMITED-COMPACTS", "GR-B6-DECIMAL-TIME"]
    path.write_text(json.dumps(mte))
    (v,) = matrix.build(matrix.find_reports(copy)).versions
    assert v.mutation is not None and len(v.mutation.fixes) == 2
    gate = matrix.View.gate(v)
    assert gate == "gate FAILED on the fully fixed tree (2 fixes): 3 gated mutants not killed"
    md, page = matrix.write(matrix.build(matrix.find_reports(copy)), copy)
    assert "on the fully fixed tree (2 fixes)" in md.read_text()
    assert "mutated: the fully fixed tree, 2 fixes" in page.read_text()


def test_a_fixed_tree_report_beside_the_released_one_is_shown(tmp_path: Path) -> None:
    """A version folder with ``fixed-tree/mutation.json`` (lightspeed-stack's trees: the
    released tree's report beside it) shows the fixed tree's scores and gate."""
    copy = tmp_path / "reports"
    shutil.copytree(FIXTURES / "gitreins-0.17.1", copy / "gitreins-0.17.1")
    folder = copy / "gitreins-0.17.1"
    mte = json.loads((folder / "mutation.json").read_text())
    mte["config"]["fixes"] = ["GR-V2-UNLIMITED-COMPACTS"]
    mte["config"]["gate"]["passed"], mte["config"]["gate"]["failures"] = True, []
    (folder / "fixed-tree").mkdir()
    (folder / "fixed-tree" / "mutation.json").write_text(json.dumps(mte))
    (v,) = matrix.build(matrix.find_reports(copy)).versions
    assert v.mutation is not None and v.mutation.json_path.parent.name == "fixed-tree"
    assert matrix.View.gate(v) == "gate passed on the fully fixed tree (1 fixes)"
    assert matrix.load_version(folder).mutation.fixes == ("GR-V2-UNLIMITED-COMPACTS",)  # type: ignore[union-attr]


def test_scores_agree_with_mutation_report(m: matrix.Matrix, reports: Path) -> None:
    """The per-kind score mutation/report.py puts in config.by_kind, from its own doc."""
    mte = json.loads((reports / "gitreins-0.17.1" / "mutation.json").read_text())
    kinds, _ = matrix.scores(mte)
    assert {k: s.score for k, s in kinds.items()} == {
        k: v["score"] for k, v in mte["config"]["by_kind"].items()
    }


def test_scores_leave_out_invalid_and_pending() -> None:
    mte = {
        "files": {
            "a.py": {
                "mutants": [
                    {"mutatorName": "removed-write:statement", "status": "Killed"},
                    {"mutatorName": "removed-write:statement", "status": "CompileError"},
                    {"mutatorName": "removed-write:statement", "status": "Pending"},
                    {"mutatorName": "removed-write:statement", "status": "Ignored"},
                    {"mutatorName": "ConditionalExpression", "status": "Survived"},
                ]
            }
        }
    }
    kinds, overall = matrix.scores(mte)
    assert kinds["removed-write"].score == 100.0
    assert kinds["other"].score == 0.0  # a mutatorName without a kind counts as other
    assert overall.score == 50.0
    ignored = [{"mutatorName": "other:x", "status": "Ignored"}]
    only_ignored = {"files": {"a.py": {"mutants": ignored}}}
    assert matrix.scores(only_ignored)[0]["other"].score is None


# ----------------------------------------------------------------------------- markdown


def _tables(md: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in md.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables + ([current] if current else [])


def test_markdown_has_the_grid(written: tuple[str, str]) -> None:
    md = written[0]
    assert "## Verdicts: gitreins" in md and "## Verdicts: ledger" in md
    assert "| property | 0.13.0 | 0.14.0 | 0.15.0 | 0.17.1 |" in md
    assert "| V7 the valve protects the cap | **✗ fails** | **✗ fails** | ✓ holds | ✓ holds |" in md
    assert "| B6 cap configuration | ✓ holds | ✓ holds | – not checked | ✓ holds |" in md
    assert "| mutation score: wrong-comparison | – | – | – | 75.0% (3/4) |" in md
    for table in _tables(md):  # every row has the header's number of cells
        widths = {len(re.split(r"(?<!\\)\|", row)) for row in table}
        assert len(widths) == 1, table[0]


def test_markdown_known_changes_and_reproductions(written: tuple[str, str]) -> None:
    md = written[0]
    assert (
        "| GR-GAP-062 | V7 | **✗ affects** | **✗ affects** | ✓ no | ✓ no | 0.13.0–0.14.0 "
        "| 0.15.0 |" in md
    )
    section = md.split("### gitreins 0.14.0 → 0.15.0")[1].split("###")[0]
    assert "Known findings fixed: GR-GAP-062" in section
    assert "New findings: 2 → 0 (-2)" in section
    # the reproduction keeps its text; a fence longer than the ``` inside it
    assert "````text" in md and "reply='<script>alert(1)</script> | ``` & done'" in md
    assert "[mutation](gitreins-0.17.1/mutation.md)" in md


# ----------------------------------------------------------------------------- html


VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.urls: list[str] = []
        self.tags: Counter[str] = Counter()

    def _attrs(self, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "data", "poster"):
                self.urls.append(value or "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(attrs)
        self.tags[tag] += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(attrs)
        self.tags[tag] += 1

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def _check(page: str) -> _Checker:
    c = _Checker()
    c.feed(page)
    c.close()
    return c


def test_html_is_well_formed(written: tuple[str, str]) -> None:
    page = written[1]
    assert page.startswith("<!DOCTYPE html>")
    c = _check(page)
    assert c.errors == []
    assert c.stack == []
    for tag in ("html", "head", "body", "main", "table", "svg", "details", "summary"):
        assert c.tags[tag] >= 1, tag
    assert c.tags["details"] == 3  # one per new finding
    assert c.tags["svg"] == 1


def test_html_has_no_external_resources(written: tuple[str, str]) -> None:
    page = written[1]
    c = _check(page)
    assert c.urls, "the page links the version reports"
    for url in c.urls:
        assert not re.match(r"^([a-z][a-z0-9+.-]*:|//)", url, re.I), url  # relative only
    assert c.tags["script"] == 0 and c.tags["link"] == 0 and c.tags["iframe"] == 0
    assert "url(http" not in page and "@import" not in page
    # text from reports is escaped, not markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "https://example.com/x" in page  # as text only (no href above)


def test_html_links_each_versions_mutation_report(written: tuple[str, str], reports: Path) -> None:
    c = _check(written[1])
    assert "gitreins-0.17.1/mutation.md" in c.urls
    assert "gitreins-0.17.1/mutation.json" in c.urls
    assert "ledger-git-abc1234/mutation.json" in c.urls
    assert "ledger-git-abc1234/mutation.md" not in c.urls  # not written for the ledger
    for url in c.urls:
        if not url.startswith("#"):
            assert (reports / url).exists(), url


def test_html_summary_and_accessible_cells(written: tuple[str, str]) -> None:
    page = written[1]
    head = page.split("</header>")[0]
    assert "4 of 5 fail" in head
    assert "Worst offenders: gitreins 0.14.0 (5 failing properties" in head
    assert "Mutation gate: failed on gitreins 0.17.1, ledger git-abc1234." in head
    # every coloured verdict cell also says its verdict in words
    for cls, word in (("holds", "holds"), ("fails", "fails"), ("nc", "not checked")):
        cells = re.findall(rf'<td class="c {cls}">([^<]*)</td>', page)
        assert cells and all(word in cell or "affects" in cell or "no" in cell for cell in cells)


def test_html_wide_tables_scroll_in_their_box(written: tuple[str, str]) -> None:
    """The grids, the known-findings tables and the chart scroll sideways inside their
    own box (never the page), with the first column of a grid always in view."""
    page = written[1]
    grids = re.findall(r'<div class="scroll"[^>]*>\n<table class="grid sticky">', page)
    assert len(grids) == 2  # gitreins, ledger
    known = re.findall(r'<div class="scroll"[^>]*>\n<table class="sticky">', page)
    assert len(known) == 1  # gitreins: the ledger has no known findings
    assert re.search(r'<div class="scroll"[^>]*>\n<svg class="chart"', page)
    assert "table.sticky th:first-child{position:sticky;left:0;" in page
    assert ".scroll{overflow-x:auto;" in page


def test_chart_bars_and_scores(m: matrix.Matrix) -> None:
    svg = matrix.chart_svg(m)
    bars = re.findall(r"<rect [^>]*><title>([^<]*)</title></rect>", svg)
    assert len(bars) == 3 * len(m.versions)
    assert "gitreins 0.14.0: 5 failing properties" in bars
    assert "gitreins 0.13.0: 3 known findings" in bars
    points = re.findall(r"<g><title>([^<]*)</title>", svg)
    assert sorted(points) == sorted(
        f"{label}: {kind} {score}"
        for label in ("gitreins 0.17.1", "ledger git-abc1234")
        for kind, score in (
            ("removed-write", "50.0%"),
            ("wrong-comparison", "75.0%"),
            ("other", "50.0%"),
        )
    )


def test_chart_without_mutation_runs(tmp_path: Path) -> None:
    svg = matrix.chart_svg(matrix.build([_write(tmp_path, _findings("gitreins", "0.13.0"))]))
    assert "Mutation score" not in svg and "<polyline" not in svg


# ----------------------------------------------------------------------------- CLI


def test_cli_writes_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert matrix.main([str(FIXTURES), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "matrix.md").exists() and (tmp_path / "matrix.html").exists()
    assert str(tmp_path / "matrix.html") in capsys.readouterr().out


def test_cli_no_reports_and_bad_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert matrix.main([str(tmp_path)]) == 2
    assert "no */findings.json" in capsys.readouterr().err
    bad = tmp_path / "gitreins-1.0.0"
    bad.mkdir()
    (bad / "findings.json").write_text("{not json")
    assert matrix.main([str(tmp_path)]) == 2  # nothing readable: nothing to write
    err = capsys.readouterr().err
    assert "gitreins-1.0.0/findings.json" in err and len(err.strip().splitlines()) == 1
    good = tmp_path / "gitreins-1.1.0"
    good.mkdir()
    (good / "findings.json").write_text(json.dumps(_findings("gitreins", "1.1.0")))
    assert matrix.main([str(tmp_path)]) == 0  # the readable one is written, the other named
    err = capsys.readouterr().err
    assert "gitreins-1.0.0/findings.json" in err and len(err.strip().splitlines()) == 1
    assert "gitreins-1.0.0/findings.json" in (tmp_path / "matrix.md").read_text()


# -- the third outcome: ctxaudit could not check ------------------------------------------


def _cnc_reports(tmp_path: Path) -> Path:
    """ledger 1.0 holds; 1.1 could not be checked on S2 (ctxaudit's own error); 1.2 fails
    S1 and could not check S2."""
    why = "AttributeError: 'NoneType' object has no attribute 'rows' (ctxaudit's own code)"
    for version, verdicts, unchecked in [
        ("1.0", {"S1": "holds", "S2": "holds"}, []),
        ("1.1", {"S1": "holds", "S2": "could not check"}, [("test_s2", ["S2"], why)]),
        ("1.2", {"S1": "fails", "S2": "could not check"}, [("test_s2", ["S2"], why)]),
    ]:
        data = _findings("ledger", version, verdicts=verdicts)
        data.pop("ok", None)  # read from verdicts and unchecked, as an older report has none
        data["exit_status"] = 1 if "fails" in verdicts.values() else 0
        data["unchecked"] = [{"nodeid": n, "properties": p, "why": w} for n, p, w in unchecked]
        _write(tmp_path, data)
    return tmp_path


def test_could_not_check_is_its_own_verdict(tmp_path: Path) -> None:
    m = matrix.build(matrix.find_reports(_cnc_reports(tmp_path)))
    v10, v11, v12 = (_by(m, v) for v in ("1.0", "1.1", "1.2"))
    assert (v10.outcome, v11.outcome, v12.outcome) == ("holds", "could not check", "fails")
    assert not v11.ok and v11.failing == [] and v11.cannot_check == ["S2"]
    assert v11.unchecked[0].nodeid == "test_s2"
    md, html = (p.read_text() for p in matrix.write(m, tmp_path, pause=False))
    grid = md.split("## Verdicts: ledger")[1].split("##")[0]
    status = next(ln for ln in grid.splitlines() if ln.startswith("| **status**"))
    assert status == "| **status** | ok | could not check | **FAILS** |"
    s2 = next(ln for ln in grid.splitlines() if ln.startswith("| S2"))
    assert s2.endswith("| ✓ holds | ? could not check | ? could not check |")
    assert "### ledger 1.1: COULD NOT CHECK: AttributeError" in md
    assert "### ledger 1.2: FAILS (S1; could not check S2)" in md
    assert "S2: ✓ holds → ? could not check" in md  # a change between versions
    assert "ctxaudit could not check 1 of 3" in md and "Every property holds" not in md
    assert '<td class="c cnc">? could not check</td>' in html
    assert '<span class="cnc">? could not check</span>' in html
    assert "✗ FAIL:" in html


def test_a_matrix_where_nothing_fails_but_something_could_not_check_does_not_pass(
    tmp_path: Path,
) -> None:
    _cnc_reports(tmp_path)
    shutil.rmtree(tmp_path / "ledger-1.2")
    m = matrix.build(matrix.find_reports(tmp_path))
    md, html = (p.read_text() for p in matrix.write(m, tmp_path, pause=False))
    assert "? COULD NOT CHECK:" in html and "✓ PASS" not in html
    assert "Every property holds on every version" not in md


def test_a_known_finding_that_could_not_be_checked_is_not_claimed_fixed(tmp_path: Path) -> None:
    for version, entry in [
        ("1.0", {"affects": True}),
        ("1.1", {"affects": False, "could_not_check": "the check did not run"}),
    ]:
        known = [{"id": "K1", "property": "S1", "summary": "s", "region": "r", "repro": "t",
                  "registered": False, **entry}]  # fmt: skip
        _write(tmp_path, _findings("ledger", version, known=known))
    m = matrix.build(matrix.find_reports(tmp_path))
    assert _by(m, "1.1").known_state("K1") is None
    assert m.changes[0].fixed == [] and m.known[0].runs() == [("1.0", "1.0", None)]


def test_an_unreadable_report_is_skipped_and_named(tmp_path: Path) -> None:
    _write(tmp_path, _findings("ledger", "1.0"))
    (tmp_path / "ledger-0.9").mkdir()
    (tmp_path / "ledger-0.9" / "findings.json").write_text('{"target": "ledger", "ver')
    m = matrix.build(matrix.find_reports(tmp_path))
    assert [v.version for v in m.versions] == ["1.0"]
    (skipped,) = m.skipped
    assert skipped.dir.name == "ledger-0.9" and "cannot read findings.json" in skipped.why
    md = matrix.to_markdown(m, tmp_path)
    assert "## Reports left out" in md and "`ledger-0.9/findings.json`" in md


def test_the_headline_leads_with_new_findings_then_the_known_ones(tmp_path: Path) -> None:
    """What a release manager asks first: known findings alone are no new failure (the
    page says so, not FAIL), a new finding is; then the known findings and their fixes."""
    known = [{"id": "K1", "property": "S1", "summary": "s", "region": "r", "repro": "t",
              "registered": True, "affects": True}]  # fmt: skip
    fix = {"fixes": [{"id": "K1", "property": "S1", "status": "fix verified", "detail": "",
                      "patch": ""}],
           "fixed": {"applied": ["K1"], "combined_patch": "", "failing": [], "remaining": 0,
                     "ok": True, "elapsed_s": 1.0}}  # fmt: skip
    for version in ("1.0", "1.1"):
        _write(tmp_path, _findings("ledger", version, verdicts={"S1": "fails"}, known=known, **fix))
    m = matrix.build(matrix.find_reports(tmp_path))
    lines = summary_lines(m)
    assert lines[1] == "New findings: none; every failure is a known finding's."
    assert lines[2] == (
        "Known findings: 1 known finding reproduces on 2 of 2 versions; each fix verified on "
        "every version it is needed; the fully fixed tree holds every property on 2 of 2."
    )
    html = matrix.write(m, tmp_path, pause=False)[1].read_text()
    assert '<div class="summary known"' in html and "✓ NO NEW FINDING" in html
    assert "✗ FAIL:" not in html

    new = {"properties": ["S1"], "message": "S1: broke", "test": "t", "reproduction": ""}
    data = _findings("ledger", "1.2", verdicts={"S1": "fails"}, known=known, findings=[new])
    _write(tmp_path, data)
    m = matrix.build(matrix.find_reports(tmp_path))
    assert summary_lines(m)[1] == "New failures on 1 of 3: ledger 1.2 (new finding (S1))."
    html = matrix.write(m, tmp_path, pause=False)[1].read_text()
    assert '<div class="summary fail"' in html and "✗ FAIL:" in html


def test_a_failure_the_fix_audit_attributed_to_a_known_finding_is_not_new(
    tmp_path: Path,
) -> None:
    """GR-GAP-062 (V7) also breaks V1 on gitreins 0.13.0: the fix audit attributes that
    failure to it, so V1 failing there is no new failure."""
    known = [{"id": "K1", "property": "S7", "summary": "s", "region": "r", "repro": "t",
              "registered": True, "affects": True}]  # fmt: skip
    attributed = [{"properties": ["S1"], "message": "S1: x", "test": "t", "reproduction": ""}]
    verdicts = {"S1": "fails", "S7": "fails"}
    _write(tmp_path, _findings("ledger", "1.0", verdicts=verdicts, known=known))
    m = matrix.build(matrix.find_reports(tmp_path))
    assert summary_lines(m)[1] == "New failures on 1 of 1: ledger 1.0 (S1 fails)."
    shutil.rmtree(tmp_path / "ledger-1.0")
    data = _findings("ledger", "1.0", verdicts=verdicts, known=known, attributed=attributed)
    _write(tmp_path, data)
    m = matrix.build(matrix.find_reports(tmp_path))
    assert summary_lines(m)[1] == "New findings: none; every failure is a known finding's."


def test_trees_follow_their_history_and_are_compared_on_their_line() -> None:
    """lightspeed-stack's trees line by line (the 0.6 tags then release/0.6's head, the
    0.7 line, then main); a change or a "fixed in" never crosses from one line to
    another (the committed reports of every tree)."""
    from ctxaudit.matrix.model import build
    from ctxaudit.targets.lightspeed.target import history_line

    root = Path(__file__).resolve().parents[2] / "reports"
    m = build(sorted(p.parent for p in root.glob("lightspeed-stack-*/findings.json")))
    order = [v.version for v in m.of("lightspeed-stack")]
    assert order == [
        "0.6.0", "0.6.1", "0.6.2", "release-0.6-gb56fe5c",
        "0.7.0rc1", "release-0.7-g4db5a1e",
        "g41d55b987cf8", "main-gcd1a048",
    ]  # fmt: skip
    for change in m.changes:
        assert history_line(change.before) == history_line(change.after), change
    for row in m.known:
        for first, last, fixed in row.runs():
            assert history_line(first) == history_line(last)
            assert fixed is None or history_line(fixed) == history_line(first), (row.id, fixed)
