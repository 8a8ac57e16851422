"""The fork-point line drawn under a fork's title, told apart from its siblings'.

A fork's point is "from “<the first words of the message it was forked at>”"
(``parley.gui.chat.organize.fork_point_text``); a sidebar row has room for some twenty
characters of it. Forks of one chat made at messages that start alike ("You said:
Message number 1 …", "You said: Message number 3 …") read the same once cut to that
room, so the row drops the start they share and shows where they differ:
"from “…1 topic1 alpha”", "from “…3 topic3 gamma”". The tooltip keeps the whole line.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The opening of a quoted fork point ("from “…”").
OPEN = "from “"
#: A shared start shorter than this is kept (too little to be worth dropping).
MIN_SHARED = 8


def shared_words(a: str, b: str) -> int:
    """How many characters of ``a`` and ``b``'s common start end at a word boundary
    (the space after a whole word), leaving text after it in both; 0 when none."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    cut = a.rfind(" ", 0, n)
    if cut < 0:
        return 0
    cut += 1  # after the space
    return cut if cut < len(a) and cut < len(b) else 0


def distinct_fork_labels(points: Sequence[str]) -> list[str]:
    """The row label of each fork point in ``points`` (the fork points of one chat's
    forks): a quoted point that starts like another (different) one loses the words they
    share, "from “…<where it differs>”"; others are kept as they are (so is the
    summary's "from the summary"). Same order and length as ``points``."""
    quoted = [p[len(OPEN):] if p.startswith(OPEN) else None for p in points]
    labels = []
    for i, text in enumerate(quoted):
        if text is None:
            labels.append(points[i])
            continue
        drop = max((shared_words(text, other) for other in quoted
                    if other is not None and other != text), default=0)
        labels.append(points[i] if drop < MIN_SHARED else f"{OPEN}…{text[drop:]}")
    return labels
