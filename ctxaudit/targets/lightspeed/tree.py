"""lightspeed-stack source trees: resolve a spec against a git repository.

The repository is given by the caller (``--lightspeed-repo=PATH``) or by
``CTXAUDIT_LIGHTSPEED_REPO``: a git clone, a git bundle or a git working tree.
Its branches, remote branches and tags are fetched into one bare mirror,
``.cache/lightspeed/repo.git``, and fetched again whenever the source's refs
change. A *spec* names a tree:

- ``""`` or ``"lightspeed-stack"``: the head of branch ``main``;
- ``lightspeed-stack==0.6.2``: a tag;
- ``lightspeed-stack@REV``: a commit, short sha, tag or branch (``release/0.7``;
  a local branch wins over a remote one of the same name, as in git);
- ``lightspeed-stack>=0.6.0,<0.7`` (``==``, ``!=``, ``>``, ``<``, ...): every tag
  in the range, ordered by version, pre-releases included (:func:`resolve_many`);
- a path to a working tree (has ``src/app/endpoints/query.py``), used in place
  (``./lightspeed-stack`` for a folder of that name).

A tag or rev is extracted once (``git archive``) into
``.cache/lightspeed/trees/<sha>/``. Trees without conversation compaction
(before LCORE-1572) are refused; a range leaves such tags out.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ctxaudit import paths
from ctxaudit.targets.uvenv import file_lock as file_lock  # re-exported

NAME = "lightspeed-stack"
REPO_ENV = "CTXAUDIT_LIGHTSPEED_REPO"
REPO_OPTION = "--lightspeed-repo"

QUERY = "src/app/endpoints/query.py"
COMPACTION = "src/utils/conversation_compaction.py"
_NO_COMPACTION = f"no {COMPACTION}; compaction came with LCORE-1572 on 2026-06-09"
_FETCH_REFSPECS = (
    "+refs/heads/*:refs/heads/*",
    "+refs/remotes/*:refs/remotes/*",
    "+refs/tags/*:refs/tags/*",
)

Origin = Literal["tag", "rev", "path"]


class TargetError(Exception):
    """A spec or repository that names no usable lightspeed-stack tree. One line."""


@dataclass(frozen=True)
class LightspeedTree:
    spec: str
    commit: str | None  # full sha; None for a path that git does not track
    root: Path  # the folder with src/ and pyproject.toml
    version: str
    tag: str | None
    origin: Origin
    commit_date: str | None  # committer date, ISO 8601
    dirty: bool = False  # a path with uncommitted changes

    @property
    def label(self) -> str:
        if self.origin == "path":
            if self.commit is None:
                return f"{NAME}-{self.version}+local"
            return f"{NAME}-{self.version}+{self.commit[:7]}{'-dirty' if self.dirty else ''}"
        if self.tag is not None:
            return f"{NAME}-{self.tag}"
        return f"{NAME}-g{(self.commit or '')[:12]}"


def cache_root() -> Path:
    """``.cache/lightspeed`` (under ``$CTXAUDIT_CACHE`` when set)."""
    return paths.target_cache() / "lightspeed"


def repo_from(option: str | None) -> Path | None:
    """The repository: the option if given, else ``$CTXAUDIT_LIGHTSPEED_REPO``."""
    value = (option or "").strip() or os.environ.get(REPO_ENV, "").strip()
    return Path(value).expanduser() if value else None


def resolve(spec: str | None, repo: Path | None) -> LightspeedTree:
    """One tree on disk for a spec that is not a range."""
    spec = (spec or "").strip()
    kind, value = _parse(spec)
    if kind == "path":
        return from_path(Path(value), spec=spec)
    if kind == "range":
        raise TargetError(f"{NAME}: {spec!r} is a range; give one version (==TAG) or @REV")
    mirror = ensure_mirror(repo)
    if kind == "tag":
        found = _find_tag(mirror, value)
        if found is None:
            newest = [name for _, name, _ in _version_tags(mirror)[-3:]]
            hint = f" (newest: {', '.join(reversed(newest))})" if newest else " (it has no tags)"
            raise TargetError(f"{NAME}: no tag {value!r} in {str(repo)!r}{hint}")
        name, tagged = found
        return _from_commit(mirror, spec, tagged, tag=name, origin="tag", what=f"tag {name}")
    sha = _rev_commit(mirror, value)
    if sha is None:
        raise TargetError(f"{NAME}: no commit, branch or tag {value!r} in {str(repo)!r}")
    return _from_commit(
        mirror,
        spec or NAME,
        sha,
        tag=_tag_at(mirror, sha),
        origin="rev",
        what=f"{value} ({sha[:12]})",
    )


def resolve_many(
    spec: str | None, repo: Path | None, *, log: Callable[[str], None] | None = None
) -> list[LightspeedTree]:
    """The trees a spec names: a range gives every matching tag that has
    compaction, by version (``log`` hears which were left out); any other
    spec gives one tree."""
    spec = (spec or "").strip()
    kind, value = _parse(spec)
    if kind != "range":
        return [resolve(spec, repo)]
    wanted = SpecifierSet(value, prereleases=True)
    mirror = ensure_mirror(repo)
    matched = [t for t in _version_tags(mirror) if wanted.contains(t[0], prereleases=True)]
    if not matched:
        raise TargetError(f"{NAME}: no tag in {str(repo)!r} matches {value!r}")
    trees: list[LightspeedTree] = []
    left_out: list[str] = []
    for _, name, sha in matched:
        if not _git_exists(mirror, sha, COMPACTION):
            left_out.append(name)
            continue
        trees.append(
            _from_commit(mirror, f"{NAME}=={name}", sha, tag=name, origin="tag", what=f"tag {name}")
        )
    if not trees:
        raise TargetError(
            f"{NAME}: no tag matching {value!r} has conversation compaction ({_NO_COMPACTION})"
        )
    if left_out and log is not None:
        log(f"{NAME}: left out {', '.join(left_out)} (no conversation compaction)")
    return trees


def from_path(path: Path, *, spec: str | None = None) -> LightspeedTree:
    """A working tree used in place; its commit is read when git tracks it."""
    given = str(path)
    path = path.expanduser()
    if not path.exists():
        raise TargetError(f"{NAME}: no such path {given!r}")
    root = path.resolve()

    def read(rel: str) -> str | None:
        try:
            return (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    version = _check(repr(given), lambda rel: (root / rel).is_file(), read) or "unknown"
    commit = date = None
    dirty = False
    if _git("-C", str(root), "ls-files", "--error-unmatch", "--", QUERY).returncode == 0:
        head = _git("-C", str(root), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        if head.returncode == 0:
            commit = head.stdout.strip()
            date = _git("-C", str(root), "show", "-s", "--format=%cI", commit).stdout.strip()
        status = _git("-C", str(root), "status", "--porcelain", "--", ".")
        dirty = bool(status.stdout.strip())
    return LightspeedTree(
        spec=spec or given,
        commit=commit,
        root=root,
        version=version,
        tag=None,
        origin="path",
        commit_date=date or None,
        dirty=dirty,
    )


def ensure_mirror(repo: Path | None) -> Path:
    """The bare mirror of the repository, fetched again if its refs changed."""
    if repo is None:
        raise TargetError(
            f"{NAME}: no repository given; pass {REPO_OPTION}=PATH or set {REPO_ENV} "
            "(a git clone, bundle or working tree of lightspeed-stack)"
        )
    if not repo.expanduser().exists():
        raise TargetError(f"{NAME}: the repository {str(repo)!r} does not exist")
    source = repo.expanduser().resolve()
    listing = _git("ls-remote", str(source))
    if listing.returncode != 0:
        why = _last_line(listing.stderr)
        raise TargetError(f"{NAME}: {str(repo)!r} is not a git repository or bundle ({why})")
    fingerprint = hashlib.sha256(f"{source}\n{listing.stdout}".encode()).hexdigest()
    root = cache_root()
    mirror = root / "repo.git"
    stamp = mirror / "ctxaudit-source"
    if _read(stamp) == fingerprint:
        return mirror
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / "repo.lock"):
        if _read(stamp) == fingerprint:
            return mirror
        if (mirror / "HEAD").is_file():
            _fetch(mirror, source, repo)
        else:
            tmp = Path(tempfile.mkdtemp(prefix=".repo-", dir=root))
            try:
                init = _git("init", "--bare", "--quiet", "--initial-branch=main", str(tmp))
                if init.returncode != 0:
                    raise TargetError(f"{NAME}: git init failed ({_last_line(init.stderr)})")
                _fetch(tmp, source, repo)
                shutil.rmtree(mirror, ignore_errors=True)  # a leftover that is no repository
                tmp.rename(mirror)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        stamp.write_text(fingerprint)
    return mirror


def checkout(mirror: Path, commit: str) -> Path:
    """``.cache/lightspeed/trees/<commit>/``: the commit's files, extracted once."""
    trees = cache_root() / "trees"
    dest = trees / commit
    if dest.is_dir():
        return dest
    trees.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{commit[:12]}-", dir=trees))
    try:
        with tempfile.TemporaryFile() as archive_err:
            archive = subprocess.Popen(
                ["git", "-C", str(mirror), "archive", "--format=tar", commit],
                stdout=subprocess.PIPE,
                stderr=archive_err,
                env=_git_env(),
            )
            assert archive.stdout is not None
            tar = subprocess.Popen(
                ["tar", "-x", "--no-same-owner", "-f", "-", "-C", str(tmp)],
                stdin=archive.stdout,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            archive.stdout.close()  # tar holds the pipe; git sees SIGPIPE if tar dies
            _, tar_err = tar.communicate()
            if archive.wait() != 0 or tar.returncode != 0:
                archive_err.seek(0)
                why = _last_line(archive_err.read().decode(errors="replace") or tar_err)
                raise TargetError(f"{NAME}: cannot extract {commit[:12]} ({why})")
        try:
            tmp.rename(dest)
        except OSError:
            if not dest.is_dir():  # another process may have won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def declared_version(data: dict[str, Any], read: Callable[[str], str | None]) -> str | None:
    """``[project].version`` of a pyproject, or the file a pdm dynamic version names."""
    version = data.get("project", {}).get("version")
    if isinstance(version, str):
        return version
    pdm = data.get("tool", {}).get("pdm", {}).get("version", {})
    if isinstance(pdm, dict) and pdm.get("source") == "file" and isinstance(pdm.get("path"), str):
        text = read(pdm["path"])
        m = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", text or "")
        if m:
            return m.group(1)
    return None


# ---------------------------------------------------------------- internals


def _parse(spec: str) -> tuple[Literal["rev", "tag", "range", "path"], str]:
    if spec in ("", NAME):
        return "rev", "main"
    rest = spec[len(NAME) :].strip() if spec.startswith(NAME) else ""
    if rest.startswith("@"):
        rev = rest[1:].strip()
        if rev and not rev.startswith("-") and not any(c.isspace() for c in rev):
            return "rev", rev
    elif rest[:1] in ("=", "!", "<", ">", "~"):
        if rest.startswith("==") and not rest.startswith("===") and not set(rest) & {",", "*"}:
            tag = rest[2:].strip()
            if tag and not tag.startswith("-") and not any(c.isspace() for c in tag):
                return "tag", tag
        else:
            value = re.sub(r"\s+", "", rest)
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                pass
            else:
                return "range", value
    elif Path(spec).expanduser().exists():
        return "path", spec
    raise TargetError(
        f"{NAME}: {spec!r} is not a spec ({NAME}, {NAME}==TAG, {NAME}@REV, "
        f"a range like {NAME}>=0.6.0,<0.7) nor an existing path"
    )


def _from_commit(
    mirror: Path, spec: str, sha: str, *, tag: str | None, origin: Origin, what: str
) -> LightspeedTree:
    version = _check(
        what,
        lambda rel: _git_exists(mirror, sha, rel),
        lambda rel: _git_read(mirror, sha, rel),
    )
    root = checkout(mirror, sha)
    date = _git("-C", str(mirror), "show", "-s", "--format=%cI", sha).stdout.strip()
    return LightspeedTree(
        spec=spec,
        commit=sha,
        root=root,
        version=version or tag or "unknown",
        tag=tag,
        origin=origin,
        commit_date=date or None,
    )


def _check(
    what: str, exists: Callable[[str], bool], read: Callable[[str], str | None]
) -> str | None:
    """Refuse a tree that is not lightspeed-stack or has no compaction; return
    its declared version."""
    if not exists(QUERY):
        raise TargetError(f"{NAME}: {what} is not a lightspeed-stack tree (no {QUERY})")
    text = read("pyproject.toml")
    try:
        data = tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        data = {}
    name = data.get("project", {}).get("name")
    if name != NAME:
        why = "no readable pyproject.toml" if not data else f"its pyproject.toml names {name!r}"
        raise TargetError(f"{NAME}: {what} is not a lightspeed-stack tree ({why})")
    if not exists(COMPACTION):
        raise TargetError(f"{NAME}: {what} has no conversation compaction ({_NO_COMPACTION})")
    return declared_version(data, read)


def _fetch(mirror: Path, source: Path, repo: Path) -> None:
    proc = _git("-C", str(mirror), "fetch", "--quiet", "--prune", str(source), *_FETCH_REFSPECS)
    if proc.returncode != 0:
        raise TargetError(f"{NAME}: cannot fetch from {str(repo)!r} ({_last_line(proc.stderr)})")


def _version_tags(mirror: Path) -> list[tuple[Version, str, str]]:
    """(version, tag, commit) of every tag that is a version, oldest first."""
    proc = _git(
        "-C",
        str(mirror),
        "for-each-ref",
        "--format=%(refname:strip=2) %(objecttype) %(objectname) %(*objecttype) %(*objectname)",
        "refs/tags",
    )
    tags: list[tuple[Version, str, str]] = []
    for line in proc.stdout.splitlines():
        name, kind, sha, *peeled = line.split(" ")
        if peeled and peeled[0]:
            kind, sha = peeled[0], peeled[1]
        if kind != "commit":
            continue
        try:
            tags.append((Version(name), name, sha))
        except InvalidVersion:
            continue
    return sorted(tags)


def _find_tag(mirror: Path, tag: str) -> tuple[str, str] | None:
    proc = _git(
        "-C", str(mirror), "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"
    )
    if proc.returncode == 0:
        return tag, proc.stdout.strip()
    try:
        wanted = Version(tag)
    except InvalidVersion:
        return None
    same = [(name, sha) for version, name, sha in _version_tags(mirror) if version == wanted]
    return same[0] if same else None


def _rev_commit(mirror: Path, rev: str) -> str | None:
    proc = _git("-C", str(mirror), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if proc.returncode == 0:
        return proc.stdout.strip()
    refs = _git("-C", str(mirror), "for-each-ref", "--format=%(refname)", "refs/remotes")
    remote = [r for r in refs.stdout.split() if r.split("/", 3)[3:] == [rev]]
    remote.sort(key=lambda r: (r != f"refs/remotes/origin/{rev}", r))
    if remote:
        proc = _git(
            "-C", str(mirror), "rev-parse", "--verify", "--quiet", f"{remote[0]}^{{commit}}"
        )
        if proc.returncode == 0:
            return proc.stdout.strip()
    return None


def _tag_at(mirror: Path, sha: str) -> str | None:
    """The highest version tag on a commit."""
    on = [name for _, name, commit in _version_tags(mirror) if commit == sha]
    return on[-1] if on else None


def _git_exists(mirror: Path, sha: str, rel: str) -> bool:
    return _git("-C", str(mirror), "cat-file", "-e", f"{sha}:{rel}").returncode == 0


def _git_read(mirror: Path, sha: str, rel: str) -> str | None:
    proc = _git("-C", str(mirror), "cat-file", "blob", f"{sha}:{rel}")
    return proc.stdout if proc.returncode == 0 else None


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            errors="replace",
            env=_git_env(),
            check=False,
        )
    except FileNotFoundError:
        raise TargetError(f"{NAME}: git is not installed (needed to read the repository)") from None


def _git_env() -> dict[str, str]:
    """The environment without GIT_* (a hook's GIT_DIR would redirect every call)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1].removeprefix("fatal: ").removeprefix("error: ") if lines else "no message"
