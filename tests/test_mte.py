"""``mutation.json`` in the mutation-testing-elements viewer (ctxaudit/mte.py): the page
inlines the pinned component and the report, the component is checked against its
integrity hash, and without it nothing is written and nothing fails."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from ctxaudit import mte

REPORT = {"schemaVersion": "2", "thresholds": {"high": 80, "low": 60}, "files": {
    "a.py": {"language": "python", "source": "x = '</script>'\n", "mutants": []}}}  # fmt: skip


def test_the_page_inlines_the_component_and_the_report(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / mte.BUNDLE).write_text("/* the component */")
    monkeypatch.setattr(mte, "PLACES", (tmp_path,))
    report = tmp_path / "mutation.json"
    report.write_text(json.dumps(REPORT))
    out = mte.write_html(report, "toy 1.0 mutants")
    assert out == tmp_path / "mutation.html"
    text = out.read_text()
    assert "<mutation-test-report-app" in text and "/* the component */" in text
    assert "<\\/script>" in text and "x = '</script>'" not in text  # the source cannot end it
    assert "<title>toy 1.0 mutants</title>" in text


def test_without_the_component_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(mte, "PLACES", (tmp_path / "nowhere",))
    report = tmp_path / "mutation.json"
    report.write_text(json.dumps(REPORT))
    assert mte.write_html(report, "t") is None
    assert not (tmp_path / "mutation.html").exists()


class _Response(io.BytesIO):
    def __enter__(self) -> _Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tarball(bundle: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in ((f"package/dist/{mte.BUNDLE}", bundle), ("package/LICENSE", b"L")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_tarball_that_is_not_the_pinned_one_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(mte.urllib.request, "urlopen", lambda *a, **k: _Response(_tarball(b"x")))
    with pytest.raises(mte.FetchError, match="is not the pinned one"):
        mte.fetch(tmp_path / "dest")
    assert not (tmp_path / "dest" / mte.BUNDLE).exists()


def test_the_pinned_tarball_is_unpacked_with_its_licence(tmp_path: Path, monkeypatch) -> None:
    import base64
    import hashlib

    data = _tarball(b"/* bundle */")
    pin = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    monkeypatch.setattr(mte, "INTEGRITY", pin)
    monkeypatch.setattr(mte.urllib.request, "urlopen", lambda *a, **k: _Response(data))
    got = mte.fetch(tmp_path / "dest")
    assert got.read_bytes() == b"/* bundle */"
    assert (tmp_path / "dest" / "LICENSE").read_bytes() == b"L"


def test_a_page_that_cannot_be_made_writes_nothing_and_fails_nothing(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    (tmp_path / mte.BUNDLE).write_text("/* the component */")
    monkeypatch.setattr(mte, "PLACES", (tmp_path,))
    report = tmp_path / "mutation.json"
    report.write_text("{not json")
    assert mte.write_html(report, "t") is None
    assert not (tmp_path / "mutation.html").exists()
    assert "mutation.html not written" in capsys.readouterr().err
