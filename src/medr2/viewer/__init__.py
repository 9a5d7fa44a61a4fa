"""``medr2 view`` (docs/view.md): a local web app over scored runs, downstream of the report whose leaderboard
table, item rows and cards it shows. Entry point: :func:`medr2.viewer.server.open_view`."""

from __future__ import annotations
