"""``audit --shard i/N`` and ``ctxaudit merge`` (issue #39): the split is the same on
every machine and balanced by the recorded times; the merged folder of the parts is one
unsharded run's, times aside; and a merge that cannot be whole says so, exit 2, with
nothing written.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import cli
from ctxaudit.paths import REPO_ROOT
from ctxaudit.pipeline.merge import MergeError, check, read_parts, write
from ctxaudit.pipeline.shards import MANIFEST, SCHEMA, Shard, parse_shard, recorded_seconds, split
from tests.test_concern_target import BUG, FIX
from tests.test_concern_target import installed as installed  # the fixture


def test_a_shard_is_i_of_n() -> None:
    assert parse_shard("2/4") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_the_split_takes_the_longest_first_to_the_least_loaded_part() -> None:
    seconds = {"a": 100.0, "b": 60.0, "c": 50.0, "d": 10.0}
    parts = split(["a", "b", "c", "d"], 2, seconds)
    # a to the first, b and c to the second (60, then 110), d to the first: 110 each
    assert parts == [["a", "d"], ["b", "c"]]
    assert split(["a", "b", "c", "d"], 2, seconds) == parts  # the same inputs, the same split
    # every label exactly once, whatever the number of parts
    for n in range(1, 7):
        got = split(["a", "b", "c", "d"], n, seconds)
        assert len(got) == n and sorted(x for part in got for x in part) == ["a", "b", "c", "d"]


def test_without_recorded_times_the_split_follows_the_plan() -> None:
    assert split(["x", "y", "z"], 2, {}) == [["x", "z"], ["y"]]
    # a version with no record counts as the mean of the recorded ones (z: 20 s)
    assert split(["x", "y", "z"], 2, {"x": 10.0, "y": 30.0}) == [["y"], ["x", "z"]]


def test_recorded_times_are_the_newest_records(tmp_path: Path) -> None:
    def record(name: str, started: str, targets: dict[str, Any]) -> None:
        (tmp_path / name).write_text(json.dumps({"started": started, "targets": targets}))

    record("old.json", "2026-11-01 00:00:00 UTC", {"t-1": {"properties_s": 5, "mutation_s": 50}})
    record("new.json", "2026-12-01 00:00:00 UTC", {"t-1": {"properties_s": 7, "mutation_s": None}})
    record("other.json", "2026-11-15 00:00:00 UTC", {"t-2": {"properties_s": 3, "mutation_s": 9}})
    (tmp_path / "broken.json").write_text("{")
    assert recorded_seconds(False, tmp_path) == {"t-1": 7.0, "t-2": 3.0}
    assert recorded_seconds(True, tmp_path) == {"t-1": 7.0, "t-2": 12.0}


def _part(folder: Path, index: int, count: int, **changes: Any) -> Path:
    """A finished part's folder with a manifest (no report) as ``audit --shard`` writes."""
    folder.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "schema": SCHEMA, "shard": [index, count], "took": [], "finished": True, "exit": 0,
        "reports": [], "gates": {}, "mutation_shares": {},
        "identity": {"suite": "abc", "plan": [], "profile": "ci", "seed": 0},
    }  # fmt: skip
    for key, value in changes.items():
        if key in doc["identity"]:
            doc["identity"][key] = value
        else:
            doc[key] = value
    (folder / MANIFEST).write_text(json.dumps(doc))
    return folder


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda t: [_part(t / "a", 1, 2)], "shard(s) 2/2 missing"),
        (lambda t: [_part(t / "a", 1, 2), _part(t / "b", 2, 2, finished=False)], "did not finish"),
        (lambda t: [_part(t / "a", 1, 2), _part(t / "b", 1, 2)], "shard 1/2 given twice"),
        (lambda t: [_part(t / "a", 1, 2), _part(t / "b", 2, 2, seed=1)], "their seed differs"),
        (
            lambda t: [_part(t / "a", 1, 2), _part(t / "b", 2, 2, suite="other")],
            "their suite differs",
        ),
        (lambda t: [_part(t / "a", 1, 2), _part(t / "b", 2, 3)], "a shard of 3"),
        (lambda t: [_part(t / "a", 1, 1, schema=99)], "another ctxaudit"),
        (lambda t: [t], "not an `audit --shard` output"),
        (lambda t: [_part(t / "a", 1, 1, took="x")], "'took' is missing or not a list"),
        (lambda t: [_part(t / "a", 1, 1, reports=[{"target": 1}])], "a report:"),
        (lambda t: [_part(t / "a", 3, 1)], "not [i, n]"),
    ],
    ids=[
        "missing",
        "unfinished",
        "twice",
        "seed",
        "suite",
        "count",
        "schema",
        "no-manifest",
        "bad-field",
        "bad-report",
        "bad-shard",
    ],
)
def test_a_merge_that_cannot_be_whole_is_refused(make: Any, said: str, tmp_path: Path) -> None:
    dirs = make(tmp_path / "parts")
    with pytest.raises(MergeError, match=re.escape(said)):
        check(read_parts(dirs))
    out = tmp_path / "merged"
    assert cli.main(["merge", *map(str, dirs), "--out", str(out)]) == 2
    assert not out.exists()  # nothing written: no verdict that looks whole


def test_two_parts_that_wrote_one_file_differently_stop_the_merge(tmp_path: Path) -> None:
    a, b = _part(tmp_path / "a", 1, 2), _part(tmp_path / "b", 2, 2)
    for folder, text in ((a, "one"), (b, "two")):
        (folder / "t-fixes").mkdir()
        (folder / "t-fixes" / "X.patch").write_text(text)
    with pytest.raises(MergeError, match="wrote it differently"):
        write(check(read_parts([a, b])), tmp_path / "out")
    assert not (tmp_path / "out").exists()


#: a report's figures that are times (they differ from run to run)
TIMES = re.compile(r'"(elapsed_s|duration)": [0-9.e-]+|\b[0-9]+(\.[0-9]+)? s\b')
#: a mutation report's words on how its run went (its times, its shards, the verdicts its
#: cache gave): the parts reuse the one run's verdicts
RUN_NOTES = re.compile(
    r"\(baseline [^)]*\)| [0-9]+ verdicts were reused from the verdict "
    r"cache \(`[^`]*`\), [0-9]+ mutants ran\."
)
#: what mutation.json says of the run rather than of the mutants: its times, the folder
#: the tree was copied from (a merge writes a temporary one as <tmp>), how many shards,
#: the verdicts its cache gave
RUN_ONLY = {"duration", "seconds", "performance", "projectRoot", "shards", "cache"}


def _drop(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v) for k, v in value.items() if k not in RUN_ONLY}
    if isinstance(value, list):
        return [_drop(v) for v in value]
    return value


def _without_times(folder: Path) -> dict[str, str]:
    """Every report file of ``folder`` as text, times aside (mutation.html renders
    mutation.json, which is compared)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or "timing" in p.parts or p.name in (MANIFEST, "mutation.html"):
            continue
        text = p.read_text(encoding="utf-8")
        if p.name == "mutation.json":
            text = json.dumps(_drop(json.loads(text)), sort_keys=True)
        text = RUN_NOTES.sub("", text)
        out[p.relative_to(folder).as_posix()] = TIMES.sub("T", text)
    return out


def test_three_shards_merged_are_one_run(tmp_path: Path) -> None:
    """The ledger and gitreins 0.17.1 audited once, and as three parts in three
    processes (one of them empty), then merged: the same files, the same verdicts, the
    same JUnit, the same exit code, times aside. (Smoke, no mutation, no fixes: each
    version runs whole in one part, so what is compared is the split and the merge.)"""
    argv = [sys.executable, "-m", "ctxaudit", "audit", "--target", "ledger", "--target",
            "gitreins==0.17.1", "--profile", "smoke", "--seed", "0", "--no-mutation",
            "--no-fixes", "--no-cache", "--jobs", "1"]  # fmt: skip

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv, *more], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=False, timeout=600)  # fmt: skip

    one = run("--out", str(tmp_path / "one"), "--junit-xml", str(tmp_path / "one.xml"))
    parts = [run("--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}")) for i in (1, 2, 3)]
    took = [re.search(r"shard \d/3 takes (\d) of 2", p.stdout) for p in parts]
    assert sorted(int(m[1]) for m in took if m) == [0, 1, 1], [p.stdout for p in parts]
    merged = tmp_path / "merged"
    code = cli.main(["merge", *(str(tmp_path / f"s{i}") for i in (3, 1, 2)), "--out",
                     str(merged), "--junit-xml", str(tmp_path / "merged.xml")])  # fmt: skip
    assert code == one.returncode == max(p.returncode for p in parts) == 1, one.stdout[-2000:]
    assert _without_times(merged) == _without_times(tmp_path / "one")
    junit = [TIMES.sub("T", (tmp_path / f).read_text()) for f in ("one.xml", "merged.xml")]
    assert junit[0] == junit[1]


def test_every_part_runs_a_share_of_each_versions_mutants_and_the_merge_gates_them(
    installed: Path,  # noqa: F811  (the fixture)
    tmp_path: Path,
) -> None:
    """examples/toymeter (one version, a mutation scope) audited with mutation once, and
    as two parts in two processes: one part audits its properties, each runs half of its
    mutants (the other checks its known findings itself), and the merge judges the gate
    over both halves: the same reports and exit code as the one run, times aside."""
    meter = installed / "meter.py"  # fixed: the gate needs a tree its suite passes on
    meter.write_text(meter.read_text().replace(BUG, FIX))
    argv = [sys.executable, "-m", "ctxaudit", "audit", "--target", "toymeter", "--profile",
            "smoke", "--seed", "0", "--mutation", "--no-fixes", "--jobs", "1"]  # fmt: skip
    # with the caches: the one run stores its mutants' verdicts, and the parts reuse them
    # (what is compared is the split and the merge; that a share judges its mutants as
    # the whole run would is the mutation runner's own)

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv, *more], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=False, timeout=600)  # fmt: skip

    one = run("--out", str(tmp_path / "one"))
    parts = [run("--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")) for i in (1, 2)]
    for p in parts:
        assert "mutation share" in p.stdout and p.returncode in (0, 1), p.stdout + p.stderr
    merged = tmp_path / "merged"
    merge = [sys.executable, "-m", "ctxaudit", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"),
             "--out", str(merged)]  # fmt: skip
    done = subprocess.run(merge, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == one.returncode, one.stdout[-3000:] + done.stdout + done.stderr
    gate = re.search(r"mutation gate (passes|FAILS)", one.stdout)
    assert gate and gate[0] in done.stdout, one.stdout[-2000:] + done.stdout
    assert not list(merged.rglob("mutation-shard-*")), "the shares' files are merged away"
    assert _without_times(merged) == _without_times(tmp_path / "one")
