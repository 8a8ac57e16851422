"""The chats' database as the window meets it: damaged (recovery_page), refusing writes
(save_status), deleted or moved while open (rescue: a copy saved), changed by another
Parley on the same PostgreSQL database (elsewhere)."""
