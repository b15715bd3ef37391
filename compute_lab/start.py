"""The ``compute-lab`` program's entry point: Ctrl-C at any moment is one line, exit 130.

The command line's modules import numpy and the engine, a few hundred milliseconds in which a
Ctrl-C would print a Python traceback; this module (and its package) import nothing but
:mod:`sys` and :mod:`signal`, and load the rest with Ctrl-C noted rather than raised (a
Ctrl-C raised inside numpy's C imports would come out as numpy's ImportError), then say
"interrupted" if it was pressed. Once the command has finished (or said it
was interrupted), Ctrl-C is ignored while the process exits: the last line stays the last.
Only Python's own start-up, before this module runs (about 30 ms), is beyond its reach.
"""

import sys

PROG = "compute-lab"


def main(argv=None):
    """Run :func:`compute_lab.cli.main`; return its exit status (130 for Ctrl-C)."""
    try:
        import signal

        # While the modules load, Ctrl-C is noted, not raised: raised inside a C extension's
        # own imports (numpy's), it would surface as that module's ImportError instead.
        pressed = []
        signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
        from .cli import main as run

        signal.signal(signal.SIGINT, signal.default_int_handler)
        if pressed:
            raise KeyboardInterrupt
        status = run(argv)
    except KeyboardInterrupt:  # while the modules load, or as the command returns
        _ignore_ctrl_c()
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    _ignore_ctrl_c()  # the outcome is told: nothing more to say
    return status


def _ignore_ctrl_c():
    while True:  # a Ctrl-C arriving as the handler is set is taken again
        try:
            import signal

            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return
        except KeyboardInterrupt:
            continue


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
