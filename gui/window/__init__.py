"""The main window's parts, each owned by ``parley.gui.main_window.MainWindow`` and given
what it uses: its state, declared once (state), the widgets and their sizes (layout),
which page shows (pages), errors told to the person (problems), quitting (shutdown), and
the keys taken back when one of its dialogs closes (focus_back). Its commands are in
``parley.gui.commands.window_commands``; its start-up, still a mixin over ``base``, in
``parley.gui.startup.phases``."""
