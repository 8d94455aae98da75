"""``python -m asrpt``: the command line (same as the ``asrpt`` script)."""

from .cli import main

raise SystemExit(main())
