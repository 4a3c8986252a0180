"""Hypothesis profiles: the one place where run sizes and seeds are set.

Select with ``--hypothesis-profile=NAME`` (pytest) or ``CTXAUDIT_PROFILE``.

- ``ci``        (default) the gate in CI and for developers: derandomized, so
                a given commit always runs the same examples; no example
                database, so the verdict does not depend on local state.
- ``mutation``  what runs against each mutant: derandomized and small, so a
                mutant's verdict does not depend on luck or on the order in
                which mutants ran.
- ``thorough``  the audit's profile: many more examples and longer programs,
                random seed (printed by pytest's Hypothesis plugin and in the
                report) and the example database on, so failures replay.
- ``dev``       like ``thorough`` but short, for iterating on a property.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, Verbosity, settings

_COMMON = dict(
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PROFILES: dict[str, dict[str, object]] = {
    "ci": dict(max_examples=60, stateful_step_count=40, derandomize=True, database=None),
    "mutation": dict(
        max_examples=40,
        stateful_step_count=30,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking
    ),
    "thorough": dict(max_examples=1000, stateful_step_count=80),
    "dev": dict(max_examples=30, stateful_step_count=20, verbosity=Verbosity.normal),
}

DEFAULT = "ci"


def register() -> None:
    for name, kwargs in PROFILES.items():
        settings.register_profile(name, **{**_COMMON, **kwargs})  # type: ignore[arg-type]


def load_from_env() -> str:
    """Register all profiles and load the one named by CTXAUDIT_PROFILE."""
    register()
    name = os.environ.get("CTXAUDIT_PROFILE", DEFAULT)
    if name not in PROFILES:
        raise SystemExit(
            f"ctxaudit: unknown Hypothesis profile {name!r} (CTXAUDIT_PROFILE); "
            f"choose one of {', '.join(PROFILES)}"
        )
    settings.load_profile(name)
    return name
