"""The installed hook command: ``'<python>' -I -S '<this file>' HOST``, run by the agent host
through ``sh -c`` with the hook payload on stdin (written by ``domestique install``).

``-S`` skips ``site`` and ``-I`` ignores ``PYTHON*`` variables, the user's site folder and the
working directory (the project, which the agent controls), so the interpreter starts faster than
a bare ``python -c pass``. This script only puts its own installation's folder on ``sys.path``
(after the standard library) and hands over to :mod:`domestique.hooks.wire`, which asks the hook
daemon and, when the daemon cannot answer, loads the whole package and decides in-process. It is
this short because a script is compiled from source on every call; the module it imports is read
from its byte-code cache, which ``-I`` lets Python write on first use (``PYTHONDONTWRITEBYTECODE``
is one of the variables it ignores). Once the answer is written and flushed it ends with
``os._exit``: tearing the interpreter down (every module the in-process decision loaded) only
delays the exit the host waits for, and every audit record is committed by then.
"""

if __name__ == "__main__":
    import os
    import sys

    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from domestique.hooks.wire import main

    code = main(sys.argv[1:])
    if sys.argv[1:2] != ["--daemon"]:
        # The answer is written and flushed (and a daemon started): the host waits for this
        # exit, so skip tearing down the interpreter (a committed audit record is durable).
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    raise SystemExit(code)
