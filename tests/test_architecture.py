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
        "pydantic", "markdown_it", "filelock", "keyring",
        # the embedding model (app/core/embeddings.py) and the secret detectors (redact.py)
        "numpy", "tokenizers", "safetensors", "detect_secrets",
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
                if name.startswith(("app.service", "app.ui", "app.cli", "app.container",
                                    "app.integrations")):
                    offenders.append(f"{path.relative_to(APP)} imports {name}")
    assert offenders == []


def test_ui_talks_to_channels_not_core() -> None:
    offenders = [
        f"{path.relative_to(APP)} imports {name}"
        for path in _files("ui")
        for name in _imports(path)
        if name.startswith(("app.core", "app.engines", "app.sources", "app.container"))
    ]
    assert offenders == []


def _is_stdlib(name: str) -> bool:
    import sys

    return name in sys.stdlib_module_names
