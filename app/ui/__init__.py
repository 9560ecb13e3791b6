"""UI: widgets that talk to MemoryChannels only."""
