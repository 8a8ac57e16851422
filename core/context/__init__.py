"""What fits a model's context window: token estimates (:mod:`.tokens`), the input a
request held by the provider's own count (:mod:`.size`), the most text one message may
hold for any model (:mod:`.text_limits`), and the errors of a message or history too long
for its model (:mod:`.too_long`). Compaction (``parley.core.compaction``) acts on them."""
