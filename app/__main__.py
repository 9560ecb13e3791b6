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
    fast = _prompt_hook(argv)
    if fast is not None:
        return _run_prompt_hook(*fast)
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


# The hooks that run before every prompt or session answer without argparse: building the
# parsers costs more than the hook's own work.
_PROMPT_HOOKS = ("session-start", "user-prompt-submit")


def _prompt_hook(argv: list[str]) -> tuple[str | None, str] | None:
    """(home, action) for exactly `[--home DIR] hook session-start|user-prompt-submit`."""
    home: str | None = None
    rest = argv
    if len(rest) >= 2 and rest[0] == "--home":
        home, rest = rest[1], rest[2:]
    if len(rest) == 2 and rest[0] == "hook" and rest[1] in _PROMPT_HOOKS:
        return home, rest[1]
    return None


def _run_prompt_hook(home: str | None, action: str) -> int:
    """What `hook ACTION` does through the full parser, deadline included."""
    from app.core.paths import resolve_home
    from app.integrations import hooks
    from app.integrations.hookio import arm_deadline

    arm_deadline(resolve_home(home), f"hook {action}")
    if action == "session-start":
        return hooks.session_start(home)
    return hooks.user_prompt_submit(home)


if __name__ == "__main__":
    sys.exit(main())
