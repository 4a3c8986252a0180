from ctxaudit.cli import main

raise SystemExit(main())
