"""Files a person attaches: read into content blocks (files) and fitted to a provider's limits
(limits)."""
