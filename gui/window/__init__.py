"""The main window's parts, each a mixin of ``parley.gui.main_window.MainWindow``: what
they share (base), the widgets and their sizes (layout), which page shows (pages), errors
told to the person (problems) and quitting (shutdown); and the keys taken back when one of
its dialogs closes (focus_back). The window's start-up is in ``parley.gui.startup.phases``,
its commands in ``parley.gui.commands.window_commands``."""
