"""Conversation formats: Anthropic Messages, OpenAI Chat Completions, Parley's own.

``to_*`` functions turn Parley turns into a provider's message list (use
``parley.core.wire.to_messages`` first when building a request); ``from_*`` functions
read one back; :func:`auto_detect_and_convert` imports whatever it is given.
Every converter takes ``lost``: a list to which it appends one sentence per
kind of thing the target format could not hold.
"""

from parley.core.convert.anthropic import from_anthropic, to_anthropic
from parley.core.convert.detect import ImportedConversation, auto_detect_and_convert
from parley.core.convert.errors import NotAConversation
from parley.core.convert.openai import from_openai, to_openai
from parley.core.convert.parley import ParleyDocument, export_parley, import_parley

__all__ = [
    "ImportedConversation",
    "NotAConversation",
    "ParleyDocument",
    "auto_detect_and_convert",
    "export_parley",
    "from_anthropic",
    "from_openai",
    "import_parley",
    "to_anthropic",
    "to_openai",
]
