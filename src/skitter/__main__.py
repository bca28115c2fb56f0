"""``python -m skitter``: the same as the ``skitter`` command."""

import sys

try:
    from skitter.cli import main

    sys.exit(main())
except KeyboardInterrupt:  # Ctrl-C while still starting up: nothing to save yet
    sys.exit(130)
