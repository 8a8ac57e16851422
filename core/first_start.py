"""Whether this start is certainly Parley's first with its data folder, told before the
window's first paint.

The window (``parley.gui.window.pages``) then paints the welcome of first-run set-up at
once instead of a chat-looking window that the set-up page would replace seconds later,
once the store and the providers are open. Only the standard library and the data
folder's listing are read: no store, no SQLAlchemy, no keyring.

Certain means nothing could make the chats or a provider appear: no sessions.db (nor a
backup, a rescue copy, a database chosen in Settings → Storage, a key file … — anything
in the folder beyond what a start makes before its store opens counts against it), no
database named by ``--database`` / ``PARLEY_DATABASE_URL``, and no provider usable from
the environment (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``). When it
is not certain, start-up goes on as before (the chat page first).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from parley.core.paths import DATABASE_URL_ENV, LOGS_NAME, PLACE_NAME
from parley.core.private import LOCK_NAME
from parley.core.providers.capabilities import ENV_API_KEY, ENV_BASE_URL

#: What a start makes in the data folder before its store opens: the log folder, and
#: the files beginning with the one-Parley lock's and the window's place's names (Qt
#: writes each beside a lock or temporary file of its own).
MADE_BEFORE_THE_STORE = (LOGS_NAME,)
MADE_BEFORE_THE_STORE_PREFIXES = (LOCK_NAME, PLACE_NAME)

#: Environment variables that make a provider usable without any set-up (the
#: ``openai`` base URL alone makes an OpenAI-compatible server one).
PROVIDER_ENV = (*ENV_API_KEY.values(), ENV_BASE_URL["openai"])


def surely_first_start(folder: Path, environ: Mapping[str, str]) -> bool:
    """True when this start is certainly the first with ``folder`` (module docstring).

    Args:
        folder: the data folder (it may not exist yet).
        environ: the window's environment (its provider keys, ``PARLEY_DATABASE_URL``);
            ``PARLEY_DATABASE_URL`` is looked for in the process's environment as well,
            as the store does.

    Returns:
        False whenever it cannot be told (the folder cannot be listed): never raises.
    """
    if environ.get(DATABASE_URL_ENV) or os.environ.get(DATABASE_URL_ENV):
        return False
    if any(environ.get(var, "").strip() for var in PROVIDER_ENV):
        return False
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return all(name in MADE_BEFORE_THE_STORE or name.startswith(MADE_BEFORE_THE_STORE_PREFIXES)
               for name in names)
