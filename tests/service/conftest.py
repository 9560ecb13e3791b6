"""Service test fixtures (defined in `support.py`, shared with the UI tests)."""

from tests.service.support import channels, qloop, quiet_home, seeded_channels, seeded_home

__all__ = ["channels", "qloop", "quiet_home", "seeded_channels", "seeded_home"]
