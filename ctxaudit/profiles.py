"""Hypothesis profiles: the one place where run sizes and seeds are set.

Select with ``--hypothesis-profile=NAME`` (pytest) or ``CTXAUDIT_PROFILE``.

- ``ci``        (default) the gate in CI and for developers: derandomized, so
                a given commit always runs the same examples; no example
                database, so the verdict does not depend on local state.
                Shrinking stops after 20 s (SHRINK_SECONDS), outside the audit.
- ``mutation``  what runs against each mutant: exactly the ``ci`` profile's
                examples (the same max_examples, stateful_step_count,
                derandomize and database=None, every phase that generates:
                explicit, reuse, generate, target), with only the shrink phase
                off, since a kill needs no minimal example. Hypothesis draws
                the same examples, in the same order, until the first failure
                (the shrink phase decides only what happens after it), so a
                mutant killed under seed 0 of the mutation worker fails the
                gate's run, and a mutant that survives passes it: the
                mutation audit states the strength of the suite users run.
- ``thorough``  the audit's profile: many more examples and longer programs,
                random seed (printed by pytest's Hypothesis plugin and in the
                report) and the example database on, so failures replay.
- ``dev``       like ``thorough`` but short, for iterating on a property.
- ``smoke``     ``ci`` with a sixth of its examples: ctxaudit's own tests run it on a
                target's audited releases (unless a release or tree is named:
                tests/inenv_child.py ``search``), where what is asked is that the
                lockstep still drives every rule through that release's API (its
                adapter's branches for the release) and holds; the search on every
                release is the release audit's (its reports), not the unit suite's.
"""

from __future__ import annotations

import argparse
import os

from hypothesis import HealthCheck, Phase, Verbosity, settings

# Every phase but ``explain``. Once a failure is found, the explain phase runs each
# shrink example under ``sys.settrace`` on Python 3.11 (to print the lines "always
# and only run by failing test cases"): every line of the target, the model and the
# machine is traced. Measured on the valve lockstep with a broken gitreins (the same
# 657 examples): shrinking took 69 s with it, 19 s without.
SHRINKING = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]

_COMMON = dict(
    deadline=None,
    print_blob=True,
    phases=SHRINKING,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: the gate's examples (CI and a developer's ``pytest``)
_CI: dict[str, object] = dict(
    max_examples=60, stateful_step_count=40, derandomize=True, database=None
)

PROFILES: dict[str, dict[str, object]] = {
    "ci": _CI,
    # the gate's examples without shrinking: Phase.target stays (the valve lockstep
    # calls hypothesis.target, and the target phase runs inside generation)
    "mutation": dict(_CI, phases=[p for p in SHRINKING if p is not Phase.shrink]),
    "thorough": dict(max_examples=1000, stateful_step_count=80),
    "dev": dict(max_examples=30, stateful_step_count=20, verbosity=Verbosity.normal),
    "smoke": dict(_CI, max_examples=10),
}

DEFAULT = "ci"

#: the search of a stateful suite whose every step is a request to a real service
#: (the lightspeed-stack lockstep: a step is an HTTP request through the app, OGX and
#: the fake LLM, then a listing of the conversation, some 100 times a model step):
#: fewer and shorter examples per profile. Each path's settlement is met on every run
#: by fixed programs (tests/lightspeed/inenv/test_programs.py) and by the lockstep's
#: openings; the search adds the interleavings. ``mutation`` keeps ``ci``'s, so a
#: mutant meets the gate's examples.
SERVICE_SEARCH: dict[str, dict[str, int]] = {
    "ci": dict(max_examples=20, stateful_step_count=20),
    "mutation": dict(max_examples=20, stateful_step_count=20),
    "thorough": dict(max_examples=200, stateful_step_count=40),
    "dev": dict(max_examples=10, stateful_step_count=10),
    "smoke": dict(max_examples=4, stateful_step_count=20),
}


def service_search(name: str | None = None) -> dict[str, int]:
    """The search size of a service-backed stateful suite under profile ``name``
    (default: the profile ``CTXAUDIT_PROFILE`` names)."""
    return SERVICE_SEARCH[name or os.environ.get("CTXAUDIT_PROFILE", DEFAULT)]


#: seconds a profile may spend shrinking one failure (Hypothesis's own bound is 300 s).
#: The gate's profile answers within 30 s on the shared 2-core machine
#: (reports/benchmarks/failure.md); a failure whose shrinking was cut short says that
#: its example may not be minimal (ctxaudit/failure_output.py). The audit
#: (``CTXAUDIT_RESULTS`` set) keeps Hypothesis's bound: its findings are the
#: examples shrunk as far as they go, whatever the profile.
SHRINK_SECONDS: dict[str, int] = {"ci": 20, "dev": 20, "smoke": 20}


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
    bound_shrinking(name)
    return name


def bound_shrinking(name: str) -> None:
    """Set the shrinking time bound of profile ``name`` (Hypothesis documents the
    constant as the one to monkeypatch)."""
    from hypothesis.internal.conjecture import engine

    audit = bool(os.environ.get("CTXAUDIT_RESULTS"))
    engine.MAX_SHRINKING_SECONDS = 300 if audit else SHRINK_SECONDS.get(name, 300)


def parse_seed(text: str) -> int:
    """A Hypothesis seed as every entry point takes it: a non-negative decimal integer
    (ASCII digits only: no sign, no spaces, no underscores, no other digits), so the
    seed a report prints replays the same run wherever it is given. An
    ``argparse`` type: ``ctxaudit audit --seed``, ``ctxaudit attribute --seed`` and
    ``python -m mutation run --seed`` all take it."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seed (a non-negative decimal integer, e.g. 1)"
        )
    return int(text)
