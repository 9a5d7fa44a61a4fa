"""``python -m medr2 ...`` is ``medr2 ...``."""

from medr2.cli import main

main()
