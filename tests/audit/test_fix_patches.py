"""The fix audit's patches (ctxaudit/fix_patches.py): each text written once per target,
beside the versions' folders, and linked from each version's report; patches no report
refers to pruned; the step cache's copies of them staged and settled."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from ctxaudit import fix_patches, result_cache
from ctxaudit.fixaudit import FixAuditOptions, fix_audit
from tests.audit.test_fixes import FIX_X, fake_runner, report, tree


def test_the_same_patch_on_two_versions_is_one_file(tmp_path: Path) -> None:
    root = tree(tmp_path)
    out = tmp_path / "reports"
    links = []
    for version in ("0.3", "0.4"):
        r = report(["X"])
        r.version = version
        (out / f"toy-{version}").mkdir(parents=True)
        options = FixAuditOptions(
            ["suites"], {"P": "p"}, out / f"toy-{version}", fixes={"X": FIX_X}
        )
        fix_audit(r, root, fake_runner([]), options)
        (row,) = r.fixes
        links.append(row["patch"])
        assert (out / f"toy-{version}" / row["patch"]).read_text().startswith("--- a/engine/a.py")
    assert links[0] == links[1]
    assert [p.name for p in (out / "toy-fixes").iterdir()] == [Path(links[0]).name]
    assert not list(out.glob("toy-0.*/fixes"))  # no version keeps a copy of its own


def test_a_version_s_old_patches_are_removed_when_it_is_audited_again(tmp_path: Path) -> None:
    version = tmp_path / "reports" / "toy-0.3"
    (version / "fixes").mkdir(parents=True)
    (version / "fixes" / "X.patch").write_text("old")
    r = report(["X"])
    options = FixAuditOptions(["suites"], {"P": "p"}, version, fixes={"X": FIX_X})
    fix_audit(r, tree(tmp_path), fake_runner([]), options)
    assert not (version / "fixes").exists()


def test_write_names_a_patch_by_its_text(tmp_path: Path) -> None:
    a = fix_patches.write(tmp_path, "toy", "X", "--- a\n+++ b\n")
    again = fix_patches.write(tmp_path, "toy", "X", "--- a\n+++ b\n")
    other = fix_patches.write(tmp_path, "toy", "X", "--- a\n+++ c\n")
    assert a == again != other
    assert a.startswith("../toy-fixes/X-") and len(Path(a).stem) == len("X-") + 12
    assert sorted(p.name for p in (tmp_path / "toy-fixes").iterdir()) == sorted(
        [Path(a).name, Path(other).name]
    )


def _findings(folder: Path, target: str, links: list[str], combined: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "target": target,
        "fixes": [{"id": f"F{i}", "patch": link} for i, link in enumerate(links)],
        "fixed": {"combined_patch": combined},
    }
    (folder / "findings.json").write_text(json.dumps(doc))


def test_prune_removes_only_the_patches_no_report_refers_to(tmp_path: Path) -> None:
    kept = fix_patches.write(tmp_path, "toy", "X", "kept\n")
    combined = fix_patches.write(tmp_path, "toy", "combined", "both\n")
    stale = fix_patches.write(tmp_path, "toy", "X", "stale\n")
    _findings(tmp_path / "toy-1.0", "toy", [kept], combined)
    _findings(tmp_path / "toy-2.0", "toy", [kept])
    (tmp_path / "toy-3.0").mkdir()  # no report: nothing of it is read
    removed = fix_patches.prune(tmp_path)
    assert [p.name for p in removed] == [Path(stale).name]
    assert sorted(p.name for p in (tmp_path / "toy-fixes").iterdir()) == sorted(
        [Path(kept).name, Path(combined).name]
    )
    # a report that cannot be read may refer to any patch: nothing is removed
    fix_patches.write(tmp_path, "toy", "X", "stale\n")
    (tmp_path / "toy-2.0" / "findings.json").write_text("{")
    assert fix_patches.prune(tmp_path) == []
    # no report refers to any: the folder goes too
    for name in ("toy-1.0", "toy-2.0"):
        _findings(tmp_path / name, "toy", [])
    fix_patches.prune(tmp_path)
    assert not (tmp_path / "toy-fixes").exists()


def test_the_step_cache_keeps_a_version_s_shared_patches(tmp_path: Path) -> None:
    """Stored while staged in the version's folder, restored into another report folder
    and settled there: the report's links lead to the patches."""
    first = tmp_path / "first"
    link = fix_patches.write(first, "toy", "X", "the fix\n")
    combined = fix_patches.write(first, "toy", "combined", "all fixes\n")
    r = SimpleNamespace(fixes=[{"id": "X", "patch": link}], fixed={"combined_patch": combined})
    version = first / "toy-1.0"
    version.mkdir()
    with fix_patches.staged(r, version):
        files = result_cache.collect(version, result_cache.PROPERTY_FILES)
    assert sorted(files) == sorted(f"fixes/{Path(x).name}" for x in (link, combined))
    assert not (version / "fixes").exists()  # the copies are gone again
    again = tmp_path / "second" / "toy-1.0"
    again.mkdir(parents=True)
    result_cache.restore(again, files, clear=result_cache.PROPERTY_FILES)
    fix_patches.settle(r, again)
    assert (again / link).read_text() == "the fix\n"
    assert (again / combined).read_text() == "all fixes\n"
    assert not (again / "fixes").exists()


@pytest.mark.fault("staging-left")
def test_staging_that_fails_midway_leaves_no_fixes_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that fails half-written (a full disk) raises for the caller to say, and
    leaves nothing in ``fixes/``: neither the copies made nor the half-written one."""
    link = fix_patches.write(tmp_path, "toy", "X", "the fix\n")
    combined = fix_patches.write(tmp_path, "toy", "combined", "all fixes\n")
    r = SimpleNamespace(fixes=[{"id": "X", "patch": link}], fixed={"combined_patch": combined})
    version = tmp_path / "toy-1.0"
    version.mkdir()
    copy = shutil.copyfile

    def full_disk(src: Path, dst: Path) -> Path:
        if Path(dst).name == Path(combined).name:  # the second copy: half, then full
            Path(dst).write_text("all f")
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return Path(copy(src, dst))

    monkeypatch.setattr(fix_patches.shutil, "copyfile", full_disk)
    with pytest.raises(OSError), fix_patches.staged(r, version):
        pass
    assert not (version / "fixes").exists()
