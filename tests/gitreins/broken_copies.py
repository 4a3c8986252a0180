"""Seen to fail: apply deliberate breaks to a copy of the pinned gitreins and
run the gitreins suite against each copy (``--gitreins=<copy>``).

    .venv/bin/python tests/gitreins/broken_copies.py [NAME ...]

Prints, per break, the property it breaks and whether the suite failed
(killed) or passed (SURVIVED). Not collected by pytest; the mutation audit
(mutation/) does the same systematically.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ctxaudit.targets.gitreins import resolve  # noqa: E402

EC, EV = "engine/eval_cap.py", "engine/evaluator.py"
# name: (property, file, exact text, replacement)
BREAKS: dict[str, tuple[str, str, str, str]] = {
    "b1-cache-write-not-metered": (
        "B1", EC,
        "all_input = prompt_tokens + cache_read_tokens + cache_write_tokens",
        "all_input = prompt_tokens + cache_read_tokens",
    ),
    "b2-input-cap-strict": (
        "B2", EC,
        "self.cumulative_input_tokens >= self.max_input_tokens",
        "self.cumulative_input_tokens > self.max_input_tokens",
    ),
    "b3-tool-call-costs-nothing": (
        "B3", EC,
        "self.iteration_credit += self.tool_call_weight",
        "pass",
    ),
    "b4-time-cap-late": ("B4", EC, "if elapsed >= self.max_seconds:", "if elapsed > self.max_seconds + 0.5:"),
    "b5-reset-keeps-output": (
        "B5", EC,
        "        self.cumulative_output_tokens = 0\n        self.cumulative_cache_read = 0",
        "        self.cumulative_cache_read = 0",
    ),
    "v1-gr-gap-062": ("V1/V7", EV, "if budget_used > threshold:", "if cumulative_prompt_tok > threshold:"),
    "v1-boundary": ("V1", EV, "if budget_used > threshold:", "if budget_used >= threshold:"),
    "v3-no-reset-after-valve": (
        "V3", EV,
        "                    self.eval_cap.reset_context_tracking()  # Fresh context = fresh token budget\n                    continue\n\n            try:",
        "                    continue\n\n            try:",
    ),
    "v4-progress-off-by-one": ("V4", EV, 'key = f"verified_{i}"', 'key = f"verified_{i + 1}"'),
    "v5-four-compactions": ("V5", EV, "MAX_COMPACTIONS = 3", "MAX_COMPACTIONS = 4"),
    "v5-fourth-compaction": (
        "V5", EV,
        "if budget_used > 0 and compaction_count < MAX_COMPACTIONS:",
        "if budget_used > 0 and compaction_count <= MAX_COMPACTIONS:",
    ),
    "v6-429-compacts": ("V6", EV, "if 400 <= status < 500 and status != 429:", "if 400 <= status < 500:"),
    "v6-transport-compacts": (
        "V6", EV,
        "if not is_context_error and not _is_transport_failure(e):",
        "if not is_context_error:",
    ),
}  # fmt: skip


def main(names: list[str]) -> int:
    pinned = resolve("")
    survived = 0
    for name, (prop, rel, old, new) in BREAKS.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory(prefix="ctxaudit-broken-") as tmp:
            copy = Path(tmp)
            shutil.copytree(pinned.root / "engine", copy / "engine")
            (copy / "PKG-INFO").write_text(
                f"Metadata-Version: 2.1\nName: gitreins\nVersion: {pinned.version}\n"
            )
            path = copy / rel
            text = path.read_text()
            if text.count(old) < 1:
                print(f"{name}: break no longer applies ({rel})")
                return 2
            path.write_text(text.replace(old, new, 1))
            started = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "tests/gitreins", f"--gitreins={copy}", "-x", "-q",
                 "-p", "no:cacheprovider", "--ignore=tests/gitreins/test_history.py", "--show-capture=no"],
                cwd=ROOT, capture_output=True, text=True, check=False,
                env={**os.environ, "CTXAUDIT_PROFILE": "mutation"},
            )  # fmt: skip
            out = proc.stdout + proc.stderr
            if proc.returncode == 1 and "AssertionError" in out:
                verdict = "killed"
            elif proc.returncode == 0:
                verdict = "SURVIVED"
            else:  # an error of the suite itself (e.g. Unsatisfiable) is not a kill
                verdict = f"error {proc.returncode}"
            survived += verdict != "killed"
            failing = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED")]
            print(
                f"{prop:6} {name:28} {verdict:9} {time.monotonic() - started:5.1f}s {failing[:1]}",
                flush=True,
            )
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
