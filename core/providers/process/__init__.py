"""The provider process: the SDKs' requests, sent from a process of their own.

Importing a provider SDK costs seconds of CPU (``anthropic``: ~3,700 modules); in the
app's own process it would hold up the window's start-up and first message. So the
SDK clients live in one child process (:mod:`.worker`), started by the app as soon as
its window has painted (:func:`.spawn.start_early`) so the SDK is imported on another core
while the store opens; the adapters build each request in-process and send it there
(:class:`.client.RemoteSender`). :mod:`.protocol` is what crosses between the two.
"""
