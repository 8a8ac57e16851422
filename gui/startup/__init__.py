"""From launch to the chats shown: one Parley per data folder (single_instance), the log
file, first-run set-up (setup_panel), text typed while starting (typed_at_start) and the
question on quitting then (quit_waiting), and ``parley --self-test``."""
