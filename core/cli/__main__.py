"""``python -m core.cli``: the command line (:func:`core.cli.entry.command`)."""

from core.cli.entry import command

command()
