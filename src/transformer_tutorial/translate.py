"""``python -m transformer_tutorial.translate``: translate with a trained checkpoint.

The command lives in :mod:`transformer_tutorial.translator.translate`; this module only runs it.
"""

from transformer_tutorial.translator.translate import main

if __name__ == "__main__":
    raise SystemExit(main())
