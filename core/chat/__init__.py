"""One chat's runs: the run loop and its events, the streamed reply and its journal, edits,
regenerations, automatic titles and the queue of replies whose save failed."""
