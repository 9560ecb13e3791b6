"""Thread sources: readers for agent transcripts, discovery, rendering and the ledger.

Readers (`claude_code`, `puffin`, `codex`, `aider`, `plaintext`) turn transcripts into
threads; `scan` is the public entry (discover, plan, dry-run report, memorize pending,
sources report); `render` produces the text given to extraction; `ledger` remembers what
was memorized. Nothing here imports Qt.
"""
