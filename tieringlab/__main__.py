"""`python -m tieringlab ...` is the `tieringlab` command."""

from tieringlab.cli import main

raise SystemExit(main())
