from ctxaudit.launch import entry

raise SystemExit(entry())
