"""Keeping chats safe, and what Parley does when something went wrong.

:mod:`.previous_run` (a run that did not exit cleanly: its interrupted replies and
compactions), :mod:`.restart_notice` (what the person is told about it),
:mod:`.damaged_file` (a sessions.db that cannot be used: set aside, restore a backup,
salvage, start fresh; a copy of a file deleted while open), :mod:`.backup_schedule`
(when automatic backups are made) and :mod:`.upgrade_notice` (what the person is told
after the one-time v3 upgrade).
"""
