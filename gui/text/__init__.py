"""Text as the transcript and the message box show it: markdown to Qt rich text (markdown),
streamed replies cut into blocks (markdown_blocks), huge messages and long lines (long_text)."""
