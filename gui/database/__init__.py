"""The chats' database as the window meets it: damaged (recovery_page; the messages queued
then go back to the box: queued_kept), refusing writes
(save_status), deleted or moved while open (rescue: a copy saved), changed by another
Parley on the same PostgreSQL database (elsewhere)."""
