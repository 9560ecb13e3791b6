"""Integrations: Claude Code hooks and the hook installer."""
