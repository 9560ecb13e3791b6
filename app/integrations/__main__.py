"""`python -m app.integrations`: the hook commands alone, without the rest of the command line.

The detached inbox drain is started this way (it needs neither the full `puffin-memory`
parser nor its imports), and it lets the hooks be tried before `app.cli` wires them in:
`python -m app.integrations [--home DIR] [--engine E] hook session-start < input.json`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `[--home DIR] [--engine E] hook ACTION | install-hooks ...` and run it.

    The prompt hooks (`[--home DIR] hook session-start|user-prompt-submit`) answer before
    any parser is built, as through `python -m app`.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if "hook" in args[:3]:
        from app.integrations.hooks import prompt_hook

        answered = prompt_hook(args)
        if answered is not None:
            return answered
    import argparse

    from app.integrations.cli_hooks import EXIT_INPUT, add_parsers, run

    parser = argparse.ArgumentParser(prog="python -m app.integrations")
    parser.add_argument("--home")
    parser.add_argument("--engine", choices=["auto", "offline", "anthropic", "local"])
    add_parsers(parser.add_subparsers(dest="command", metavar="COMMAND"))
    try:
        parsed = parser.parse_args(args)
    except SystemExit as exc:
        return EXIT_INPUT if exc.code else 0
    code = run(parsed, deadline=True)
    if code is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    return code


if __name__ == "__main__":
    sys.exit(main())
