"""``python -m zero ...`` is the ``zero`` command."""
from .cli.main import main

raise SystemExit(main())
