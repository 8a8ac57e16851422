"""The open chat's controllers: open/switch/send (controller), runs, edits and forks,
regeneration, attachments, and organizing chats into spaces."""
