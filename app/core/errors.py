"""The one exception hierarchy of Puffin Memory, each class mapped to an API error code.

Every layer raises these; `MemoryApi` turns them into `{"error": true, "code": ...}` replies
and the CLI into exit codes. Messages are written for a person, not a stack trace.
"""

from __future__ import annotations


class PuffinError(Exception):
    """Base class: an expected failure with a code and a message a person understands."""

    code = "INTERNAL_ERROR"

    def __init__(self, message: str, *, context: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.context = context or {}


class InvalidInput(PuffinError):
    """A request, branch id, file or setting that cannot be accepted as given."""

    code = "INVALID_INPUT"


class NotFound(PuffinError):
    """The branch, item, version or thread asked for does not exist."""

    code = "NOT_FOUND"


class ExtractionFailed(PuffinError):
    """The engine could not extract or evolve; the branch file was left as it was."""

    code = "EXTRACTION_FAILED"


class RetrievalFailed(PuffinError):
    """A search could not be answered."""

    code = "RETRIEVAL_FAILED"


class StorageError(PuffinError):
    """A file could not be read or written safely."""

    code = "STORAGE_ERROR"


class MaintenanceFailed(PuffinError):
    """A maintenance run failed; files were left as they were."""

    code = "MAINTENANCE_FAILED"


class BudgetExceeded(PuffinError):
    """The daily LLM token budget is used up; the offline engine takes over."""

    code = "BUDGET_EXCEEDED"


ERROR_CODES: tuple[str, ...] = (
    "INVALID_INPUT",
    "NOT_FOUND",
    "EXTRACTION_FAILED",
    "RETRIEVAL_FAILED",
    "STORAGE_ERROR",
    "MAINTENANCE_FAILED",
    "BUDGET_EXCEEDED",
    "INTERNAL_ERROR",
)
