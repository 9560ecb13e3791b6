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


def describe_os_error(exc: OSError, what: str) -> str:
    """A sentence for a file-system failure while working on `what` (a path or a folder)."""
    import errno  # deferred: this module is on every cold path

    number = exc.errno
    if number in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return (
            f"The disk holding {what} is full (or over quota): free some space and try "
            "again. Nothing was changed."
        )
    if number == errno.EROFS:
        return (
            f"{what} is on a read-only file system: nothing can be written there. Use "
            "another memory folder (--home or PUFFIN_MEMORY_HOME). Nothing was changed."
        )
    if number in (errno.EACCES, errno.EPERM):
        return (
            f"No permission to write {what}: check the folder's owner and permissions. "
            "Nothing was changed."
        )
    return f"Could not write {what}: {exc.strerror or exc}. Nothing was changed."


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
