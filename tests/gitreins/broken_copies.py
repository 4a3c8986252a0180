"""Seen to fail: apply deliberate breaks to a copy of the pinned gitreins and
run the gitreins suite against each copy (``--gitreins=<copy>``).

    .venv/bin/python tests/gitreins/broken_copies.py [--profile NAME] [--all] [NAME ...]

Prints, per break, the property it breaks and whether the suite failed
(killed) or passed (SURVIVED), and the first failing test. ``--profile`` is the
Hypothesis profile (default ``ci``, the gate's); ``--all`` runs the whole suite
(no ``-x``) and lists every failing test, e.g. to compare two profiles. Not
collected by pytest; the mutation audit (mutation/) does the same systematically.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ctxaudit.targets.gitreins.tree import resolve  # noqa: E402

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
    "b2-output-cap-strict": (
        "B2", EC,
        "self.cumulative_output_tokens >= self.max_output_tokens",
        "self.cumulative_output_tokens > self.max_output_tokens",
    ),
    "b2-zero-input-is-a-cap": (
        "B2", EC,
        "self.max_input_tokens > 0 and self.cumulative_input_tokens",
        "self.max_input_tokens >= 0 and self.cumulative_input_tokens",
    ),
    "b3-llm-call-at-cap-allowed": (
        "B3", EC,
        "(allows one final full call)\n        if self.max_iterations > 0 and self.iteration_credit >= ",
        "(allows one final full call)\n        if self.max_iterations > 0 and self.iteration_credit > ",
    ),
    "b3-tool-call-at-cap-allowed": (
        "B3", EC,
        "slightly over.\n        \"\"\"\n        if self.max_iterations > 0 and self.iteration_credit >= ",
        "slightly over.\n        \"\"\"\n        if self.max_iterations > 0 and self.iteration_credit > ",
    ),
    "b3-iteration-cap-of-1-ignored": (
        "B3", EC,
        "slightly over.\n        \"\"\"\n        if self.max_iterations > 0 and",
        "slightly over.\n        \"\"\"\n        if self.max_iterations > 1 and",
    ),
    "b3-zero-iterations-is-a-cap": (
        "B3", EC,
        "slightly over.\n        \"\"\"\n        if self.max_iterations > 0 and",
        "slightly over.\n        \"\"\"\n        if self.max_iterations >= 0 and",
    ),
    "b3-loop-one-call-more": ("B3", EV, "while iteration < iter_limit:", "while iteration <= iter_limit:"),
    "b3-tool-call-costs-nothing": (
        "B3", EC,
        "self.iteration_credit += self.tool_call_weight",
        "pass",
    ),
    "b4-time-cap-strict": ("B4", EC, "if elapsed >= self.max_seconds:", "if elapsed > self.max_seconds:"),
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
    "v5-fourth-compaction-by-context-error": (
        "V5", EV,
        "if is_context_error and compaction_count < MAX_COMPACTIONS:",
        "if is_context_error and compaction_count <= MAX_COMPACTIONS:",
    ),
    "v6-500-compacts": ("V6", EV, "if 400 <= status < 500 and", "if 400 <= status <= 500 and"),
    "v6-429-compacts": ("V6", EV, "if 400 <= status < 500 and status != 429:", "if 400 <= status < 500:"),
    "v6-transport-compacts": (
        "V6", EV,
        "if not is_context_error and not _is_transport_failure(e):",
        "if not is_context_error:",
    ),
}  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="breaks to apply (default: all)")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default: ci)")
    parser.add_argument("--all", action="store_true", help="no -x: list every failing test")
    args = parser.parse_args(argv)
    names = args.names
    unknown = sorted(set(names) - set(BREAKS))
    if unknown:
        parser.error(f"no such break: {', '.join(unknown)}")
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
                [sys.executable, "-m", "pytest", "tests/gitreins", f"--gitreins={copy}",
                 *([] if args.all else ["-x"]), "-q", "-p", "no:cacheprovider",
                 "--ignore=tests/gitreins/test_history.py", "--show-capture=no"],
                cwd=ROOT, capture_output=True, text=True, check=False,
                env={**os.environ, "CTXAUDIT_PROFILE": args.profile},
            )  # fmt: skip
            out = proc.stdout + proc.stderr
            if proc.returncode == 1 and "AssertionError" in out:
                verdict = "killed"
            elif proc.returncode == 0:
                verdict = "SURVIVED"
            else:  # an error of the suite itself (e.g. Unsatisfiable) is not a kill
                verdict = f"error {proc.returncode}"
            survived += verdict != "killed"
            failing = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("FAILED ")]
            shown = failing if args.all else failing[:1]
            print(
                f"{prop:6} {name:37} {verdict:9} {time.monotonic() - started:5.1f}s "
                f"[{args.profile}] {shown}",
                flush=True,
            )
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
