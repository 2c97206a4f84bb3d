"""``python -m streamcodec``: the command line."""

from streamcodec.cli import main

raise SystemExit(main())
