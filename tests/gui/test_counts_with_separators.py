"""Counts shown to a person have thousands separators (fresh-user trial 15: "10097
messages in 5 chats" on the recovery page, "Salvaged 10097 messages…" after a salvage).

The recovery page's backup lines, the salvage notice, the missing-file page and the
backups setting all say a count with :func:`parley.gui.database.recovery_page.holds`."""

from __future__ import annotations

from parley.gui.database.recovery_page import holds


def test_the_recovery_page_counts_have_separators() -> None:
    assert holds(10_097, 5) == "10,097 messages in 5 chats"
    assert holds(1, 1) == "1 message in 1 chat"
    assert holds(2_000_000, 1_234) == "2,000,000 messages in 1,234 chats"

