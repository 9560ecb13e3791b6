"""The handlers of the core operations, one module per concern.

`HANDLER_MODULES` lists them; each has `HANDLERS` (operation -> handler taking the API and
the validated request). Operations that need layers above the core (sources, engines, hooks)
are attached by the composition root instead.
"""

from __future__ import annotations

from app.core.handlers import (
    branches,
    conflicts,
    items,
    maintenance,
    retrieval,
    review,
    settings,
    transfer,
)

HANDLER_MODULES = (branches, conflicts, items, maintenance, retrieval, review, settings, transfer)
