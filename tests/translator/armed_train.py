"""The training command in a process a test has armed: ``python armed_train.py ARGS`` (or the
same under torchrun), with the Python statement that arms it in ``$ARM``, e.g.
``crashes.kill_before_step(11)`` or ``instruments.use_plain_sgd()``; ``$SIGINT`` says how the
process treats SIGINT: ``default`` (KeyboardInterrupt, as from a terminal) or ``ignored`` (as a
script's background job inherits it)."""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crashes  # noqa: E402,F401 (named by $ARM)
import instruments  # noqa: E402,F401 (named by $ARM)

from transformer_tutorial.translator.train import main  # noqa: E402

handler = {"default": signal.default_int_handler, "ignored": signal.SIG_IGN}
signal.signal(signal.SIGINT, handler[os.environ.get("SIGINT", "default")])
exec(os.environ["ARM"])  # a test's own statement, never user input
sys.exit(main())
