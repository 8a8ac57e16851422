"""The packaged app's entry point (PyInstaller runs this script as ``__main__``).

``parley --self-test`` runs :func:`parley.gui.startup.self_test.run_self_test` (checks the
bundle offscreen and exits 0 when it works); anything else is
:func:`parley.gui.app.main`, the same function as the ``parley`` gui-script.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the self-test or the app; return the exit status."""
    if "--self-test" in sys.argv[1:]:
        from parley.gui.startup.self_test import run_self_test

        return run_self_test()
    from parley.gui.app import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
