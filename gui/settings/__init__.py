"""The Settings dialog and its pages (providers, keyboard, backups, shared widgets)."""
