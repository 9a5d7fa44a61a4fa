"""One secret scrubber on every output channel (docs/reliability.md, issue 41 item 5): a key is read in one
place (:func:`medr2.redact.read_key`: validated, registered) and every channel passes
:func:`medr2.redact.scrub_registered`: the console writer (:mod:`medr2.console`), manifests (``redact_tree``:
settings and recorded commands, ``--serve`` included), ``serve.log`` (the server's output is copied through
it), error texts (printed by the console writer).

- ``test_only_read_key_reads_the_environment``: an ``ast`` walk: no other module reads ``os.environ``/``getenv``
  for anything but the few named settings;
- ``test_key_given_as_the_variable_name_is_refused_unshown``: generated key-like values as ``--api-key-env`` /
  ``--judge-api-key-env`` of eval and score: exit 2, the value nowhere in the output;
- ``test_key_with_control_characters_is_refused_unshown``: generated keys with CR/LF/NUL...: exit 2, unshown;
- ``test_key_never_reaches_console_log_or_manifest``: a ``--serve`` server that prints its environment and its
  arguments (the key among them) and a ``--serve`` command holding the key: no 8-character fragment of the key
  in the console output, ``serve.log`` or ``manifest.json``.
"""

from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2.redact import MIN_FRAGMENT
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent
# modules that read the environment, and what for (keys only through medr2.redact.read_key)
ENV_READERS = {"redact.py": "read_key",
               "console.py": "COLUMNS and TERMINAL_WIDTH: the width of output to a pipe (never a key)",
               "vocab/__init__.py": "MEDR2_VOCAB: the user's vocabulary file (never a key)",
               "images.py": "MEDR2_PNG_LEVEL: the zlib level of a format-3 bench's PNGs, validated 0-9 (never a key)"}

key_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=24,
                   max_size=60)


def _env_reads(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                and ast.unparse(node.value) == "os":
            out.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return out


def test_only_read_key_reads_the_environment() -> None:
    found = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if _env_reads(p)}
    unexpected = found - set(ENV_READERS)
    assert not unexpected, f"environment read outside medr2.redact.read_key: {sorted(unexpected)}"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = tmp_path_factory.mktemp("secrets") / "bench"
    assert run_cli("build", "--source", "sample", "--cases", "2", "--out", str(b), "--workers", "1")[0] == 0
    return b


def _fragments(key: str) -> list[str]:
    return [key[i:i + MIN_FRAGMENT] for i in range(len(key) - MIN_FRAGMENT + 1)]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=key_text.filter(lambda k: "-" in k))
def test_key_given_as_the_variable_name_is_refused_unshown(bench: Path, key: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        code, shown = run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--base-url",
                              "http://127.0.0.1:9/v1", "--api-key-env", key, "--out", str(Path(d) / "r"))
        assert code == 2 and "--api-key-env" in shown, shown
        assert not any(f in shown for f in _fragments(key)), shown
        assert not (Path(d) / "r").exists()


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=key_text, bad=st.sampled_from(["\r\n", "\n", "\r", "\x7f", "\t", "\x1b[0m"]), where=st.integers(0, 2))
def test_key_with_control_characters_is_refused_unshown(bench: Path, key: str, bad: str, where: int) -> None:
    value = [key + bad, bad + key, key[:10] + bad + key[10:]][where]
    os.environ["MEDR2_TEST_KEY"] = value
    try:
        with tempfile.TemporaryDirectory() as d:
            code, shown = run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "openai:m", "--base-url",
                                  "http://127.0.0.1:9/v1", "--api-key-env", "MEDR2_TEST_KEY", "--out",
                                  str(Path(d) / "r"))
    finally:
        del os.environ["MEDR2_TEST_KEY"]
    assert code == 2 and "control character" in shown and "MEDR2_TEST_KEY" in shown, shown
    assert not any(f in shown for f in _fragments(key) if bad not in f), shown


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=key_text)
def test_key_never_reaches_console_log_or_manifest(bench: Path, key: str) -> None:
    os.environ["MEDR2_TEST_KEY"] = key
    try:
        with tempfile.TemporaryDirectory() as d:
            run = Path(d) / "run"
            server = (f"echo starting with --api-key {key} token={key}; echo \"env: $MEDR2_TEST_KEY\"; "
                      f"echo \"cut: $(printf %s \"$MEDR2_TEST_KEY\" | cut -c3-20)\"; exit 3")
            code, shown = run_cli("eval", "--split", "all",
                                  "--bench", str(bench), "--model", "openai:m", "--api-key-env",
                                  "MEDR2_TEST_KEY", "--out", str(run), "--serve", server, "--base-url",
                                  "http://127.0.0.1:9/v1", "--serve-timeout", "20", "--no-progress")
            files = {p.name: p.read_text("utf-8", "replace") for p in run.rglob("*") if p.is_file()
                     and p.suffix != ".sqlite"} if run.exists() else {}
    finally:
        del os.environ["MEDR2_TEST_KEY"]
    assert code in (1, 2) and "starting with" in shown, shown  # the failure and the log tail are shown
    assert "serve.log" in files and "starting with" in files["serve.log"]
    for channel, text in {"console": shown, **files}.items():
        leaked = [f for f in _fragments(key) if f in text]
        assert not leaked, (channel, leaked[:3], text[-1500:])
