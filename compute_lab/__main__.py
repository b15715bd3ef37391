"""``python -m compute_lab``: the same as the ``compute-lab`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
