"""gitreins' own test suite, for the mutation audit's peer comparison.

The wheel that :mod:`ctxaudit.targets.gitreins` unpacks has no tests; the source
distribution on PyPI has ``tests/``. :func:`tests_root` returns a folder that holds
``tests/`` for a target tree:

- a local tree (``origin == "path"``) that has ``tests/``: that tree;
- otherwise the sdist of the tree's version, fetched from the package index
  (``PIP_INDEX_URL`` or https://pypi.org/simple), checked against the sha256 the
  index publishes, and unpacked into ``.cache/gitreins-sdist/<version>/`` (git
  ignores it; nothing of gitreins is committed).

Errors are :class:`~ctxaudit.targets.gitreins.TargetError` with a one-line message.
"""

from __future__ import annotations

import hashlib
import html.parser
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ctxaudit.targets.gitreins.tree import CACHE, GitreinsTree, TargetError

SDIST_CACHE = CACHE.parent / "gitreins-sdist"
DEFAULT_INDEX = "https://pypi.org/simple"


def tests_root(tree: GitreinsTree) -> Path:
    """A folder with gitreins' ``tests/`` for this tree's version."""
    if tree.origin == "path" and (tree.root / "tests").is_dir():
        return tree.root
    return download_sdist(tree.version)


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def _index_url() -> str:
    url = os.environ.get("PIP_INDEX_URL", "").strip() or DEFAULT_INDEX
    return url.rstrip("/") + "/gitreins/" + ("index.html" if url.startswith("file:") else "")


def _fetch(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 - the package index
            data: bytes = resp.read()
            return data
    except (urllib.error.URLError, OSError) as exc:
        raise TargetError(f"gitreins: cannot fetch {url}: {exc}") from None


def download_sdist(version: str) -> Path:
    """Fetch and unpack gitreins==version's sdist (once); return the unpacked root."""
    dest = SDIST_CACHE / version
    if (dest / "tests").is_dir():
        return dest
    index = _index_url()
    parser = _Links()
    parser.feed(_fetch(index).decode("utf-8", errors="replace"))
    name = re.compile(rf"^gitreins-{re.escape(version)}\.tar\.gz$")
    links = [
        urllib.parse.urljoin(index, h)
        for h in parser.hrefs
        if name.match(Path(urllib.parse.urlparse(h).path).name)
    ]
    if not links:
        raise TargetError(f"gitreins: the index {index} has no sdist for version {version}")
    url = links[0]
    data = _fetch(url)
    frag = urllib.parse.urlparse(url).fragment
    if frag.startswith("sha256="):
        got = hashlib.sha256(data).hexdigest()
        if got != frag.removeprefix("sha256="):
            raise TargetError(f"gitreins: the sdist of {version} does not match its sha256")
    SDIST_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=SDIST_CACHE) as tmp:
        archive = Path(tmp) / "sdist.tar.gz"
        archive.write_bytes(data)
        with tarfile.open(archive) as tf:
            tf.extractall(Path(tmp) / "x", filter="data")
        tops = [p for p in (Path(tmp) / "x").iterdir() if p.is_dir()]
        if len(tops) != 1 or not (tops[0] / "tests").is_dir():
            raise TargetError(f"gitreins: the sdist of {version} has no tests/ folder")
        if dest.exists():
            shutil.rmtree(dest)
        tops[0].rename(dest)
    return dest
