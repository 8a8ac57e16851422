"""What the transcript's tooltips say: where a link goes, why it does not, who wrote a reply."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from parley.gui.text.markdown import BLOCKED_PREFIX, COPY_PREFIX, IMAGE_PREFIX, is_safe_url
from parley.gui.transcript.layout import Hit, indexed_target
from parley.gui.transcript.pieces import MEDIA_PREFIX
from parley.gui.transcript.rows import Node
from parley.gui.transcript.specs import (
    BRANCH_NEXT_HREF,
    BRANCH_PREV_HREF,
    CONTINUE_HREF,
    REGENERATE_HREF,
    REGENERATE_SEVERAL_HREF,
    REGENERATE_WITH_HREF,
    RESUME_HREF,
)


def tooltip_text(node: Node, hit: Hit | None,
                 model_name: Callable[[str], str] | None = None) -> str:
    """What the tooltip says over a row: where a link goes, why it does not, who wrote it.

    Args:
        node: the row under the pointer.
        hit: what of the row is under it (None: the row's background).
        model_name: the display name of a ``provider:model`` ref, as the rest of the
            window says it (the model menu's ``label_of``); None: the ref's model id.
    """
    if hit is not None and hit.href:
        href, piece = hit.href, hit.placed.piece
        if href.startswith(COPY_PREFIX):
            return "Copy this code to the clipboard"
        if href == RESUME_HREF:
            return "Send the request again to finish this reply"
        if href == CONTINUE_HREF:
            return "The model stopped at its output limit: ask it to go on"
        if href == REGENERATE_HREF:
            return "Another answer to your last message (Ctrl+Shift+R);\n" \
                "this one is kept (‹ › under the answer)"
        if href == REGENERATE_SEVERAL_HREF:
            return "2–4 models answer again, side by side (Ctrl+Shift+A); this one is kept"
        if href == REGENERATE_WITH_HREF:
            return "Pick a model for another answer; this one is kept (‹ › under the answer)"
        if href == BRANCH_PREV_HREF:
            return "Show the previous branch at this message (Alt+Left)"
        if href == BRANCH_NEXT_HREF:
            return "Show the next branch at this message (Alt+Right)"
        if href.startswith(MEDIA_PREFIX):
            return "Click to open full size"
        if href.startswith(BLOCKED_PREFIX):
            url = indexed_target(piece, href)
            return f"Not opened: {url}\nOnly http, https and mailto links open."
        if href.startswith(IMAGE_PREFIX):
            url = indexed_target(piece, href)
            if is_safe_url(url):
                return f"Image not loaded: {url}\nClick to open it in your browser."
            return f"Image not loaded: {url}"
        return href
    if hit is not None and hit.fold_key is not None:
        return "Click or press Space to unfold" if "▸" in hit.placed.piece.doc.toPlainText() \
            else "Click or press Space to fold"
    turn = node.turn
    if turn.role == "assistant" and turn.model and node.kind == "turn":
        when = datetime.fromtimestamp(turn.created_at / 1000).strftime("%Y-%m-%d %H:%M")
        name = model_name(turn.model) if model_name is not None \
            else turn.model.split(":", 1)[-1]
        text = f"{name} · {when}"
        if turn.usage is not None:
            u = turn.usage
            text += f"\n{u.total_input_tokens:,} tokens in · {u.output_tokens:,} out"
        return text
    return ""
