"""pydantic-ai as a :class:`~ctxaudit.targets.base.Target`: ``UsageLimits`` (B1, B2,
B3), on ``pydantic-ai-slim`` releases. Trees and environments are
:mod:`ctxaudit.targets.pydantic_ai.tree`; its suites (``tests/pydantic_ai/inenv``) run in
the release's own environment, with the tree first on the path
(:class:`~ctxaudit.targets.library.LibraryTarget`).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.properties import applying
from ctxaudit.targets.base import MutationScope, PytestOption
from ctxaudit.targets.library import LibraryTarget
from ctxaudit.targets.pydantic_ai.findings import FINDINGS_TESTS, NAME
from ctxaudit.targets.pydantic_ai.tree import LIBRARY

INENV = "tests/pydantic_ai/inenv"


class PydanticAi(LibraryTarget):
    name = NAME
    library = LIBRARY
    findings_module = "ctxaudit.targets.pydantic_ai.findings"
    properties = applying(
        "B1",
        "B2",
        "B3",
        notes={
            "B2": "strict, cumulative and per request (docs/properties.md, section 1b)",
            "B3": "the request limit and the tool-call batch, checked before",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/pydantic_ai/findings.py"
    fixes_package = "ctxaudit.targets.pydantic_ai.fixes"
    mutation = MutationScope(
        NAME,
        "pydantic_ai",
        spec_option="--pydantic-ai",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="pydantic-ai release (pydantic-ai==2.68.0) or a tree that holds pydantic_ai/",
    )
    pytest_options = (
        PytestOption(
            "--pydantic-ai",
            "pydantic-ai target: a release of pydantic-ai-slim (2.68.0, pydantic-ai==2.68.0) "
            "fetched into .cache/, or a folder that holds pydantic_ai/usage.py. Default: the "
            "current release.",
        ),
    )
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'pydantic-ai==X', a folder that holds pydantic_ai/"
    default_spec = NAME


TARGET = PydanticAi()
