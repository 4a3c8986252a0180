"""The ``ctxaudit`` command's entry (and ``python -m ctxaudit``'s): the command line
(``ctxaudit/cli.py``) under the console's rules (``ctxaudit/console.py``).

Apart from the command line so that it can say, in one line, that the command line did
not import: a library it needs (Hypothesis, pytest) broken, or another one first on
``PYTHONPATH``.
"""

from __future__ import annotations

import sys
import traceback

from ctxaudit import console


def entry() -> int:
    """The ``ctxaudit`` command (and ``python -m ctxaudit``): the command line
    (``ctxaudit/cli.py``) under the console's rules. A library that does not import (a
    broken or foreign Hypothesis first on ``PYTHONPATH``) is one line and exit 2."""

    def command() -> int:
        try:
            from ctxaudit.cli import main
        except ImportError as exc:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            print(
                f"ctxaudit: cannot start: {type(exc).__name__}: {exc} "
                f"(raised at {frame.filename}:{frame.lineno}; is PYTHONPATH set?)",
                file=sys.stderr,
            )
            return 2
        return main()

    return console.guarded(command)
