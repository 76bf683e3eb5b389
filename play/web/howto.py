"""The page's "How to play" panel: a game's own rules text (``rules.md`` next to its engine)
as HTML, and, where the engine ranks hands (``HANDS``, ``hand_rank``, ``hand_value``, as
421's does), the ranking from the top with each hand's worth.

The markdown is rendered here, a small subset and nothing else: headings, paragraphs,
lists, pipe tables, ``**bold**``, ``*italic*`` and ```code```.  Every character of the
text is escaped first, so no tag, attribute or link of the file reaches the page.
"""

from __future__ import annotations

import html
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Optional

import games

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_CODE = re.compile(r"`([^`]+)`")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RULE_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def inline(text: str) -> str:
    """One line of markdown as HTML: escaped, then code, bold and italic."""
    parts = _CODE.split(text)  # odd parts are code: escaped and left as they are
    out = []
    for i, part in enumerate(parts):
        escaped = html.escape(part, quote=True)
        if i % 2:
            out.append(f"<code>{escaped}</code>")
        else:
            escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
            out.append(_ITALIC.sub(r"<em>\1</em>", escaped))
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def render(markdown: str) -> str:
    """The subset of markdown this page reads, as HTML (headings shifted down to ``h3``..)."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    para: list[str] = []

    def flush():
        if para:
            out.append("<p>" + inline(" ".join(s.strip() for s in para)) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = min(6, len(heading.group(1)) + 2)
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _RULE_ROW.match(lines[i + 1]):
            flush()
            head = _cells(line)
            i += 2
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append(
                "<table><thead><tr>"
                + "".join(f"<th>{inline(c)}</th>" for c in head)
                + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in rows)
                + "</tbody></table>"
            )
            continue
        if _ITEM.match(line):
            flush()
            ordered = bool(re.match(r"^\s*\d+\.", line))
            items: list[str] = []
            while i < len(lines) and lines[i].strip():
                item = _ITEM.match(lines[i])
                if item:
                    items.append(item.group(1))
                elif items:  # a continuation line of the item
                    items[-1] += " " + lines[i].strip()
                i += 1
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{inline(t)}</li>" for t in items) + f"</{tag}>")
            continue
        para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def _engine_module(spec: games.GameSpec):
    return sys.modules[spec.engine.__module__]


def rules_path(spec: games.GameSpec) -> Path:
    """The game's ``rules.md``: next to its engine (the registry's, never a path the client sends)."""
    return Path(_engine_module(spec).__file__).resolve().parent / "rules.md"


def ranking(spec: games.GameSpec) -> Optional[list[dict]]:
    """The engine's hands from the best, each with its place and worth, where the game ranks
    hands (``HANDS`` lowest first, ``hand_rank``, ``hand_value``); None for a game that does not."""
    module = _engine_module(spec)
    hands, rank, value = (getattr(module, n, None) for n in ("HANDS", "hand_rank", "hand_value"))
    if hands is None or rank is None or value is None:
        return None
    ordered = sorted(hands, key=rank, reverse=True)
    return [
        {"hand": "-".join(map(str, sorted(h, reverse=True))), "place": i + 1, "value": int(value(h))}
        for i, h in enumerate(ordered)
    ]


@lru_cache(maxsize=None)
def how_to_play(name: str) -> dict:
    """What ``GET /api/games-rules/{game}`` sends: the rules as HTML and the hand ranking (or None)."""
    spec = games.get(name)
    path = rules_path(spec)
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {spec.name}\n\n{spec.title}."
    return {
        "game": spec.name,
        "title": spec.title,
        "how_to_move": spec.how_to_move,
        "html": render(text),
        "ranking": ranking(spec),
    }
