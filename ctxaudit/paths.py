"""Where ctxaudit's own files are: the repository (or installed project) root that
holds ``model/``, ``ledger/``, ``mutation/`` and ``tests/``, and the folders the audit
writes under it by default."""

from __future__ import annotations

from pathlib import Path

#: the root of ctxaudit's checkout
REPO_ROOT = Path(__file__).resolve().parents[1]
