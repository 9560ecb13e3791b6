"""`python -m app` and the `puffin-memory` console script."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the command line (the desktop app when no command is given).

    `hook ...` runs on every prompt of an agent session, so it skips the full command line
    (its parser and imports) and goes straight to the hook commands, which answer the same.
    A plain `retrieve` or `list` is answered from the index by `app.readpath` when it can
    be (the same answer, without building the API); otherwise the full command line answers.
    """
    argv = sys.argv[1:]
    if "hook" in argv[:3]:
        from app.integrations.hooks import prompt_hook

        answered = prompt_hook(argv)
        if answered is not None:
            return answered
    if _hook_command(argv):
        from app.integrations.__main__ import main as hooks_main

        return hooks_main(argv)
    if argv and ("retrieve" in argv[:3] or "list" in argv[:3]):
        from app.readpath import main as read_main

        answered = read_main(argv)
        if answered is not None:
            return answered
    from app.cli import main as cli_main

    return cli_main(argv)


def _hook_command(argv: list[str]) -> bool:
    """`[--home DIR] [--engine E] hook ACTION ...` (the form hook settings use)."""
    i = 0
    while i < len(argv) and argv[i] in ("--home", "--engine"):
        i += 2
    rest = argv[i:]
    return len(rest) >= 2 and rest[0] == "hook" and not rest[1].startswith("-")


if __name__ == "__main__":
    sys.exit(main())
