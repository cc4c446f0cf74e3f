"""``python -m core.cli``: the command line (:func:`core.cli.entry.main`)."""

from core.cli.entry import main

raise SystemExit(main())
