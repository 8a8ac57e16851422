"""The ``parley`` command line: its options, its help, and Parley's version."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def version() -> str:
    """Return Parley's version ("0.1.0"), from ``parley.core.appinfo`` (also right in a bundle)."""
    from parley.core.appinfo import VERSION

    return VERSION


_EPILOG = """\
Qt's own options (for example -style Fusion, -platform xcb) go after '--':
  parley --home ~/parley-test -- -style Fusion

environment:
  PARLEY_HOME          where Parley keeps its data (--home wins)
  PARLEY_DATABASE_URL  keep the chats in this PostgreSQL database (--database wins)
  PARLEY_THEME         light or dark, instead of the desktop's colour scheme
  PARLEY_KEYRING       file or keyring: where API keys are kept (default: the
                       OS keyring, or keys.json in the data folder when none answers)
  OPENAI_BASE_URL      another server than OpenAI's makes the built-in OpenAI
                       provider an OpenAI-compatible server (llama.cpp, Ollama …)
  PARLEY_OPENAI_URLS   more API roots that are OpenAI's own (a gateway in front
                       of OpenAI), space-separated
  PARLEY_ANTHROPIC_URLS  the same for Anthropic's API (errors then name Anthropic,
                       not "the server at …")
  ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL: as the SDKs read them
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``parley`` command line: one ``add_argument`` per option Parley accepts.

    An option that works without a window (``--version``, ``--self-test``,
    ``--migrate-only``, ``--import``, ``--copy-to``) is handled in :func:`main`
    before the display check.

    Returns:
        The parser; ``--help`` prints what it lists, an unknown option is an error
        (usage on stderr, exit status 2).
    """
    parser = argparse.ArgumentParser(
        prog="parley",
        description="Parley: a desktop chat app for large language models.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--home", metavar="DIR",
                        help="keep Parley's data in DIR (same as PARLEY_HOME)")
    parser.add_argument("--database", metavar="URL",
                        help="keep the chats in the PostgreSQL database at URL "
                             "(postgresql://user@host:5432/parley; same as PARLEY_DATABASE_URL) "
                             "instead of sessions.db")
    parser.add_argument("--copy-to", metavar="TARGET",
                        help="copy every chat (from sessions.db, or from --database) to TARGET: "
                             "an empty PostgreSQL database (postgresql://…) or a new sessions.db "
                             "file; verified, the original unchanged; print a summary and exit "
                             "(2: nothing copied, with the reason)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--self-test", action="store_true",
                        help="check this installation offscreen in a temporary folder and exit "
                             "(0 = all good)")
    parser.add_argument("--migrate-only", action="store_true",
                        help="upgrade an older sessions.db to the current format without "
                             "opening a window, print what was migrated and exit")
    parser.add_argument("--import", dest="import_file", metavar="FILE",
                        help="import FILE (a ChatGPT, Claude.ai or Open WebUI export, a Parley "
                             "export, Anthropic or OpenAI messages) without opening a window, "
                             "print a summary and exit (2: refused, with the reason)")
    return parser


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """Parse Parley's options; what follows ``--`` is left for Qt.

    Args:
        argv: the arguments after the program name.

    Returns:
        (options, Qt's arguments: those after the first ``--``).

    Raises:
        SystemExit: 2 after printing the usage and the reason for an unknown option
            or a missing value; 0 after ``--help``.
    """
    args = list(argv)
    qt_argv: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, qt_argv = args[:cut], args[cut + 1:]
    return build_parser().parse_args(args), qt_argv
