"""``mutation.json`` as an HTML page, with the mutation-testing-elements web component
(Stryker's report viewer, npm package ``mutation-testing-elements``, Apache-2.0).

The component is third-party code: it is never committed, and never fetched while an
audit runs. It is fetched once, pinned by version and checked against the registry's
integrity hash, when ctxaudit is set up (``bin/ctxaudit`` into ``.cache/vendor/``) or
built (setup.py into the wheel's ``ctxaudit/_vendor/``), with its licence beside it.
A page inlines it, so it opens offline from the file system. Without it the report
says how to get it, and nothing else changes.

    python -m ctxaudit.mte fetch [DEST]   # the component and its licence (default: .cache/vendor/)
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import sys
import tarfile
import urllib.request
from pathlib import Path

from ctxaudit import atomic
from ctxaudit.paths import HERE, REPO_ROOT

VERSION = "3.9.0"
TARBALL = (
    "https://registry.npmjs.org/mutation-testing-elements/-/"
    f"mutation-testing-elements-{VERSION}.tgz"
)
#: the npm registry's integrity hash of that tarball (``dist.integrity``)
INTEGRITY = (
    "sha512-3G4GhBO8Wc/ZrqOJ5uT8AbM1h/ew9kfX0MIlpy59gWu/"
    "amMZyKH3TreKAOMwwXNibhZMOL7A3n5nFvhYWLdtYQ=="
)
BUNDLE = "mutation-test-elements.js"
MEMBERS = {f"package/dist/{BUNDLE}": BUNDLE, "package/LICENSE": "LICENSE"}
#: where a checkout and an installed build keep it
PLACES = (HERE / "_vendor", REPO_ROOT / ".cache" / "vendor" / f"mte-{VERSION}")


class FetchError(Exception):
    """The component could not be fetched or did not match its pin. One line."""


def fetch(dest: Path) -> Path:
    """Download the pinned tarball, check its integrity hash and write the bundle and
    its licence into ``dest``; returns the bundle's path."""
    try:
        with urllib.request.urlopen(TARBALL, timeout=60) as response:  # noqa: S310
            data = response.read()
    except OSError as exc:
        raise FetchError(f"could not download {TARBALL}: {exc}") from None
    algorithm, _, expected = INTEGRITY.partition("-")
    got = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
    if got != expected:
        raise FetchError(f"{TARBALL}: integrity {algorithm}-{got} is not the pinned one")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member, name in MEMBERS.items():
            extracted = tar.extractfile(member)
            if extracted is None:
                raise FetchError(f"{TARBALL}: no {member}")
            atomic.write_bytes(dest / name, extracted.read())
    return dest / BUNDLE


def bundle() -> Path | None:
    """The component, where set-up or the build put it (None: not fetched)."""
    for place in PLACES:
        if (place / BUNDLE).is_file():
            return place / BUNDLE
    return None


def page(report: dict[str, object], title: str, script: str) -> str:
    """A self-contained HTML page showing ``report`` (mutation-testing-report-schema)."""
    data = json.dumps(report).replace("</", "<\\/")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>\n"
        '<mutation-test-report-app title-postfix="ctxaudit"></mutation-test-report-app>\n'
        f"<script>{script}</script>\n"
        "<script>document.querySelector('mutation-test-report-app').report = "
        f"{data};</script>\n</body></html>\n"
    )


def write_html(report_json: Path, title: str) -> Path | None:
    """``mutation.html`` beside ``report_json``; None when the component is not there."""
    found = bundle()
    if found is None:
        return None
    out = report_json.with_name("mutation.html")
    try:
        report = json.loads(report_json.read_text(encoding="utf-8"))
        atomic.write_text(out, page(report, title, found.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # a view of the report, never its verdict
        print(f"ctxaudit: {out} not written: {exc}", file=sys.stderr)
        return None
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2 or args[0] != "fetch":
        print("usage: python -m ctxaudit.mte fetch [DEST]", file=sys.stderr)
        return 2
    try:
        print(fetch(Path(args[1]) if len(args) == 2 else PLACES[1]))
    except FetchError as exc:
        print(f"ctxaudit: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
