"""Draw the course's system diagram as a self-contained SVG (no fonts or scripts fetched).

    python scripts/draw_system.py            # writes book/images/system.svg
    python scripts/draw_system.py --check    # exit 1 if the committed file is stale

The diagram shows the whole path of a request: the front door that sorts work by
deadline, the interactive lane (bounded, fair per tenant), the batch lane (a
durable job store that can overflow to a provider's batch API), the scheduler
that hands out slots, and the engine whose decode slots form the pool.  Each box
names the chapters that study it.  Standard library only.
"""

from __future__ import annotations

import argparse
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "images" / "system.svg"

WIDTH, HEIGHT = 980, 470
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
COLORS = {
    "door": ("#f3f1ea", "#5f5e55"),
    "interactive": ("#dbe8f6", "#2f5f98"),
    "batch": ("#fbe3c4", "#b0420c"),
    "scheduler": ("#d9ecd0", "#2b6a24"),
    "engine": ("#f4f4f4", "#444444"),
    "pool": ("#fff7e0", "#8a6d1a"),
    "external": ("#eee6f6", "#5b3d8a"),
}


def box(x, y, w, h, kind, title, lines=(), chapters="", dashed=False):
    fill, stroke = COLORS[kind]
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    parts = [
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="10" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="2"{dash}/>',
        f'<text x="{x + w / 2}" y="{y + 24}" text-anchor="middle" font-weight="bold" '
        f'font-size="15" fill="#141413">{escape(title)}</text>',
    ]
    for i, line in enumerate(lines):
        parts.append(
            f'<text x="{x + w / 2}" y="{y + 45 + 17 * i}" text-anchor="middle" '
            f'font-size="12.5" fill="#333333">{escape(line)}</text>'
        )
    if chapters:
        parts.append(
            f'<text x="{x + w - 8}" y="{y + h - 8}" text-anchor="end" font-size="11" '
            f'font-style="italic" fill="{stroke}">{escape(chapters)}</text>'
        )
    return "\n".join(parts)


def arrow(points, label="", label_at=None, dashed=False, color="#333333", anchor="middle"):
    path = " ".join(f"{'M' if i == 0 else 'L'} {x} {y}" for i, (x, y) in enumerate(points))
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    parts = [
        f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash} '
        f'marker-end="url(#head)"/>'
    ]
    if label:
        lx, ly = label_at
        parts.append(
            f'<text x="{lx}" y="{ly}" text-anchor="{anchor}" font-size="12" '
            f'fill="{color}">{escape(label)}</text>'
        )
    return "\n".join(parts)


def slot_grid(x, y, cols=8, rows=4, size=11, gap=3):
    """A few rows of small squares standing for decode slots: some busy, some free."""
    colors = {"i": "#2f5f98", "b": "#e08a3c", "f": "#ffffff"}
    pattern = "iiibbbff" "iibbbbbf" "iiiibbbf" "iibbbbff"
    cells = []
    for r in range(rows):
        for c in range(cols):
            kind = pattern[(r * cols + c) % len(pattern)]
            cells.append(
                f'<rect x="{x + c * (size + gap)}" y="{y + r * (size + gap)}" width="{size}" '
                f'height="{size}" fill="{colors[kind]}" stroke="#8a6d1a" stroke-width="0.8"/>'
            )
    return "\n".join(cells)


def svg() -> str:
    body = [
        box(20, 180, 150, 100, "door", "Front door", ["sorts each request", "by its deadline"], "ch. 6"),
        box(240, 50, 230, 110, "interactive", "Interactive lane",
            ["deadline: seconds", "bounded queue", "fair share per tenant"], "ch. 6"),
        box(240, 270, 230, 110, "batch", "Batch lane",
            ["deadline: hours", "durable job store", "chunked, retried jobs"], "ch. 6"),
        box(240, 405, 230, 52, "external", "Provider batch API", ["results within a day"], dashed=True),
        box(540, 150, 170, 170, "scheduler", "Scheduler",
            ["users first", "batch only while", "R slots stay free", "evicts batch as", "a last resort"],
            "ch. 2-5"),
        box(760, 40, 200, 400, "engine", "Engine (one replica)",
            ["prefill and decode steps", "continuous batching", "KV cache memory"], "ch. 7-10"),
        box(780, 170, 160, 150, "pool", "Slot pool", [], "ch. 1"),
        slot_grid(805, 210),
        '<text x="860" y="282" text-anchor="middle" font-size="11" fill="#333333">'
        "blue: user, orange: batch</text>",
        '<text x="860" y="296" text-anchor="middle" font-size="11" fill="#333333">white: free</text>',
        '<text x="860" y="355" text-anchor="middle" font-size="12.5" fill="#333333">'
        "token budget per step</text>",
        '<text x="860" y="372" text-anchor="middle" font-size="12.5" fill="#333333">'
        "chunked prefill</text>",
        '<text x="860" y="389" text-anchor="middle" font-size="12.5" fill="#333333">'
        "eviction: swap or recompute</text>",
        arrow([(170, 215), (205, 215), (205, 105), (236, 105)], "seconds", (200, 140), anchor="end"),
        arrow([(170, 245), (205, 245), (205, 325), (236, 325)], "hours", (200, 300), anchor="end"),
        arrow([(470, 105), (505, 105), (505, 200), (536, 200)]),
        arrow([(470, 325), (505, 325), (505, 270), (536, 270)]),
        arrow([(710, 235), (776, 235)], "start", (743, 226)),
        arrow([(625, 320), (625, 350), (474, 350)], "evicted job goes back", (560, 366), dashed=True),
        arrow([(355, 380), (355, 401)], "overflow", (363, 396), anchor="start"),
        arrow([(300, 50), (300, 28), (95, 28), (95, 176)], "full: 429, try later", (200, 22), dashed=True),
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" font-family="{FONT}" role="img" '
        'aria-labelledby="title desc">\n'
        "<title id=\"title\">The system the course studies</title>\n"
        '<desc id="desc">Requests enter a front door that sorts them by deadline. Requests '
        "due in seconds join a bounded interactive lane that is fair per tenant and answers "
        "429 when full; work due in hours joins a batch lane backed by a durable job store, "
        "which can overflow to a provider batch API. A scheduler gives users slots first, "
        "starts batch only while R slots stay free, and evicts batch only as a last resort. "
        "Slots belong to the slot pool inside the engine, which runs prefill and decode "
        "steps.</desc>\n"
        "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
        "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" "
        "fill=\"#333333\"/></marker></defs>\n"
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed SVG is stale")
    args = parser.parse_args(argv)
    text = svg()
    if args.check:
        if not OUT.is_file() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/draw_system.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
