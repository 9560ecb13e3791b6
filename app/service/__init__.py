"""Service: MemoryHost and MemoryChannels, the Qt face of the memory API."""
