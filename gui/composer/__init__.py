"""The message box and what feeds it: drafts, the attachment tray and its work,
and input typed before the first chat is shown."""
