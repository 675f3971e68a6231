"""transformer_tutorial: the package built, chapter by chapter, by the book "How Transformers Really Work".

Modules generated from notebooks say so in their first line; the others (data, checkpoints,
command-line tools) are ordinary hand-written modules.
"""

__version__ = "0.1.0"
