"""Layering rules of docs/architecture: read every import with `ast` and check who imports whom."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"
NO_QT = ["core", "engines", "sources", "integrations", "cli.py", "container.py", "__main__.py"]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _files(part: str) -> list[Path]:
    target = APP / part
    return [target] if target.is_file() else sorted(target.rglob("*.py"))


@pytest.mark.parametrize("part", NO_QT)
def test_layers_below_the_service_never_import_qt(part: str) -> None:
    offenders = [
        f"{path.relative_to(APP)} imports {name}"
        for path in _files(part)
        for name in _imports(path)
        if name.split(".")[0] in {"PySide6", "qasync", "shiboken6"}
    ]
    assert offenders == []


def test_core_imports_only_allowed_packages() -> None:
    allowed_third_party = {
        "pydantic",
        "markdown_it",
        "filelock",
        "keyring",
        # the embedding model (app/core/embeddings.py)
        "numpy",
        "tokenizers",
        "safetensors",
    }
    offenders = []
    for path in _files("core"):
        for name in _imports(path):
            top = name.split(".")[0]
            outside_core = top == "app" and not name.startswith("app.core")
            foreign = top not in allowed_third_party and top != "app" and not _is_stdlib(top)
            if outside_core or foreign:
                offenders.append(f"{path.name} imports {name}")
    assert offenders == []


def test_engines_and_sources_do_not_reach_up() -> None:
    offenders = []
    for part in ("engines", "sources"):
        for path in _files(part):
            for name in _imports(path):
                if name.startswith(
                    ("app.service", "app.ui", "app.cli", "app.container", "app.integrations")
                ):
                    offenders.append(f"{path.relative_to(APP)} imports {name}")
    assert offenders == []


def test_ui_talks_to_channels_not_core() -> None:
    # The answer types are the contract the channels return, types only: widgets name them.
    offenders = [
        f"{path.relative_to(APP)} imports {name}"
        for path in _files("ui")
        for name in _imports(path)
        if name.startswith(("app.core", "app.engines", "app.sources", "app.container"))
        and name != "app.core.answers"
    ]
    assert offenders == []


def _is_stdlib(name: str) -> bool:
    import sys

    return name in sys.stdlib_module_names


# Modules the per-prompt hook must not load: each costs milliseconds on every prompt, and
# none is needed to read the index and answer.
# Session start writes the session's record, so it may load the file helpers.
_PROMPT_HOOK_NEVER = (
    "argparse",
    "pydantic",
    "anthropic",
    "numpy",
    "markdown_it",
    "PySide6",
    "app.cli",
    "app.core.api",
)
_PER_PROMPT_NEVER = ("tempfile", "shutil", "hashlib")


@pytest.mark.parametrize("action", ["user-prompt-submit", "session-start"])
def test_prompt_hooks_import_only_what_they_need(tmp_path: Path, action: str) -> None:
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['app', '--home', sys.argv[1], 'hook', sys.argv[2]]\n"
        "try:\n    runpy.run_module('app', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('\\nMODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    given = json.dumps(
        {
            "session_id": "s",
            "cwd": str(tmp_path / "repo"),
            "prompt": "how does the watcher handle renames",
            "source": "startup",
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "home"), action],
        input=given,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    loaded = set(done.stderr.rsplit("MODULES ", 1)[-1].split())
    assert "app.integrations.hooks" in loaded, done.stderr[-2000:]
    never = _PROMPT_HOOK_NEVER + (_PER_PROMPT_NEVER if action == "user-prompt-submit" else ())
    assert not sorted(m for m in never if m in loaded)


# Modules a cold `retrieve` (app/readpath.py, the index) must not load: the composition
# root's weight (models, SDKs, engines, the event loop) is what made a search cost ten
# times Python's own start.
_READ_PATH_NEVER = (
    "pydantic",
    "anthropic",
    "openai",
    "markdown_it",
    "asyncio",
    "argparse",
    "numpy",
    "tokenizers",
    "PySide6",
    "qasync",
    "app.container",
    "app.cli",
    "app.core.api",
    "app.core.models",
    "app.core.reader",
    "app.core.store",
)


def test_the_cold_read_path_imports_only_what_it_needs() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    probe = (
        "import sys, app.readpath, app.core.index, app.remote\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "app.readpath" in loaded
    offenders = sorted(
        m for m in loaded if m in _READ_PATH_NEVER or m.startswith(("app.engines", "app.ui"))
    )
    assert offenders == []


# The core and everything it calls are synchronous: the GUI reaches them through one worker
# thread (app/service/host.py), the CLI and hooks call them directly, the MCP server on a
# worker thread. Only the GUI side and the MCP server's tools are coroutines.
SYNC = ["core", "engines", "sources", "cli.py", "container.py", "readpath.py", "remote.py"]


@pytest.mark.parametrize("part", SYNC)
def test_the_core_is_synchronous(part: str) -> None:
    offenders = []
    for path in _files(part):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [
            f"{path.relative_to(APP)}:{node.lineno} {node.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.AsyncFunctionDef)
        ]
        offenders += [
            f"{path.relative_to(APP)} imports {name}"
            for name in _imports(path)
            if name.split(".")[0] in {"asyncio", "anyio", "trio"}
        ]
    assert offenders == []


def _awaits(node: ast.AsyncFunctionDef) -> bool:
    stack: list[ast.AST] = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))
    return False


def test_every_coroutine_awaits_something() -> None:
    offenders = [
        f"{path.relative_to(APP)}:{node.lineno} {node.name}"
        for path in sorted(APP.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if isinstance(node, ast.AsyncFunctionDef) and not _awaits(node)
    ]
    assert offenders == [], "an async def that never awaits is a plain function"


def test_no_switch_interval_tuning() -> None:
    offenders = [
        str(path.relative_to(APP))
        for path in sorted(APP.rglob("*.py"))
        if "setswitchinterval" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_only_the_core_queries_sqlite() -> None:
    # One read path: the index (and the vectors) are opened and queried in app/core only;
    # the hooks and the cold command line read through app/core/indexread.py.
    offenders = []
    for path in sorted(APP.rglob("*.py")):
        if path.is_relative_to(APP / "core"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [
            f"{path.relative_to(APP)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and (
                node.func.attr in {"execute", "executemany", "executescript"}
                or (
                    node.func.attr == "connect"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "sqlite3"
                )
            )
        ]
    assert offenders == []


def _top_level_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
    return names


def test_no_module_defines_a_name_twice() -> None:
    # A second pattern under an existing name silently changes every earlier use of it
    # (the engine's `_POINTS_BACK` was once redefined 1,200 lines further down).
    twice: list[str] = []
    for path in sorted(APP.rglob("*.py")):
        names = _top_level_names(path)
        twice += [
            f"{path.relative_to(APP)}: {name}"
            for name in sorted(set(names))
            if names.count(name) > 1 and name != "__all__"
        ]
    assert twice == []
