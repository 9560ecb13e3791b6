"""Core: models, branch file format, store, index, writer, reader, maintenance, API."""
