"""Pytest fixtures for the fake provider server (filled in with the server)."""
