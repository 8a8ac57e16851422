"""What format sessions.db is in, and the one-time upgrade of a legacy v3 file to v4
(backup, steps, turn conversion), apart from the everyday store."""
