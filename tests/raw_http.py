"""One raw HTTP request to a test server, with every header as given (the ``Host`` header too, so a test can send
a foreign one): the view's and the human reader's server tests share it."""

from __future__ import annotations

import http.client


def raw_request(host: str, port: int, method: str, path: str, *, headers: dict[str, str] | None = None,
                body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, headers lower-cased, body) of ``method path`` sent to ``host:port``."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent = {"Host": f"{host}:{port}", **(headers or {})}
        if body is not None:
            sent["Content-Length"] = str(len(body))
        for k, v in sent.items():
            conn.putheader(k, v)
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()
