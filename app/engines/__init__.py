"""Engines: the offline (rule-based) engine and the Anthropic (Claude) engine."""
