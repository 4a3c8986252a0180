"""The Jinja2 environment of ctxaudit's reports (templates in ``ctxaudit/templates/``).

One template per output (``findings.md``, ``matrix.md``, ``matrix.html``,
``audit-time.md``) plus partials whose names start with ``_``. The data comes in as
the typed objects the reports are built from; the templates only lay it out.
Templates ending in ``.html.j2`` or ``.svg.j2`` are autoescaped; Markdown templates
escape table cells with the ``md_cell`` filter. This module imports nothing else of
ctxaudit, so any layer may use it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import jinja2


def md_cell(text: object) -> str:
    """Text safe inside one Markdown table cell (or one list item)."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def fence(text: str) -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def f1(x: float) -> str:
    """A coordinate with one decimal."""
    return f"{x:.1f}"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def indent_lines(text: str, prefix: str) -> str:
    """Every non-empty line of ``text`` prefixed (empty lines stay empty)."""
    return "\n".join(f"{prefix}{ln}" if ln else "" for ln in text.splitlines())


def _autoescape(name: str | None) -> bool:
    return name is not None and name.endswith((".html.j2", ".svg.j2"))


def environment(package: str) -> jinja2.Environment:
    """An environment over ``<package>/templates`` with ctxaudit's filters; what is
    outside a ``{% ... %}`` tag is output as written (no blank lines from tags)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=_autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        md_cell=md_cell, fence=fence, pct=pct, f1=f1, minutes=minutes, indent_lines=indent_lines
    )
    return env


@cache
def _env() -> jinja2.Environment:
    return environment("ctxaudit")


def render(template: str, **context: Any) -> str:
    """Render ``ctxaudit/templates/<template>``."""
    return _env().get_template(template).render(**context)
