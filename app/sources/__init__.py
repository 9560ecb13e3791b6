"""Thread sources: readers for agent transcripts, discovery and the processed-thread ledger."""
