import signal
import sys


def _quit_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM before the command line is loaded: nothing was written, quit quietly."""
    sys.exit(128 + signum)


signal.signal(signal.SIGINT, _quit_while_loading)
signal.signal(signal.SIGTERM, _quit_while_loading)

from sm5.cli import main  # noqa: E402  (the handlers above cover this import)

signal.signal(signal.SIGINT, signal.default_int_handler)
raise SystemExit(main())
