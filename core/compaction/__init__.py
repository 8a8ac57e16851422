"""Compaction: older turns summarized by a model, the summary standing in for them;
its plan, prompt, checks, settings, backoff, request-side transforms and the cache idle-timer."""
