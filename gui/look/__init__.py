"""How Parley looks: colour schemes, palette, style sheet and icons (appearance), colours
derived from the palette (theme), and the person's theme, text size and zoom (view_prefs)."""
