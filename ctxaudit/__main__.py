from ctxaudit.console import entry

raise SystemExit(entry())
