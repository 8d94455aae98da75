"""``python -m asrpt``: the command line (same as the ``asrpt`` script)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
