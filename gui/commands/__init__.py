"""The window's commands: declared actions, the keys in force, the command palette,
the shortcut help, and the window methods the actions run."""
