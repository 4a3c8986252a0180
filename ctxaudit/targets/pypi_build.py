"""Building the environments of a library released on PyPI (:mod:`ctxaudit.targets.pypi`):
a release's (its lock and ctxaudit's test pins) or its peer suite's (that lock, or its
requirements resolved at build time), each built in a temporary folder beside its place,
stamped, then moved into place; and the peer lock a maintainer commits."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ctxaudit import procs
from ctxaudit.targets import uvenv

if TYPE_CHECKING:
    from ctxaudit.targets.pypi import Library

#: the file a built environment holds, saying what it was built from
STAMP = "ctxaudit-env.json"


@dataclass(frozen=True)
class Env:
    root: Path  # .cache/<name>/envs/<key>
    python: Path
    key: str
    lock: Path  # the lock it was installed from


@dataclass(frozen=True)
class PeerLock:
    """What a peer environment is installed from: a committed lock, or (None) the
    requirements resolved when it is built."""

    lock: Path | None
    requirements: list[str]


#: a pinned line of a lock (``name==version``, its marker if any), at the line's start
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(;[^\\]*)?")


def release_constraints(release: Path, requirements: list[str], out: Path) -> list[str]:
    """Write to ``out`` the constraints a peer environment is resolved under: every pin
    of the release's lock, so that the packages both environments hold are the same,
    except where a requirement of the peer suite (its test group) names the package
    with a range that pin is outside: there the harness's own test requirements decide
    (langchain 1.2.0's tests ask for pytest<9, openai-agents 0.7.0's for
    cryptography<46). Returns those packages, each as its requirement, to be said."""
    wanted: dict[str, Requirement] = {}
    for r in requirements:
        try:
            req = Requirement(r)
        except InvalidRequirement:
            continue
        if req.specifier:
            wanted.setdefault(canonicalize_name(req.name), req)
    kept: list[str] = []
    relaxed: list[str] = []
    for line in release.read_text(encoding="utf-8").splitlines():
        m = _PINNED.match(line)
        if m is None:
            continue
        asked = wanted.get(canonicalize_name(m.group(1)))
        if asked is not None and not asked.specifier.contains(m.group(2), prereleases=True):
            relaxed.append(f"{asked.name}{asked.specifier} (the release's lock: {m.group(2)})")
            continue
        kept.append(
            f"{m.group(1)}=={m.group(2)}" + (f" {m.group(3).strip()}" if m.group(3) else "")
        )
    out.write_text("".join(f"{c}\n" for c in kept), encoding="utf-8")
    return relaxed


def reuse(dest: Path, key: str) -> Env | None:
    """The environment built in ``dest`` under ``key``; None while it is not there (no
    readable stamp, or no interpreter)."""
    try:
        stamp = json.loads((dest / STAMP).read_text(encoding="utf-8"))
        lock = Path(stamp["lock"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    python = dest / "venv" / "bin" / "python"
    return Env(dest, python, key, lock) if python.exists() else None


def build(
    lib: Library,
    version: str,
    dest: Path,
    key: str,
    log: Callable[[str], None],
    peer: PeerLock | None = None,
) -> Env:
    """Build an environment in ``dest``: the release's, or with ``peer`` its peer
    suite's (that lock, or its requirements resolved now; the test pins are in it)."""
    uv = uvenv.find_uv(lib.name)
    pins = uvenv.test_pins(lib.name) if peer is None else []
    if dest.exists():
        shutil.rmtree(dest)
    tmp = procs.staging(dest.parent, key)  # we hold the key's lock
    venv = tmp / "venv"
    python = venv / "bin" / "python"
    lock = lib.committed_lock(version) if peer is None else peer.lock
    requirements = lib.requirements(version) if peer is None else peer.requirements
    steps: list[tuple[str, list[str]]] = []
    if lock is None:
        (tmp / "requirements.in").write_text("".join(f"{r}\n" for r in requirements))
        lock = tmp / "lock.txt"
        steps.append(
            (
                "uv pip compile",
                [str(uv), "pip", "compile", "--quiet", "--universal", "--generate-hashes",
                 "--python-version", "{}.{}".format(*sys.version_info[:2]),
                 str(tmp / "requirements.in"), "-o", str(lock)],
            )
        )  # fmt: skip
        release = lib.committed_lock(version) if peer is not None else None
        if release is not None:  # the packages both share stay at the release's pins
            constraints = tmp / "release-constraints.txt"
            relaxed = release_constraints(release, requirements, constraints)
            for why in relaxed:
                log(f"{lib.name}: the peer suite of {version} asks for {why}")
            steps[-1][1].extend(["-c", str(constraints)])
    steps += [
        ("uv venv", [str(uv), "venv", "--no-project", "--relocatable",
                     "-p", sys.executable, str(venv)]),
        ("uv pip install", [str(uv), "pip", "install", "--python", str(python),
                            "--require-hashes", "-r", str(lock)]),
    ]  # fmt: skip
    if pins:
        steps.append(
            (
                "uv pip install (test pins)",
                [str(uv), "pip", "install", "--python", str(python), "-c", str(lock), *pins],
            )
        )
    what = f"{lib.dist}=={version}" + (" (peer suite)" if peer is not None else "")
    log(f"{lib.name}: building the environment {key} for {what}")
    start = time.monotonic()
    try:
        for step, cmd in steps:
            proc = uvenv.run(cmd)
            with (tmp / "build.log").open("a") as fh:
                fh.write(f"$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}")
                fh.write(f"[exit {proc.returncode}]\n")
            if proc.returncode != 0:
                raise uvenv.EnvError(
                    f"{lib.name}: building the environment for {what} failed at {step}: "
                    f"{uvenv.uv_reason(proc.stderr)} (full log: {dest / 'build.log'})"
                )
        kept_lock = dest / "lock.txt" if lock.parent == tmp else lock
        stamp = {
            "key": key,
            "version": version,
            "lock": str(kept_lock),
            "python": sys.executable,
            "test_pins": pins,
            **({"peer": True} if peer is not None else {}),
            "build_seconds": round(time.monotonic() - start, 1),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
        tmp.rename(dest)
    except BaseException:
        if (tmp / "build.log").is_file():  # keep the log where the message says
            dest.mkdir(parents=True, exist_ok=True)
            (tmp / "build.log").replace(dest / "build.log")
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{lib.name}: environment {key} built in {stamp['build_seconds']} s")
    return Env(dest, dest / "venv" / "bin" / "python", key, kept_lock)


def write_peer_lock(lib: Library, version: str, out: Path) -> None:
    """Resolve the peer lock of ``version`` into ``out`` (to commit as
    ``locks/<name>-X-peer.txt``): :meth:`peer_requirements` with uv, hashed, the
    release's committed lock as constraints (the packages both hold are the same)."""
    root = lib.sdist(version)
    requirements = lib.peer_requirements(version, root)
    py = "{}.{}".format(*sys.version_info[:2])
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "requirements.in"
        src.write_text("".join(f"{r}\n" for r in requirements))
        body = Path(tmp) / "lock.txt"
        # relative names, run in ``tmp``: the lock's "via" comments name no temporary path
        cmd = [
            str(uvenv.find_uv(lib.name)), "pip", "compile", "--quiet", "--universal",
            "--generate-hashes", "--no-header", "--python-version", py, src.name,
            "-o", body.name,
        ]  # fmt: skip
        release = lib.committed_lock(version)
        # ctxaudit's test pins the group's ranges left out (Library.peer_requirements)
        relaxed = [
            f"{pin} (ctxaudit's test pin)"
            for pin in uvenv.test_pins(lib.name)
            if pin not in requirements
        ]
        if release is not None:  # the packages both share stay at the release's pins
            relaxed += release_constraints(release, requirements, Path(tmp) / release.name)
            cmd += ["-c", release.name]
        proc = uvenv.run(cmd, cwd=Path(tmp))
        if proc.returncode != 0:
            raise uvenv.EnvError(
                f"{lib.name}: resolving the peer lock of {version} failed: "
                f"{uvenv.uv_reason(proc.stderr)}"
            )
        head = [
            f"# the peer suite of {lib.dist} {version} (its sdist's tests/): the release, its",
            f"# [{lib.peer_table}] {lib.peer_group} and ctxaudit's test pins, resolved by"
            " ctxaudit with:",
            f"#   uv pip compile --universal --python-version {py} --generate-hashes"
            + (f" -c {release.name}" if release is not None else ""),
            "# from:",
            *(f"#   {r}" for r in requirements),
        ]
        if relaxed:
            head += ["# the pins its test group asks otherwise of (the group decides):"]
            head += [f"#   {why}" for why in relaxed]
        if lib.peer_omit:
            omitted = textwrap.wrap(", ".join(sorted(lib.peer_omit)), 84)
            head += [f"# leaving out of [{lib.peer_table}] {lib.peer_group}:"]
            head += [f"#   {line}" for line in omitted]
        out.write_text("\n".join(head) + "\n" + body.read_text(encoding="utf-8"))
