"""``medr2 view`` (docs/view.md): a local web app over scored runs, downstream of the report whose leaderboard
table, item rows and cards it shows. Entry point: :func:`medr2.view.server.open_view`."""

from __future__ import annotations

from medr2._callable_module import make_callable

make_callable(__name__)  # ``medr2.view(...)`` is the API verb even once this package is imported
