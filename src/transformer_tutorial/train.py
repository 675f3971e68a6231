"""``python -m transformer_tutorial.train``: the translator's training command.

The command lives in :mod:`transformer_tutorial.translator.train`; this module only runs it.
"""

from transformer_tutorial.translator.train import main

if __name__ == "__main__":
    raise SystemExit(main())
