"""The sessions.db file: what only the SQLite store needs, because it is a file.

:mod:`.engine` (the SQLAlchemy engine and its connection set-up), :mod:`.opening`
(check, upgrade or create, then connect), :mod:`.maintenance` (idle-time upkeep),
:mod:`.faults` (the file deleted, moved or replaced while open), :mod:`.overwrite`
(the file written in place by another program), :mod:`.damage` (a damaged file noticed
while running), :mod:`.backups` (automatic backups), :mod:`.salvage` (what is left of a
damaged file, merged with the newest backup). The repositories the two backends share
live one level up, in :mod:`parley.core.store`.
"""
