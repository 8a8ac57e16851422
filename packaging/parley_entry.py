"""The packaged app's entry point (PyInstaller runs this script as ``__main__``).

``parley --self-test`` runs :func:`parley.gui.startup.self_test.run_self_test` (checks the
bundle offscreen and exits 0 when it works); ``parley --provider-worker`` is the provider
process (:mod:`parley.core.providers.process.worker`, started by the app itself); anything
else is
:func:`parley.gui.app.main`, the same function as the ``parley`` gui-script.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the self-test, the provider process or the app; return the exit status."""
    if sys.argv[1:2] == ["--provider-worker"]:
        from parley.core.providers.process.worker import main as worker_main

        return worker_main(sys.argv[2:])
    if "--self-test" in sys.argv[1:]:
        from parley.gui.startup.self_test import run_self_test

        return run_self_test()
    from parley.gui.app import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
