"""Parley's command-line modes that run without a window (``parley --import``,
``--migrate-only``, ``--copy-to``): each reads its arguments, does one job, prints what it
did and returns an exit code; ``gui/app.py`` hands the command line to them."""
