"""``python -m medr2.cli ...`` is ``medr2 ...``."""

from medr2.cli import main

main()
