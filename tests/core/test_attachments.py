"""Files → blocks: type by magic bytes, text files, refusals, provider limits, downscaling."""

from __future__ import annotations

import base64
import io
import os
import zlib

import pytest
from PIL import Image

from parley.core.attachments import limits as lim
from parley.core.attachments.files import (
    TEXT_MAX_BYTES,
    AttachmentTooLarge,
    EmptyFile,
    FileUnreadable,
    MediaNotAccepted,
    UnsupportedFile,
    from_bytes,
    parse_text_file,
    pdf_pages,
    read_file,
    size_text,
    sniff,
    text_file_block,
)
from parley.core.content import DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, Turn
from parley.core.providers.errors import BadRequest, ContextOverflow, ServerError


def image_bytes(size=(40, 30), fmt="PNG", color=(200, 30, 30), mode="RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, color).save(buf, fmt)
    return buf.getvalue()


def noise_png(side: int) -> bytes:
    """An incompressible PNG: about 3 bytes per pixel."""
    im = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def pdf_bytes(pages: int) -> bytes:
    frames = [Image.new("RGB", (8, 8), "white") for _ in range(pages)]
    buf = io.BytesIO()
    frames[0].save(buf, "PDF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def opened(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


# --- what a file is -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_images_are_recognised_by_their_bytes_not_their_name(fmt, media_type):
    att = from_bytes(image_bytes(fmt=fmt), "holiday.txt")  # a misleading extension
    assert (att.kind, att.media_type, att.width, att.height) == ("image", media_type, 40, 30)
    block = att.to_block()
    assert isinstance(block, ImageBlock) and block.media_type == media_type
    assert base64.b64decode(block.data) == att.data


def test_a_pdf_becomes_a_document_block_with_its_name_and_pages(tmp_path):
    path = tmp_path / "report.bin"
    path.write_bytes(pdf_bytes(3))
    att = read_file(path)
    assert (att.kind, att.media_type, att.pages) == ("document", "application/pdf", 3)
    block = att.to_block()
    assert isinstance(block, DocumentBlock) and block.name == "report.bin"
    assert base64.b64decode(block.data).startswith(b"%PDF-")


def test_page_count_reads_compressed_object_streams():
    pages = b"1 0 2 20 << /Type /Page /Parent 5 0 R >> << /Type/Page >> << /Type /Pages >>"
    packed = zlib.compress(pages)
    data = (
        b"%PDF-1.7\n4 0 obj\n<< /Type /Catalog >>\nendobj\n"
        b"6 0 obj\n<< /Type /ObjStm /N 3 /First 8 /Filter /FlateDecode /Length "
        + str(len(packed)).encode()
        + b" >>\nstream\n"
        + packed
        + b"\nendstream\nendobj\n%%EOF\n"
    )
    assert sniff(data) == "application/pdf"
    assert pdf_pages(data) == 2  # /Pages is not a page
    assert pdf_pages(b"%PDF-1.7\n%%EOF") is None


def test_a_code_file_becomes_text_with_its_name_and_language(tmp_path):
    path = tmp_path / "tool.py"
    path.write_text("def f():\n    return '```'\n", encoding="utf-8")
    block = read_file(path).to_block()
    assert isinstance(block, TextBlock)
    first, fence = block.text.split("\n")[:2]
    assert first == "File: tool.py"
    assert fence == "````python"  # longer than the backticks inside
    assert block.text.endswith("\n````")
    assert parse_text_file(block) == ("tool.py", "def f():\n    return '```'\n")


def test_text_without_a_final_newline_and_unknown_extension():
    block = text_file_block("notes.zzz-unknown", "just words")
    assert block.text == "File: notes.zzz-unknown\n```\njust words\n```"
    assert parse_text_file(block) == ("notes.zzz-unknown", "just words\n")
    assert parse_text_file(TextBlock("File: x\nnot fenced")) is None


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("café naïve\n".encode("cp1252"), "café naïve\n"),  # legacy 8-bit text
        ("grüße\n".encode("utf-16"), "grüße\n"),  # UTF-16 (the codec writes a BOM)
        ("\ufeffbom utf-8\n".encode(), "bom utf-8\n"),
    ],
)
def test_text_in_other_encodings_is_decoded(data, text):
    att = from_bytes(data, "legacy.csv")
    assert att.kind == "text" and att.text == text


@pytest.mark.parametrize(
    ("data", "what", "advice"),
    [
        (b"PK\x03\x04" + b"\x00" * 40, "a ZIP archive or an Office document", "PDF"),
        (b"II*\x00" + b"\x00" * 40, "a TIFF image", "Convert it to PNG or JPEG"),
        (b"\x7fELF\x02\x01\x01" + b"\x00" * 40, "a program", ""),
        (b"\x00\x01\x02\x03" * 64, "a binary file", ""),
        (bytes(range(1, 32)) * 20, "a binary file", ""),  # no NUL but control characters
    ],
)
def test_binary_files_are_refused_with_the_reason(data, what, advice):
    with pytest.raises(UnsupportedFile) as err:
        from_bytes(data, "thing.txt")
    assert err.value.what == what and err.value.name == "thing.txt"
    assert f"“thing.txt” can't be attached: it is {what}" in str(err.value)
    assert advice in str(err.value) and "Nothing was added to your message" in str(err.value)


def test_an_empty_file_is_refused_as_claude_and_chatgpt_do():
    with pytest.raises(EmptyFile) as err:
        from_bytes(b"", "empty.txt")
    assert str(err.value) == ("“empty.txt” can't be attached: it is empty (0 bytes), so there "
                              "is nothing in it to send. Nothing was added to your message.")
    with pytest.raises(EmptyFile, match="empty \\(only spaces or line breaks\\)"):
        from_bytes(b" \n\r\n\t", "blank.md")
    assert from_bytes(b"\n.\n", "dot.txt").text == "\n.\n"


def test_a_damaged_image_is_refused():
    with pytest.raises(UnsupportedFile, match="damaged or incomplete image"):
        from_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10, "broken.png")


def test_text_over_the_limit_is_refused():
    with pytest.raises(AttachmentTooLarge) as err:
        from_bytes(b"a" * (TEXT_MAX_BYTES + 1), "huge.log")
    assert not err.value.can_downscale and "huge.log" in str(err.value)


def test_unreadable_paths_are_reported(tmp_path):
    with pytest.raises(FileUnreadable, match="missing.png"):
        read_file(tmp_path / "missing.png")
    with pytest.raises(FileUnreadable, match="folder"):
        read_file(tmp_path)


# --- provider limits --------------------------------------------------------------------


def test_an_image_over_anthropics_5_mb_is_refused_then_made_to_fit():
    data = noise_png(1250)  # ~4.7 MB of bytes: ~6.2 MB as base64, over 5 MB
    att = from_bytes(data, "noise.png")
    anthropic = lim.limits_for("anthropic")
    with pytest.raises(AttachmentTooLarge) as err:
        lim.check(att, anthropic)
    assert err.value.can_downscale and "Anthropic takes images of up to 5.0 MB" in str(err.value)
    lim.check(att, lim.limits_for("openai"))  # 20 MB there: taken as it is

    small = lim.fit(att, anthropic)
    lim.check(small, anthropic)
    assert len(base64.b64encode(small.data)) <= 5 * 1024 * 1024
    # Noise as JPEG is ~1 MB: the same pixels fit re-encoded (the note said "downscaled
    # from 1250×1250 to 1250×1250 px" until trial 16 found it).
    assert (small.width, small.height, small.name) == (1250, 1250, "noise.jpg")
    assert small.note.startswith("re-encoded as JPEG to fit Anthropic's limits: 4.5 MB → ")
    with opened(small.data) as im:
        assert im.size == (small.width, small.height)
        assert im.format == small.media_type.split("/")[1].upper()
    assert small.name.startswith("noise.")


def test_an_image_only_re_encoded_to_fit_is_not_said_to_be_downscaled():
    # Trial 16: a 3000×3000 PNG over 5 MB was "downscaled from 3000×3000 to 3000×3000 px"
    # and quietly renamed .jpg. Its pixels fit as a JPEG: the note says that, and the sizes.
    side = 1500
    raw = bytes(b & 15 for b in os.urandom(side * side * 3))  # faint noise: JPEG takes it
    buf = io.BytesIO()
    Image.frombytes("RGB", (side, side), raw).save(buf, "PNG", compress_level=1)
    att = from_bytes(buf.getvalue(), "bigpic.png")
    with pytest.raises(AttachmentTooLarge):
        lim.check(att, lim.ANTHROPIC_LIMITS)
    fitted = lim.fit(att, lim.ANTHROPIC_LIMITS)
    assert (fitted.width, fitted.height, fitted.media_type) == (side, side, "image/jpeg")
    assert fitted.name == "bigpic.jpg"  # the stem kept, the ending of what it now is
    assert "downscaled" not in fitted.note
    assert fitted.note == (f"re-encoded as JPEG to fit Anthropic's limits: "
                           f"{size_text(len(att.data))} → {size_text(len(fitted.data))}")


def test_a_too_wide_image_is_downscaled_keeping_its_aspect_ratio():
    att = from_bytes(image_bytes((9000, 300)), "panorama.png")
    with pytest.raises(AttachmentTooLarge, match="9000×300 px; Anthropic takes images of up"):
        lim.check(att, lim.ANTHROPIC_LIMITS)
    lim.check(att, lim.OPENAI_LIMITS)
    fitted = lim.fit(att, lim.ANTHROPIC_LIMITS)
    assert (fitted.width, fitted.height, fitted.media_type) == (8000, 267, "image/png")
    assert fitted.name == "panorama.png"
    with opened(fitted.data) as im:
        assert im.size == (8000, 267)
    assert lim.fit(fitted, lim.ANTHROPIC_LIMITS) is fitted  # already fits: unchanged


def test_a_jpeg_is_turned_upright_by_its_exif_orientation_when_downscaled():
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: shown rotated 90° clockwise
    buf = io.BytesIO()
    Image.new("RGB", (8400, 120), "blue").save(buf, "JPEG", exif=exif)
    att = from_bytes(buf.getvalue(), "phone.jpg")
    fitted = lim.fit(att, lim.ANTHROPIC_LIMITS)
    assert (fitted.width, fitted.height, fitted.media_type) == (114, 8000, "image/jpeg")
    with opened(fitted.data) as im:
        assert im.size == (114, 8000)


def test_a_gif_is_downscaled_to_png_and_transparency_is_kept():
    gif = from_bytes(image_bytes((3000, 100), fmt="GIF"), "anim.gif")
    fitted = lim.fit(gif, lim.ANTHROPIC_LIMITS, max_side_px=2000)
    assert (fitted.media_type, fitted.name, fitted.width) == ("image/png", "anim.png", 2000)
    clear = from_bytes(image_bytes((2500, 50), mode="RGBA", color=(0, 0, 0, 0)), "a.png")
    small = lim.fit(clear, lim.ANTHROPIC_LIMITS, max_side_px=2000)
    with opened(small.data) as im:
        assert im.mode == "RGBA" and im.getpixel((0, 0))[3] == 0


def test_pdf_limits_and_providers_that_take_no_pdf():
    long = from_bytes(pdf_bytes(101), "long.pdf")
    with pytest.raises(AttachmentTooLarge, match="101 pages; Anthropic reads at most 100") as err:
        lim.check(long, lim.ANTHROPIC_LIMITS)
    assert not err.value.can_downscale
    with pytest.raises(AttachmentTooLarge):
        lim.fit(long, lim.OPENAI_LIMITS)
    short = from_bytes(pdf_bytes(2), "short.pdf")
    lim.check(short, lim.OPENAI_LIMITS)
    with pytest.raises(MediaNotAccepted, match="takes no PDF files"):
        lim.check(short, lim.limits_for("openai_compatible"))


def test_a_file_read_checked_and_fitted_becomes_its_block(tmp_path):
    # The path the composer takes (parley.gui.composer.attach_work): read, then the kind's limits.
    wide = from_bytes(image_bytes((8100, 20)), "Pasted image")
    limits = lim.limits_for("anthropic")
    with pytest.raises(AttachmentTooLarge):
        lim.check(wide, limits)
    fitted = lim.fit(wide, limits)
    lim.check(fitted, limits)
    block = fitted.to_block()
    assert isinstance(block, ImageBlock)
    with opened(base64.b64decode(block.data)) as im:
        assert im.size[0] == 8000
    path = tmp_path / "a.md"
    path.write_text("# Title\n")
    doc = read_file(path)
    lim.check(doc, lim.limits_for("openai_compatible"))
    text = doc.to_block()
    assert isinstance(text, TextBlock) and text.text.startswith("File: a.md\n```markdown\n")


# --- whole requests -----------------------------------------------------------------------


def _turn_with_images(n: int, size: tuple[int, int]) -> Turn:
    b64 = base64.b64encode(image_bytes(size)).decode()
    return Turn("user", [ImageBlock("image/png", b64) for _ in range(n)])


def test_many_images_in_one_request_must_be_smaller_for_anthropic():
    lim.check_turns([_turn_with_images(20, (2100, 10))], lim.ANTHROPIC_LIMITS)
    many = [_turn_with_images(20, (2100, 10)), _turn_with_images(1, (10, 10))]
    with pytest.raises(AttachmentTooLarge) as err:
        lim.check_turns(many, lim.ANTHROPIC_LIMITS)
    text = str(err.value)
    assert "2000 px a side when a request holds more than 20 images" in text
    assert "Nothing was sent; your conversation is saved." in text
    lim.check_turns(many, lim.OPENAI_LIMITS)


def test_check_turns_sees_pdfs_and_tool_result_images():
    pdf = base64.b64encode(pdf_bytes(1)).decode()
    turns = [Turn("user", [DocumentBlock("application/pdf", pdf, "a.pdf")])]
    with pytest.raises(MediaNotAccepted, match="“a.pdf” can't be sent to this OpenAI-compatible"):
        lim.check_turns(turns, lim.COMPATIBLE_LIMITS)
    wide = base64.b64encode(image_bytes((8001, 5))).decode()
    turns = [Turn("user", [ToolResultBlock("t1", (ImageBlock("image/png", wide),))])]
    with pytest.raises(AttachmentTooLarge, match="8001×5 px"):
        lim.check_turns(turns, lim.ANTHROPIC_LIMITS)


# --- servers that refuse images ------------------------------------------------------------

IMAGE_TURNS = [_turn_with_images(1, (4, 4))]


@pytest.mark.parametrize(
    "error",
    [
        BadRequest("Local", "image input is not supported - hint: provide the mmproj"),
        BadRequest("LM Studio", "Model does not support images. Please use a model that does."),
        BadRequest("vLLM", "llama-3-8b is not a multimodal model"),
        BadRequest("DeepSeek", "unknown variant `image_url`, expected `text`"),
        BadRequest("OpenAI", "Invalid content type. image_url is only supported by certain models"),
        ServerError("Ollama", 500, "this model doesn't support images"),
        BadRequest("OpenRouter", "No endpoints found that support image input", status=404),
    ],
)
def test_a_refusal_of_images_names_the_model(error):
    out = lim.explain_refusal(error, model_ref="local:llama3", turns=IMAGE_TURNS)
    assert isinstance(out, lim.MediaRefused) and out.cause is error
    assert out.model_ref == "local:llama3" and out.media == "image"
    assert "The model 'local:llama3' does not take images" in str(out)
    assert "Your message is saved" in str(out)


def test_other_errors_are_left_as_they_are():
    refusal = BadRequest("Local", "image input is not supported")
    text_only = [Turn("user", [TextBlock("hi")])]
    assert lim.explain_refusal(refusal, model_ref="m:x", turns=text_only) is refusal
    unrelated = BadRequest("Local", "max_tokens must be positive")
    assert lim.explain_refusal(unrelated, model_ref="m:x", turns=IMAGE_TURNS) is unrelated
    overflow = ContextOverflow("Local")
    assert lim.explain_refusal(overflow, model_ref="m:x", turns=IMAGE_TURNS) is overflow
    pdf = [Turn("user", [DocumentBlock("application/pdf", "JVBERi0=", "a.pdf")])]
    files = BadRequest("Local", "unknown variant `file`, expected one of `text`, `image_url`")
    out = lim.explain_refusal(files, model_ref="local:m", turns=pdf)
    assert isinstance(out, lim.MediaRefused) and "does not take PDF files" in str(out)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_an_image_cut_short_is_refused_though_its_header_is_whole(fmt):
    # A noisy picture, so that its pixel data is most of the file; cut at 60 %.
    im = Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3))
    buf = io.BytesIO()
    im.save(buf, fmt)
    whole = buf.getvalue()
    cut = whole[: len(whole) * 6 // 10]
    if fmt != "WEBP":  # Pillow reads a WebP's frames when it opens it
        assert opened(cut).size == (64, 64)  # the header alone says nothing is wrong

    with pytest.raises(UnsupportedFile) as err:
        from_bytes(cut, f"photo.{fmt.lower()}")

    message = str(err.value)
    name = f"photo.{fmt.lower()}"
    assert f"“{name}” can't be attached: it is a damaged or incomplete image" in message
    assert "Save or export it again" in message and "Nothing was added to your message" in message
    assert from_bytes(whole, "photo").width == 64  # the whole file is taken


def test_a_png_with_a_damaged_pixel_chunk_is_refused():
    data = bytearray(image_bytes(size=(32, 32)))
    idat = data.index(b"IDAT")
    data[idat + 8] ^= 0xFF  # one byte of the compressed pixels: its checksum no longer matches
    with pytest.raises(UnsupportedFile, match="damaged or incomplete image"):
        from_bytes(bytes(data), "flipped.png")
