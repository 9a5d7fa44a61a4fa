"""The self-contained ``index.html``: Jinja2 with autoescape on; CSS, script and data inlined; images as
data URIs; a Content-Security-Policy that allows only the report's own inline script and style (by hash)
and ``data:`` images, so nothing is fetched and no injected script could run."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from markupsafe import Markup

import medr2
from medr2.reporting.browser import script_safe_json
from medr2.reporting.fmt import (  # bidi controls shown as markers (one neutraliser for every output)
    Scopes,
    visible_bidi,
)
from medr2.reporting.leaderboard import Leaderboard
from medr2.reporting.plots import Plot
from medr2.reporting.subgroups import HARM_KEYS, SubgroupView

TEMPLATE = "index.html.jinja"
SCRIPTS = ("cards.js", "browser.js")  # the shared card renderer (also `medr2 view`'s), then the report's browser


@dataclass(frozen=True)
class RunSummary:
    label: str
    model: str
    modes: list[str]
    n_scores: int
    bench: str
    data: str
    toolkit: str
    completeness: str = "unknown"  # "complete", "incomplete: 10 of 60 planned answers" (metrics.json "plan")
    short: str = ""  # the name the leaderboard shows (``label`` where empty)
    # how answers were read where not by the reader alone (``--structured-answers``, a ``--judge``); "": reader only
    answers: str = ""
    judge: str = ""


# the runs table's provenance columns: header -> RunSummary field; one that every run shares is said once, above it;
# one no run has (every value "") is left out
PROVENANCE = {"Bench": "bench", "Data (real / synthetic per field)": "data", "Toolkit": "toolkit",
              "Answers": "answers", "Judge": "judge"}


def provenance_split(runs: list[RunSummary]) -> tuple[list[tuple[str, str]], list[str]]:
    """(header, value) of the provenance every run shares (said once), and the headers that differ (a column)."""
    shared, per_run = [], []
    for header, name in PROVENANCE.items():
        values = {getattr(r, name) for r in runs}
        if values == {""}:
            continue
        if len(values) == 1:
            shared.append((header, values.pop()))
        else:
            per_run.append(header)
    return shared, per_run


def _asset(name: str) -> str:
    return resources.files("medr2.reporting").joinpath("templates", name).read_text("utf-8")


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(js: str, css: str) -> str:
    return (f"default-src 'none'; img-src data:; style-src {_sha256_source(css)}; "
            f"script-src {_sha256_source(js)}; base-uri 'none'; form-action 'none'")


def _finalize(value: Any) -> Any:
    return visible_bidi(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def template_environment(package: str = "medr2.reporting") -> Any:
    """The Jinja2 environment of the report's pages (autoescape on, undefined names refused, bidi controls shown
    as markers): the report's templates, and ``package``'s first where another page set (``medr2 view``) adds its
    own."""
    from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined

    folders = [str(resources.files(p).joinpath("templates")) for p in dict.fromkeys((package, "medr2.reporting"))]
    return Environment(loader=ChoiceLoader([FileSystemLoader(f) for f in folders]), autoescape=True,
                       undefined=StrictUndefined, keep_trailing_newline=True, finalize=_finalize)


def render_index(*, title: str, runs: list[RunSummary], leaderboard: Leaderboard, plots: list[Plot],
                 browser: dict[str, Any], warnings: list[str], short_names: dict[str, str] | None = None,
                 subgroups: SubgroupView | None = None) -> str:
    """The page. Every table is opened by the template's one ``table`` macro, which captions it with the
    split(s) scored and the bootstrap's unit of the runs it shows (:class:`medr2.reporting.fmt.Scopes`, by the names
    the tables show: the leaderboard's scopes under the short names)."""
    env = template_environment()
    js, css = "\n".join(_asset(name) for name in SCRIPTS), _asset("report.css")
    for asset in (js, css):
        if "</" in asset:
            raise ValueError("an inlined asset must not contain '</'")
    plot_views = [{"name": p.name, "title": p.title, "caption": p.caption, "wide": p.wide,
                   "layout": json.dumps(p.layout, separators=(",", ":"), sort_keys=True),
                   "uri": "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")} for p in plots]
    note = (f"Showing {browser['shown']:,} of {browser['total']:,} scored rows "
            f"(limit {browser['limits']['max_items']:,}, chosen by a stable hash of the item id, so every run "
            f"shows the same items). Responses longer than {browser['limits']['response_chars']:,} characters "
            "are cut; the full text is in each run's store.sqlite.")
    if browser.get("missing_items"):
        note += f" {browser['missing_items']:,} scored rows refer to items not in the bench and are not shown."
    shared, per_run = provenance_split(runs)
    names = short_names or {}
    scopes = Scopes({names.get(label, label): text for label, text in leaderboard.scopes.by_run.items()})
    return env.get_template(TEMPLATE).render(scopes=scopes,
        title=title, version=medr2.__version__, csp=content_security_policy(js, css), runs=runs,
        leaderboard=leaderboard, short_names=short_names or {}, plots=plot_views, browser_note=note, warnings=warnings,
        headline=leaderboard.headline(), best={c.key: leaderboard.best(c.key) for c in leaderboard.columns},
        shared=shared, per_run=per_run, provenance=PROVENANCE,
        css=Markup(css), js=Markup(js), data_json=Markup(visible_bidi(script_safe_json(browser))),
        subgroups=subgroups if subgroups is not None and not subgroups.empty else None, harm_keys=HARM_KEYS,
    )
