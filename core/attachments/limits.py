"""Providers' limits on attached files: check, downscale, whole requests, refusals.

Limits per provider kind (:func:`limits_for`). Sources: Anthropic's vision and
PDF-support pages (5 MB of base64 per image, 8000 px a side, 2000 px a side
when a request holds more than 20 images, PDFs up to 32 MB and 100 pages,
32 MB per request); OpenAI's (20 MB per image, 50 MB per request, PDFs up to
32 MB and 100 pages); OpenAI-compatible servers: images allowed (the server
may still refuse them: :func:`explain_refusal`), PDFs not, since local
servers do not read ``file`` parts.

* :func:`check` raises :class:`~parley.core.attachments.files.AttachmentTooLarge`
  (``can_downscale`` for images) or :class:`~parley.core.attachments.files.MediaNotAccepted`;
* :func:`fit` downscales an image to the limits (aspect ratio kept,
  re-encoded with Pillow) — the answer to the "Downscale?" offer;
* :func:`check_turns` applies the limits to a whole request (a model switch
  or many images can put earlier files over a limit);
* :func:`explain_refusal` turns a server's "this model takes no images" into
  :class:`MediaRefused`, which names the model.

Synchronous and possibly slow (decoding, re-encoding): call off the GUI thread.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image, ImageOps

from parley.core.attachments.files import (
    IMAGE_TYPES,
    MAX_FILE_BYTES,
    MB,
    PDF,
    Attachment,
    AttachmentError,
    AttachmentTooLarge,
    MediaNotAccepted,
    image_size,
    open_image,
    pdf_pages,
    size_text,
)
from parley.core.content import DocumentBlock, ImageBlock, ToolResultBlock, Turn
from parley.core.errors import ParleyError
from parley.core.providers.capabilities import ProviderKind
from parley.core.providers.errors import ContextOverflow, ProviderError

#: The end of a message about the files of a request that was not sent.
AT_SEND = "Nothing was sent; your conversation is saved."
_SEND_ADVICE = "Pick a model of another provider, or start a new chat with a smaller copy. "
_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}
_EXT = {"PNG": ".png", "JPEG": ".jpg", "WEBP": ".webp"}


class MediaRefused(ParleyError):
    """A server refused the images (or PDFs) of a request: the model does not read them.

    Attributes:
        model_ref: the ``provider:model`` that refused.
        media: ``image`` or ``document``.
        cause: the provider error as the adapter reported it.
    """

    def __init__(self, model_ref: str, media: str, cause: ProviderError) -> None:
        what, one = ("images", "an image") if media == "image" else ("PDF files", "a PDF")
        super().__init__(
            f"The model '{model_ref}' does not take {what}: {cause.provider} refused the "
            f"request because this conversation holds {one}. Your message is saved. Pick a "
            "model that reads them (for images, a vision model), or start a new chat "
            "without the file."
        )
        self.model_ref = model_ref
        self.media = media
        self.cause = cause


# --- limits -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MediaLimits:
    """What one kind of provider accepts. Sizes in bytes, sides in pixels; None: no limit.

    Attributes:
        provider: how messages name it ("Anthropic").
        image_max_bytes: per image.
        image_bytes_base64: the image limit counts the base64 text, not the bytes.
        image_max_side_px: longest side of an image.
        many_images: above this many images in one request…
        many_images_side_px: …each side must be at most this.
        pdf: PDF documents are accepted.
        pdf_max_bytes / pdf_max_pages: per PDF.
        request_max_bytes: all images and PDFs of one request, as base64.
    """

    provider: str
    image_max_bytes: int | None
    image_bytes_base64: bool = False
    image_max_side_px: int | None = None
    many_images: int | None = None
    many_images_side_px: int | None = None
    pdf: bool = True
    pdf_max_bytes: int | None = None
    pdf_max_pages: int | None = None
    request_max_bytes: int | None = None

    def raw_image_max(self) -> int | None:
        """The largest image in bytes (before base64) the limit lets through."""
        if self.image_max_bytes is None or not self.image_bytes_base64:
            return self.image_max_bytes
        return self.image_max_bytes // 4 * 3


ANTHROPIC_LIMITS = MediaLimits(
    "Anthropic", 5 * MB, True, 8000, 20, 2000, True, 32 * MB, 100, request_max_bytes=32 * MB
)
OPENAI_LIMITS = MediaLimits(
    "OpenAI", 20 * MB, False, None, None, None, True, 32 * MB, 100, request_max_bytes=50 * MB
)
COMPATIBLE_LIMITS = MediaLimits("this OpenAI-compatible server", 20 * MB, pdf=False)
_LIMITS: dict[ProviderKind, MediaLimits] = {
    "anthropic": ANTHROPIC_LIMITS,
    "openai": OPENAI_LIMITS,
    "openai_compatible": COMPATIBLE_LIMITS,
}


def limits_for(kind: ProviderKind) -> MediaLimits:
    """Return the limits of a provider kind (``provider.caps.kind``, ``ProviderConfig.kind``)."""
    return _LIMITS[kind]


# --- one file ---------------------------------------------------------------


def _problems(att: Attachment, limits: MediaLimits, side_max: int | None) -> list[str]:
    out: list[str] = []
    raw_max = limits.raw_image_max()
    if raw_max is not None and len(att.data) > raw_max:
        sent = ""
        if limits.image_bytes_base64:
            sent = f" ({size_text(_b64_len(len(att.data)))} as sent)"
        out.append(
            f"{size_text(len(att.data))}{sent}; {limits.provider} takes images of up to "
            f"{size_text(limits.image_max_bytes or 0)}"
        )
    side = max(att.width or 0, att.height or 0)
    if side_max is not None and side > side_max:
        out.append(
            f"{att.width}×{att.height} px; {limits.provider} takes images of up to "
            f"{side_max} px a side"
        )
    return out


def _b64_len(n: int) -> int:
    return 4 * math.ceil(n / 3)


def check(att: Attachment, limits: MediaLimits, *, max_side_px: int | None = None) -> None:
    """Raise unless the provider takes the attachment as it is.

    Args:
        att: from :func:`read_file` / :func:`from_bytes`.
        limits: from :func:`limits_for`.
        max_side_px: a tighter side limit (e.g. ``limits.many_images_side_px``
            when the conversation already holds many images).

    Raises:
        AttachmentTooLarge: over a limit; ``can_downscale`` for images.
        MediaNotAccepted: a PDF for a provider that takes none.
    """
    if att.kind == "image":
        side = _min(limits.image_max_side_px, max_side_px)
        problems = _problems(att, limits, side)
        if problems:
            raise AttachmentTooLarge(att.name, "; ".join(problems), can_downscale=True, advice="")
    elif att.kind == "document":
        if not limits.pdf:
            raise MediaNotAccepted(att.name, limits.provider, "PDF files")
        _check_pdf(att.name, len(att.data), att.pages, limits)


def _check_pdf(name: str, size: int, pages: int | None, limits: MediaLimits) -> None:
    advice = "Split it, or attach only the pages you need. "
    if limits.pdf_max_bytes is not None and size > limits.pdf_max_bytes:
        most = size_text(limits.pdf_max_bytes)
        problem = f"{size_text(size)}; {limits.provider} reads PDFs of up to {most}"
        raise AttachmentTooLarge(name, problem, can_downscale=False, advice=advice)
    if limits.pdf_max_pages is not None and pages is not None and pages > limits.pdf_max_pages:
        problem = f"{pages} pages; {limits.provider} reads at most {limits.pdf_max_pages} pages"
        raise AttachmentTooLarge(name, problem, can_downscale=False, advice=advice)


def _min(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def fit(att: Attachment, limits: MediaLimits, *, max_side_px: int | None = None) -> Attachment:
    """Return the attachment, an image downscaled to the provider's limits if needed.

    The image is turned upright (EXIF orientation), scaled with its aspect
    ratio kept so its longest side is at most the side limit, and re-encoded
    in its own format (GIF as PNG; a PNG or WebP without transparency may
    become JPEG, quality 85, when that is what makes it small enough); while
    it is over the byte limit its side shrinks further. ``note`` says what
    changed. Non-images are returned after :func:`check`.

    Raises:
        AttachmentTooLarge: it cannot be made to fit (``can_downscale`` False),
            or a PDF over a limit. MediaNotAccepted: see :func:`check`.
    """
    side_max = _min(limits.image_max_side_px, max_side_px)
    if att.kind != "image" or not _problems(att, limits, side_max):
        check(att, limits, max_side_px=max_side_px)
        return att
    raw_max = limits.raw_image_max() or MAX_FILE_BYTES
    with open_image(att.data, att.name) as opened:
        opened.seek(0)
        if opened.format == "JPEG" and side_max:  # decode at 1/2…1/8 scale when that is enough
            opened.draft("RGB", (side_max, side_max))
        if opened.mode == "P":  # palette (GIF, some PNGs): keep transparency only if it has some
            opened = opened.convert("RGBA" if "transparency" in opened.info else "RGB")
        im = ImageOps.exif_transpose(opened)
    fmt = _FORMATS[att.media_type]
    formats = ["PNG" if fmt == "GIF" else fmt]
    if not _has_alpha(im) and formats[0] != "JPEG":
        formats.append("JPEG")
    side = min(max(im.size), side_max or max(im.size))
    last: dict[str, tuple[int, int]] = {}  # format -> (side, bytes) of its last try
    while side >= 16:
        scaled = im.copy()  # each try shrinks the last one: fast, and as sharp to the eye
        scaled.thumbnail((side, side), Image.Resampling.LANCZOS, reducing_gap=3.0)
        im = scaled
        smallest = 0
        for f in formats:
            if _predicted_over(last.get(f), side, raw_max):
                continue  # its last try was so large that this side cannot fit either
            out = _encode(scaled, f)
            if len(out) <= raw_max:
                return _resized(att, out, f, scaled.size, limits.provider)
            last[f] = (side, len(out))
            smallest = len(out) if not smallest else min(smallest, len(out))
        smallest = smallest or int(min(n * (side / s) ** 2 for s, n in last.values()))
        side = int(side * max(0.5, min(0.9, math.sqrt(raw_max / smallest))))
    problem = "; ".join(_problems(att, limits, side_max))
    raise AttachmentTooLarge(att.name, problem, can_downscale=False, advice="")


def _predicted_over(last: tuple[int, int] | None, side: int, raw_max: int) -> bool:
    """Whether an encoding that took ``last`` = (side px, bytes) will still be over
    ``raw_max`` bytes at ``side`` px (bytes shrink about with the area; 25% slack)."""
    if last is None:
        return False
    last_side, size = last
    return size * (side / last_side) ** 2 > raw_max * 1.25


def _has_alpha(im: Image.Image) -> bool:
    return im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info


def _encode(im: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        (im if im.mode in ("RGB", "L") else im.convert("RGB")).save(buf, "JPEG", quality=85)
    elif fmt == "WEBP":
        im.save(buf, "WEBP", quality=85)
    else:
        im.save(buf, "PNG")
    return buf.getvalue()


def _resized(att: Attachment, data: bytes, fmt: str, size: tuple[int, int],
             provider: str) -> Attachment:
    """``att`` as re-encoded: the stem kept, the ending of the new type, a true ``note``."""
    media_type = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}[fmt]
    name = att.name
    if media_type != att.media_type:
        name = str(Path(name).with_suffix(_EXT[fmt])) if Path(name).suffix else name + _EXT[fmt]
    return replace(att, name=name, media_type=media_type, data=data, width=size[0],
                   height=size[1], note=change_note(att, data, fmt, size, provider))


def change_note(att: Attachment, data: bytes, fmt: str, size: tuple[int, int],
                provider: str) -> str:
    """Say what :func:`fit` changed, only what did change.

    E.g. "re-encoded as JPEG to fit Anthropic's limits: 13.9 MB → 1.2 MB" (same
    pixels, another type), "downscaled from 9000×100 to 8000×89 px to fit
    Anthropic's limits: 41 KB → 37 KB"; both changes are joined with "and".

    Args:
        att: the image as read.
        data: its new bytes.
        fmt: their Pillow format ("PNG", "JPEG", "WEBP").
        size: their (width, height) in px.
        provider: whose limits it now fits ("Anthropic").
    """
    done: list[str] = []
    if size != (att.width, att.height):
        done.append(f"downscaled from {att.width}×{att.height} to {size[0]}×{size[1]} px")
    if _FORMATS.get(att.media_type) != fmt or not done:
        done.append(f"re-encoded as {fmt}")
    return (f"{' and '.join(done)} to fit {provider}'s limits: "
            f"{size_text(len(att.data))} → {size_text(len(data))}")


# --- whole requests ---------------------------------------------------------


def _media(turns: Sequence[Turn]) -> list[ImageBlock | DocumentBlock]:
    found: list[ImageBlock | DocumentBlock] = []
    for t in turns:
        for b in t.blocks:
            if isinstance(b, ImageBlock | DocumentBlock):
                found.append(b)
            elif isinstance(b, ToolResultBlock):
                found.extend(p for p in b.content if isinstance(p, ImageBlock | DocumentBlock))
    return found


def _as_attachment(block: ImageBlock | DocumentBlock, i: int) -> Attachment | None:
    try:
        data = base64.b64decode(block.data or "", validate=False)
    except (binascii.Error, ValueError):
        return None
    if isinstance(block, DocumentBlock):
        if block.media_type != PDF:
            return None
        return Attachment(block.name or f"PDF {i}", PDF, data, pages=pdf_pages(data))
    name = f"image {i} ({block.media_type})"
    if not data or block.media_type not in IMAGE_TYPES:
        return None
    try:
        w, h = image_size(data, name)
    except AttachmentError:
        return None  # a damaged image: the provider says so
    return Attachment(name, block.media_type, data, width=w, height=h)


def check_turns(turns: Sequence[Turn], limits: MediaLimits) -> None:
    """Check the images and PDFs of a request (hydrated turns) against a provider's limits.

    For a run about to send ``turns`` (after ``store.get_turns``): a model
    switch or a long session (many images) can put files over a limit they
    met when attached. Aborted turns count too (cheap and conservative).

    Raises:
        AttachmentTooLarge: an image or PDF over a limit, the many-images side
            limit, or all files together over ``request_max_bytes``; the
            message names the file.
        MediaNotAccepted: a PDF for a provider that takes none.
    """
    files = [(b, a) for i, b in enumerate(_media(turns), 1) if (a := _as_attachment(b, i))]
    images = sum(1 for _b, a in files if a.kind == "image")
    many = limits.many_images is not None and images > limits.many_images
    side = limits.many_images_side_px if many else None
    for _block, att in files:
        try:
            check(att, limits, max_side_px=side)
        except AttachmentTooLarge as exc:
            problem = exc.problem
            if many and side is not None and f"{side} px" in problem:
                problem += f" when a request holds more than {limits.many_images} images"
            raise AttachmentTooLarge(
                att.name, problem, can_downscale=False, advice=_SEND_ADVICE, outcome=AT_SEND
            ) from None
        except MediaNotAccepted as exc:
            raise MediaNotAccepted(att.name, exc.provider, exc.what, AT_SEND) from None
    total = sum(len(b.data or "") for b, _a in files)
    if limits.request_max_bytes is not None and total > limits.request_max_bytes:
        most = size_text(limits.request_max_bytes)
        problem = f"{size_text(total)} together; {limits.provider} takes up to {most} per request"
        raise AttachmentTooLarge(
            f"the {len(files)} files of this conversation", problem, can_downscale=False,
            advice="Start a new chat, or compact this one. ", outcome=AT_SEND,
        )  # fmt: skip


# --- refusals ---------------------------------------------------------------

_IMAGES_REFUSED = re.compile(
    r"image[ _]?(?:url|input|content|part)?s?\b[^.]{0,60}?\b(?:not supported|unsupported|"
    r"only supported|not allowed|not enabled|not available)"
    r"|(?:does not|doesn't|do not|don't|cannot|can't|unable to) (?:support|accept|handle|"
    r"process|read|see) (?:images?|vision|multi-?modal|pictures?)"
    r"|not (?:a )?(?:multi-?modal|vision)\b|unknown variant [`'\"]?image_url"
    r"|(?:vision|multi-?modal)[^.]{0,40}?(?:not supported|unsupported|disabled|not enabled)"
    r"|support(?:s|ing)? image input|mmproj|at most 0 image"
    r"|no (?:vision|image) (?:support|encoder)",
    re.IGNORECASE,
)
_FILES_REFUSED = re.compile(
    r"unknown variant [`'\"]?file\b|(?:file|pdf|document)[ _]?(?:input|content|part)?s?\b"
    r"[^.]{0,40}?(?:not supported|unsupported)|(?:does not|doesn't|cannot) (?:support|accept) "
    r"(?:files?|pdfs?|documents?)",
    re.IGNORECASE,
)


def explain_refusal(error: ParleyError, *, model_ref: str, turns: Sequence[Turn]) -> ParleyError:
    """Return :class:`MediaRefused` when ``error`` is a server refusing the request's files.

    For a failed run: OpenAI-compatible servers (and OpenAI's text-only
    models) answer a request holding images with a 400 (or 404/500) whose text
    says so in many wordings ("image input is not supported", "Model does not
    support images", "is not a multimodal model", "unknown variant
    `image_url`", …); the adapters map it to a generic ``BadRequest``.

    Args:
        error: what the run failed with.
        model_ref: the ``provider:model`` the request went to.
        turns: the turns the request was built from.

    Returns:
        A :class:`MediaRefused` naming the model, or ``error`` itself when the
        request held no image/PDF or the error is about something else.
    """
    if not isinstance(error, ProviderError) or isinstance(error, ContextOverflow):
        return error
    media = _media(turns)
    text = error.message
    if any(isinstance(b, ImageBlock) for b in media) and _IMAGES_REFUSED.search(text):
        return MediaRefused(model_ref, "image", error)
    if any(isinstance(b, DocumentBlock) for b in media) and _FILES_REFUSED.search(text):
        return MediaRefused(model_ref, "document", error)
    return error

