"""`python -m app` and the `puffin-memory` console script."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the command line (the desktop app when no command is given)."""
    from app.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
