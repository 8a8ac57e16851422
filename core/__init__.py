"""Parley's core: storage, message model, providers, compaction. Never imports Qt."""

__version__ = "0.1.0"
