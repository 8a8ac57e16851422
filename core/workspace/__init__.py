"""One running Parley's open parts, opened and closed in one place (Anki's ``Collection``).

A :class:`Workspace` holds what a running Parley opens: the store (sessions.db, or a
PostgreSQL database), the provider hub, the tools (memory, skills, session search and
the MCP servers of ``mcp.json``), the chat runner, the cache idle-timer and the automatic
backups. The window, the command-line modes and the tests all open them through it.

It opens in two steps, so the window can list the chats before the providers load:

======================  ====================================================================
stage                   what is open
======================  ====================================================================
``Stage.NEW``           nothing: making a ``Workspace`` reads and creates nothing
``Stage.STORE``         :meth:`Workspace.open_store`: the store (chats, settings, app state)
``Stage.READY``         :meth:`Workspace.open_providers`: also the hub (settings, keys), the
                        tools and MCP (servers start when first used), the runner, the cache
                        idle-timer, the automatic backups (a file only)
``Stage.CLOSED``        :meth:`Workspace.close`: everything stopped, newest first
======================  ====================================================================

A failed open leaves the stage as it was (nothing half-open: what the failed step made
is closed again), so it may be tried again. :meth:`Workspace.close` is safe from any
stage, waits for an open under way, and is idempotent; a closed workspace is not opened
again (make a new one). ``async with Workspace(...) as ws`` closes it on the way out.

Nothing here imports Qt. The store, the providers and the rest are imported when opened,
in a worker thread (``asyncio.to_thread``): importing them takes long enough to hold an
event loop still (the window's), and making a ``Workspace`` costs nothing before the
window's first paint.
"""

from parley.core.workspace.parts import RUNS_STOP_S, NotOpen, Options, Stage
from parley.core.workspace.workspace import Workspace

__all__ = ["RUNS_STOP_S", "NotOpen", "Options", "Stage", "Workspace"]
