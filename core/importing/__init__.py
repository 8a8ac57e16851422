"""Files of chats brought into the store: :mod:`.files` (any file Parley reads: a whole
history from ChatGPT, Claude.ai or Open WebUI, Parley's Markdown export, or one
conversation; what File ▸ Import and ``parley --import`` run) and :mod:`.conversation`
(one conversation written as a new session). Reading the formats is
``parley.core.convert``'s; writing many chats in one transaction is the store's."""
