"""google-adk as a :class:`~ctxaudit.targets.base.Target`: its session services (S2, S3,
S6), on ``google-adk`` releases. Trees and environments are
:mod:`ctxaudit.targets.google_adk.tree`; its suites (``tests/google_adk/inenv``) run in
the release's own environment, with the tree first on the path
(:class:`~ctxaudit.targets.library.LibraryTarget`).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.properties import applying
from ctxaudit.targets.base import MutationScope, PytestOption
from ctxaudit.targets.google_adk.findings import FINDINGS_TESTS, NAME
from ctxaudit.targets.google_adk.tree import LIBRARY
from ctxaudit.targets.library import LibraryTarget

INENV = "tests/google_adk/inenv"


class GoogleAdk(LibraryTarget):
    name = NAME
    library = LIBRARY
    findings_module = "ctxaudit.targets.google_adk.findings"
    properties = applying(
        "S2",
        "S3",
        "S6",
        notes={
            "S2": "what a session service reads back: events as written, state by scope",
            "S3": "each event stored once",
            "S6": "the events in the order appended, nothing lost, nothing deleted back",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/google_adk/findings.py"
    fixes_package = "ctxaudit.targets.google_adk.fixes"
    mutation = MutationScope(
        NAME,
        "google",
        spec_option="--google-adk",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="google-adk release (google-adk==2.13.0) or a tree that holds google/adk/",
    )
    pytest_options = (
        PytestOption(
            "--google-adk",
            "google-adk target: a release (2.13.0, google-adk==2.13.0) fetched into .cache/, "
            "or a folder that holds google/adk/sessions. Default: the current release.",
        ),
    )
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'google-adk==X', a folder that holds google/adk/"
    # audited when named (--target google-adk), not by a bare audit while it is new
    default_spec = ""


TARGET = GoogleAdk()
