"""The main window's start-up: the store, the chats, then the providers, after the first paint.

:class:`Startup` is the window's start-up part (``window.startup``), one state machine in
the manner of Anki's ``MainWindowState``: it is in one ``Stage`` at a time
(``parley.gui.startup.state``: painting → opening → chats shown → ready, or set-up,
recovery, failed) and moves with :meth:`Startup.move_to`.

The window is shown first, with only cheap widgets (``parley.gui.window.layout``), and
the message box focused: what a person types from the first paint on is kept.
:meth:`Startup.start` then opens the store and the providers off the GUI thread and fills
the window, never undoing what the person did meanwhile: until the chats are shown it goes
into one queue (``parley.gui.startup.state.PendingQueue``: a message sent is kept for the
chat it was written in; Ctrl+N opens a new chat, and what was typed before it stays with
the last chat), done once they are. A damaged file shows the recovery page
(``parley.gui.database.recovery_page``); a store that cannot be opened is told in the
window, what was typed kept (``parley.gui.startup.typed_at_start``).

This module holds the state machine: the stages, the moves between them, the queue of
what the person does meanwhile, and the order of the steps. The steps themselves are in
``parley.gui.startup.opening`` (the workspace, the chat's controller, the providers),
``parley.gui.startup.notices`` (the upgrade and the previous run told) and
``parley.gui.startup.command_key`` (a command key pressed before the window is whole).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from parley.core.errors import ParleyError
from parley.core.tasks import report_bug
from parley.gui.startup import notices, opening
from parley.gui.startup.command_key import CommandKeyFirst
from parley.gui.startup.first_paint import PAINT_FALLBACK_MS, when_painted
from parley.gui.startup.kept_note import KeptNote
from parley.gui.startup.state import LOADED, ONE_WAITING, QUEUEING, PendingQueue, Stage, replay
from parley.gui.window.layout import import_window_parts

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from parley.gui.startup.typed_at_start import TypedAtStart
    from parley.gui.window.base import WindowBase

log = logging.getLogger(__name__)
#: ``0`` leaves out the whole-file check made once the chats show
#: (``AsyncStore.check_whole``); for tests of damage a read meets first.
WHOLE_CHECK_ENV = "PARLEY_WHOLE_CHECK"


class Startup:
    """The window's start-up (see the module docstring).

    Args:
        window: the main window it fills (its workspace, store and chat are set on it).

    Attributes:
        stage: where start-up is (:meth:`move_to` changes it).
        queue: what the person did before the chats were shown, done once they are.
        typed: where that text is kept when the chats cannot be opened (set by
            :meth:`start`; None before, and after a recovery kept it).
        painted: True once the window's first paint was flushed.
    """

    def __init__(self, window: WindowBase) -> None:
        self.window = window
        self.stage = Stage.PAINTING
        self.queue = PendingQueue()
        self.typed: TypedAtStart | None = None
        self.painted = False
        self._store_opened: asyncio.Event | None = None
        self._to_build: list[Callable[[], None]] = []
        #: "Your message is kept": shown from Enter until the transcript shows the message.
        self.kept_note = KeptNote(window, window)

    def move_to(self, stage: Stage) -> None:
        """Move to ``stage``; what a stage begins with is done by its ``_<stage>_state``
        method, when it has one (Anki's ``moveToState``)."""
        old, self.stage = self.stage, stage
        log.debug("start-up: %s -> %s", old.value, stage.value)
        enter = getattr(self, f"_{stage.name.lower()}_state", None)
        if enter is not None:
            enter(old)

    @property
    def ready(self) -> bool:
        """True once messages can be sent (the providers are loaded, or set-up shows)."""
        return self.stage in LOADED

    @property
    def queueing(self) -> bool:
        """True while what the person does waits in :attr:`queue` (no chat shown yet)."""
        return self.stage in QUEUEING

    @property
    def recovering(self) -> bool:
        """True while sessions.db is damaged or missing: the recovery page shows."""
        return self.stage is Stage.RECOVERY

    @property
    def store_opened(self) -> asyncio.Event:
        """Set once the store is open (a search begun while starting waits for it).
        Made when first asked for: asyncio is imported after the first paint."""
        if self._store_opened is None:
            import asyncio

            self._store_opened = asyncio.Event()
        return self._store_opened

    def build_later(self, rest: list[Callable[[], None]]) -> None:
        """The window's parts its first paint does not need (``WindowLayout.rest``): made
        once it is painted, a part at a time (:meth:`start`), or at once when a command
        key is pressed before (its shortcut then runs)."""
        self._to_build = list(rest)
        CommandKeyFirst(self.window.composer, self.finish_build)

    def finish_build(self) -> None:
        """Make at once what is left of the window (:meth:`build_later`); safe to call
        again."""
        while self._to_build:
            self._to_build.pop(0)()

    @property
    def built(self) -> bool:
        """True once the whole window is made."""
        return not self._to_build

    def first_paint(self) -> None:
        """The window's first paint was flushed (``MainWindow``)."""
        self.painted = True
        self.window.probe("first-paint")

    def start_after_first_paint(self) -> None:
        """Schedule :meth:`start` right after the first paint (at once when it was before;
        fallback: :data:`PAINT_FALLBACK_MS`)."""
        def go() -> None:
            if self.stage is Stage.PAINTING:
                self.move_to(Stage.OPENING)
                self.window.tasks.spawn(self.start(), name="window-start")

        if self.painted:
            QTimer.singleShot(0, go)
            return
        when_painted(self.window, go)
        QTimer.singleShot(PAINT_FALLBACK_MS, go)

    async def start(self) -> None:
        """Open the store and show the chats, then load the providers.

        Opening (store only): the last open chat's title in the header as soon as the
        store is open (``opening.show_last_title``: the chat's code is imported after),
        then the sidebar and that chat appear (a new chat instead when Ctrl+N was pressed
        meanwhile; what was typed stays in the message box). Chats shown: what the person
        did meanwhile is done (the queue: messages saved in the chats they were sent in,
        drafts kept, chat commands run); if the previous run did not exit cleanly and
        left a reply cut off, a notice says so (the transcript offers Resume). Ready: the
        providers' settings and keys are loaded (set-up is shown if none is usable) and
        messages can be sent; then the providers in use have the provider process make
        their SDK clients (its SDK imports take seconds on a cold start, on the other
        core), the first chat's first; a message waits for its provider's
        ("connecting…"). Imports run in a worker thread so the window keeps painting. A
        damaged file (``DatabaseCorrupt``) or one that is not a chats file shows the
        recovery page (:meth:`_not_opened`); another store that cannot be opened
        (``NewerFormat`` …) is reported in the window.
        """
        import asyncio

        w = self.window
        after_recovery = self.stage is Stage.RECOVERY  # opened again: a fresh start
        self.move_to(Stage.OPENING)
        if self._to_build:  # the rest of the window: its modules off the GUI thread, then
            await asyncio.to_thread(import_window_parts)  # made a part at a time
        while self._to_build:
            self._to_build.pop(0)()
            await asyncio.sleep(0)  # keys typed meanwhile are taken in between
        w.sidebar.show_status("Loading chats…")
        await asyncio.to_thread(opening.import_store)
        from parley.core import paths
        from parley.core.store.errors import DamagedWhileOpen, DatabaseCorrupt, NotAParleyFile

        path = paths.db_path(w.home)
        if self.typed is None:
            from parley.gui.startup.typed_at_start import TypedAtStart

            self.typed = TypedAtStart(paths.data_dir(w.home))
        workspace = opening.new_workspace(w, self.background_error)
        # A database URL (--database, PARLEY_DATABASE_URL) puts the chats on PostgreSQL.
        try:  # a mistyped address: InvalidDatabaseUrl, shown in the window
            if workspace.database_url() is None and await self._missing_file(path):
                return
            w.store = store = await workspace.open_store(
                lambda done, total: notices.upgrade_progress(w, done, total),
                read_only_ok=True)  # a file that cannot be written: its chats, read-only
        except (DatabaseCorrupt, NotAParleyFile) as exc:
            await self._not_opened(path, exc)
            return
        except ParleyError as exc:  # the window's page says it: no dialog saying it again
            log.info("the chats could not be opened: %s", exc.message)
            self._cannot_open(exc)
            return
        self.store_opened.set()
        notices.note_upgrade(w)
        if after_recovery:
            w.problems.reopened()
            w.sidebar.show()
        hub_task: asyncio.Future[Any] | None = None
        from parley.gui.database.queued_kept import kept_chat, put_back

        kept = kept_chat(self.typed) if self.typed is not None else None
        try:
            # The last chat named in the header as soon as the store can say which it is;
            # its code (the controller, the transcript: ~0.4 s, more cold) imported after.
            await opening.show_last_title(w, self, kept)
            await asyncio.to_thread(opening.import_chat)
            await notices.note_previous_run(w)
            await w.widgets.restore_geometry()
            w.widgets.install_transcript()
            self.kept_note.transcript_made()  # a message sent meanwhile: still said kept
            from parley.gui.look.view_prefs import ViewPrefs

            # theme, text size, zoom (Settings → Appearance)
            assert w.transcript is not None  # installed just now
            w.view_prefs = ViewPrefs(store, w.transcript, w.statusBar(), w.tasks)
            await w.view_prefs.load()
            w.chat = chat = opening.open_chat(w, self)
            await chat.load_sidebar()
            w.sidebar.show_status("")
            w.probe("sessions-listed")
            self.sources_changed()
            # The providers load while the first chat is read and shown.
            hub_task = asyncio.ensure_future(opening.open_providers(w))
            await chat.show_first(kept=kept)  # the chat a kept text was written in, if any
            if store.read_only is not None:  # its chats shown; why nothing can be saved
                chat.save_status.opened_read_only(store.read_only)
            if store.on_server:  # other Parleys' changes show without a restart
                from parley.gui.database.elsewhere import Elsewhere

                w.elsewhere = Elsewhere(store, chat, w.tasks)
                await w.elsewhere.start()
            notices.tell_previous_run(w)  # once a chat shows: told before, a slow start hid it
            self.move_to(Stage.CHATS_SHOWN)  # from now on keys act on the chat shown
            await replay(chat, w.composer, self.queue)
            self.kept_note.hide()  # the message is in the transcript now
            if self.typed is not None:  # an earlier run's text typed at start, back in the box
                await put_back(w, store, self.typed, chat, kept)
        except (DatabaseCorrupt, DamagedWhileOpen):
            if hub_task is not None:
                hub_task.cancel()
                await asyncio.gather(hub_task, return_exceptions=True)
            await w.problems.damaged_at_start(path)
            return
        except BaseException:
            if hub_task is not None:
                hub_task.cancel()
            raise
        hub = await hub_task
        await opening.take_providers(w, chat, hub)
        self.move_to(Stage.READY if hub.is_configured else Stage.SET_UP)
        if w.env.get(WHOLE_CHECK_ENV, "1") != "0":  # the chats show: check the whole file
            w.tasks.spawn(store.check_whole(), name="check-whole-file")

    def _ready_state(self, old: Stage) -> None:
        """Messages can be sent: said to the probe, the palette lists the commands, the
        notices kept for now are shown."""
        w = self.window
        if old in LOADED:  # set-up done (or shown again): nothing more to begin
            return
        w.probe("ready")
        self.sources_changed()
        notices.show_kept(w)

    #: Set-up shows (no provider set up yet): ready as well, reading chats is possible.
    _set_up_state = _ready_state

    def queue_message(self) -> bool:
        """Enter before the first chat is shown: keep the message (the composer's text)
        for the chat it was written in: the one start-up shows, or the new chat Ctrl+N
        made. One waiting message per chat; another stays in the composer, and the
        status bar says why. Always consumes the key."""
        w = self.window
        text = w.composer.text()
        if not text.strip():
            return True
        if not self.queue.send(text):
            w.statusBar().showMessage(ONE_WAITING, 8_000)
            return True
        w.composer.clear()
        self.kept_note.show()  # until the transcript shows it
        return True

    def take_back_message(self) -> bool:
        """Esc before the first chat is shown: the message sent meanwhile in the chat in
        view comes back into the box (what was typed since stays after it). False when no
        message waits there."""
        w = self.window
        text = self.queue.take_back()
        if text is None:
            return False
        box = w.composer.text()
        w.composer.set_text(f"{text}\n\n{box}" if box.strip() else text)
        if not self.queue.messages():  # none waits: nothing to say kept
            self.kept_note.hide()
        return True

    def sources_changed(self) -> None:
        """The chats are listed, or the commands can run: a palette opened while
        starting lists them (``CommandPalette.sources_changed``)."""
        palette = getattr(self.window, "command_palette", None)
        if palette is not None:
            palette.sources_changed()

    async def _not_opened(self, path: Any, exc: ParleyError) -> None:
        """sessions.db could not be opened as a chats file: the page that fits what it is.

        Damaged (``DatabaseCorrupt``) → the recovery page; not starting as SQLite does
        (``NotSQLiteFile``), another program's SQLite database (``OtherSQLiteFile``) or
        emptied (``ChatsFileEmptied``) → that page in its own words
        (``recovery_page.not_chats``: a backup or a new file, the file kept aside); a
        folder (``ChatsFileIsFolder``) → why, and "Try again" once the person moved it
        (nothing is offered that would touch it); another file Parley cannot use → the
        recovery page when Parley backed the chats up, else why.
        """
        from parley.core.store.errors import ChatsFileIsFolder, DatabaseCorrupt
        from parley.core.store.sqlite.backups import automatic_backups, folder_of
        from parley.gui.database.recovery_page import AT_START, not_chats, show_recovery, words

        said = not_chats(path, exc)  # not SQLite, another program's, emptied: not "damaged"
        if isinstance(exc, ChatsFileIsFolder) or not (
                said or isinstance(exc, DatabaseCorrupt)
                or automatic_backups(folder_of(path))):
            self._cannot_open(exc)
            return
        self.window.sidebar.show_status("")
        self.move_to(Stage.RECOVERY)
        heading, message = said or (None, words(path, AT_START))
        await show_recovery(self.window, path, message, not_chats=said is not None,
                            heading=heading)

    def _cannot_open(self, exc: ParleyError) -> None:
        """The store could not be opened: why, where what was typed is kept, "Try again"."""
        from parley.gui.startup.typed_at_start import show_start_problem

        self.move_to(Stage.FAILED)
        show_start_problem(self.window, exc)
        self.window.sidebar.show_status("")

    async def _missing_file(self, path: Any) -> bool:
        """sessions.db is missing but backups or rescue copies of it exist: the page that
        says so is shown (``parley.gui.database.missing_page``) and True returned."""
        from parley.gui.database.missing_page import show_if_missing

        if not await show_if_missing(self.window, path):
            return False
        self.move_to(Stage.RECOVERY)
        return True

    def background_error(self, exc: BaseException) -> None:
        """An error in background work (the cache timer): told, or a bug reported."""
        if isinstance(exc, ParleyError):
            self.window.show_problem(exc)
        else:
            report_bug(exc)


