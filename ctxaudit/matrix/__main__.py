"""``python -m ctxaudit.matrix REPORTS_DIR [--out DIR]``."""

from ctxaudit.matrix import main

raise SystemExit(main())
