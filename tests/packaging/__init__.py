"""Tests of the packaged app: build, self-test, desktop entry, icons, app metadata."""
