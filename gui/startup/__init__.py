"""From launch to the chats shown.

Before there is a window (``parley.gui.app`` runs them in order): Python's own import
back (import_hook), the command line, the log file, the crash handler, whether a window
can be shown (display), one Parley per data folder (single_instance), the start-up
probe, ``parley --self-test``. Then the window's start: its first paint and the event
loop made after it (first_paint), the store, the chats and the providers opened after
it, one state machine (phases; its stages and the one queue of what the person did
meanwhile: state; its steps: opening, notices, command_key), first-run set-up
(setup_panel), text typed while starting kept (typed_at_start) and the question on
quitting then (quit_waiting).
"""
