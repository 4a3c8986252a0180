"""A target's in-environment suite asked for by pytest in ctxaudit's own interpreter (a
report's rerun or reproduction command: ``ctxaudit test
'tests/langchain/inenv/test_findings.py::...' --langchain=langchain==1.5.2``) runs in
that release's own environment, as the audit runs it, instead of collecting nothing.

Each in-environment folder's ``conftest.py`` calls :func:`route` from its
``pytest_cmdline_main`` (a hook pytest calls for the conftests of the paths given):
when every path given is in that folder and the process is not already in a target's
environment (the folder's tree variable unset), the same command runs there, in the
same folder, and its exit code is this run's. The target option given (``--langchain``)
names the release or tree; without it, the target's default. A target that cannot be
resolved or built is a usage error of one line (exit 4), never a run that passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ctxaudit import targets
from ctxaudit.targets.base import TargetError


def _given(config: pytest.Config) -> list[Path]:
    """The paths the command names (node ids without their ``::`` part), absolute."""
    here = Path(config.invocation_params.dir)
    return [(here / str(a).split("::")[0]).resolve() for a in config.args]


def route(config: pytest.Config, target_name: str, folder: Path, tree_variable: str) -> int | None:
    """Run this pytest command in ``target_name``'s environment when it asks only for
    tests under ``folder`` and is not already there; its exit code, else None."""
    if os.environ.get(tree_variable):
        return None  # in the environment already: the audit's run, or a routed one
    given = _given(config)
    folder = folder.resolve()
    if not given or not all(p == folder or p.is_relative_to(folder) for p in given):
        return None
    target = targets.get(target_name)
    options = [o for o in target.pytest_options if o.resolves]
    spec = str(config.getoption(options[0].name)) if options else ""
    spec = spec or target.default_spec or target.name
    repo = None
    if target.repo is not None:  # its option, else its variable (lightspeed-stack's)
        named = config.getoption(target.repo.option, default="") or os.environ.get(target.repo.env)
        repo = Path(str(named)) if named else None
    try:
        described = target.expand(spec, repo)[0]
        process = target.suite_process(described, Path(tempfile.gettempdir()))
    except TargetError as exc:
        raise pytest.UsageError(f"ctxaudit: cannot run {folder.name} tests: {exc}") from None
    if process is None:
        return None
    python, env = process
    print(
        f"ctxaudit: running in {target_name} {described.version}'s environment ({python})",
        file=sys.stderr,
        flush=True,
    )
    cmd = [python, "-m", "pytest", *config.invocation_params.args]
    return subprocess.call(cmd, cwd=config.invocation_params.dir, env=env)
