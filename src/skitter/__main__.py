"""``python -m skitter``: the same as the ``skitter`` command."""

from skitter.cli import main

raise SystemExit(main())
