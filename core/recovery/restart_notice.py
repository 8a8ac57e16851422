"""The words of the notice shown after Parley was closed without a clean exit.

What the previous run left is one or more of (``parley.core.recovery.previous_run.PreviousRun``):

* a cut-off reply: an aborted assistant turn holding what arrived, which can
  be continued;
* an unanswered message: the question is saved but no reply text arrived;
  Retry asks again;
* an interrupted compaction: the chat was being compacted (by hand, or
  automatically before a reply) when Parley stopped; a compaction is saved
  whole or not at all, so the chat is as it was before it.

:func:`restart_notice` says exactly those that happened, never one for another.
This module imports nothing heavy: the window uses it at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: A reply was cut off (and nothing else was left).
CUT_OFF = ("Parley was closed while replying; the cut-off reply is marked, with Continue "
           "under it.")
#: A message was left without any reply (and nothing else).
UNANSWERED = ("Parley was closed before the reply came; your message is saved, unanswered. "
              "Use Retry to ask again.")
#: A compaction was interrupted (and no message was left waiting).
COMPACTION = ("Parley was closed while compacting a chat; nothing of the compaction was "
              "saved, and the chat is as it was before.")
#: A compaction before a reply was interrupted: the message waits unanswered.
COMPACTION_UNANSWERED = ("Parley was closed while compacting a chat before replying; your "
                         "message is saved, unanswered, and the chat is as it was before. "
                         "Use Retry to ask again.")


def restart_notice(interrupted: Sequence[Any], compacting: Sequence[str] = ()) -> str | None:
    """The notice for what a run that did not exit cleanly left.

    Args:
        interrupted: ``parley.core.recovery.previous_run.InterruptedReply`` values (``session_id``,
            ``kind``: ``partial`` or ``unanswered``).
        compacting: ids of the sessions a compaction was working in.

    Returns:
        One or two sentences, or None when nothing was left to tell.
    """
    partial = [i for i in interrupted if i.kind == "partial"]
    unanswered = [i for i in interrupted if i.kind == "unanswered"]
    compacted = set(compacting)
    waiting_after_compaction = [i for i in unanswered if i.session_id in compacted]
    parts: list[str] = []
    if partial:
        parts.append(CUT_OFF if len(partial) == 1 else
                     f"Parley was closed while replying in {len(partial)} chats; the cut-off "
                     "replies are marked, with Continue under each.")
    if waiting_after_compaction:
        parts.append(COMPACTION_UNANSWERED)
    elif compacted:
        parts.append(COMPACTION)
    others = [i for i in unanswered if i not in waiting_after_compaction]
    if len(others) == 1 and not parts:
        parts.append(UNANSWERED)
    elif others:
        n = len(others)
        parts.append(f"{'A message was' if n == 1 else f'{n} messages were'} left without a "
                     f"reply; {'it is' if n == 1 else 'they are'} saved, and Retry asks again.")
    return " ".join(parts) or None
