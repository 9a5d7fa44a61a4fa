"""Print, as Markdown, ten generated premise texts of each premise kind (T9 framed premises, T10 premises through
context) from a bench built with those variants (docs/variants.md pastes this output).

    medr2 build --source sample --out /tmp/medr2-premises --seed 0 --cases 40 --variants T9,T10 --workers 1
    .venv/bin/python scripts/premise_examples.py /tmp/medr2-premises > /tmp/premises.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from medr2.bench import load_bench
from medr2.perturb.premises import FRAMED_PREMISES, INDIRECT_PREMISES
from medr2.records import Item

PER_KIND = 10


def shown_text(it: Item) -> str:
    """What the variant adds to its parent: the framed question, or the injected context turn."""
    if it.perturbation["kind"] == "earlier_turn" and it.context:
        turn = it.context[-1]
        return f"[earlier turn] Q: {turn.question} A: {turn.answer}"
    return it.question


def main(bench_dir: str) -> None:
    bench = load_bench(Path(bench_dir))
    candidates: dict[str, list[tuple[int, str]]] = {}
    for it in bench.items:
        if it.variant.split("-")[0] in ("T9", "T10"):
            candidates.setdefault(it.variant, []).append((int(it.perturbation["template"]), shown_text(it)))
    seen: dict[str, list[str]] = {}
    for variant, cands in candidates.items():
        texts: list[str] = []
        used: set[int] = set()
        for first_pass in (True, False):  # one text per template first, then the next ones in bench order
            for template, text in cands:
                if len(texts) < PER_KIND and text not in texts and (not first_pass or template not in used):
                    texts.append(text)
                    used.add(template)
        seen[variant] = texts
    for code, kinds in (("T9", FRAMED_PREMISES), ("T10", INDIRECT_PREMISES)):
        for kind in kinds:
            variant = f"{code}-{kind}"
            print(f"**`{variant}`** ({len(seen.get(variant, []))} generated texts)\n")
            for i, text in enumerate(seen.get(variant, []), 1):
                print(f"{i}. {text.replace(chr(10), ' ')}")
            print()


if __name__ == "__main__":
    main(sys.argv[1])
