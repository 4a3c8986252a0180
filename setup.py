"""The wheel's one build step beyond pyproject.toml: ctxaudit's suites ship inside it.

An installed ctxaudit imports only ``ctxaudit``. What its runs read as files (the model,
the ledger, the mutation runner, the property suites, the lock its target environments
are built from) is copied into the package as ``ctxaudit/_suite/``; at run time
ctxaudit copies that tree into the user's cache folder and runs there
(``ctxaudit/paths.py``), so nothing is written into the installation and the names
``model``, ``ledger``, ``mutation`` and ``tests`` never reach the user's environment.
An editable install (a checkout) runs in the checkout itself and copies nothing.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: the folders and files of the checkout an installed ctxaudit runs from
SUITE = ("model", "ledger", "mutation", "tests", "requirements.lock", "pyproject.toml")
#: never shipped: caches and the mutation runner's work copies
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "work", ".hypothesis", ".pytest_cache")


class BuildWithSuite(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # a checkout runs in place
        self._vendor(Path(self.build_lib) / "ctxaudit" / "_vendor")
        dest = Path(self.build_lib) / "ctxaudit" / "_suite"
        shutil.rmtree(dest, ignore_errors=True)
        for part in SUITE:
            src = ROOT / part
            if src.is_dir():
                shutil.copytree(src, dest / part, ignore=SKIP)
            else:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / part)

    @staticmethod
    def _vendor(dest: Path) -> None:
        """The mutation report viewer (ctxaudit/mte.py), fetched at build time, pinned and
        checked; a wheel built without the network still works and says how to get it."""
        sys.path.insert(0, str(ROOT))
        from ctxaudit import mte

        try:
            mte.fetch(dest)
        except mte.FetchError as exc:
            print(f"warning: {exc}; mutation.html will not be written", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithSuite})
