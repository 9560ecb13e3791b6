"""read_json: what a broken or hostile document in the memory home gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.atomic import read_json
from app.core.errors import StorageError


def test_read_json_refuses_a_fifo_instead_of_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    with pytest.raises(StorageError, match="not a regular file"):
        read_json(fifo)


def test_read_json_reports_deeply_nested_documents_as_invalid(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(StorageError, match="not valid JSON"):
        read_json(deep)
