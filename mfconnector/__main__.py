"""``python -m mfconnector``."""

from mfconnector.cli import main

raise SystemExit(main())
