"""The one builder of every HTML page the grader writes (a report with its figure, a class's mistakes): a page
is :func:`page` around sections made by the functions here, self-contained and static.

- Everything that is text goes through :func:`escape`: learner code names files, prints and raises what it
  likes, and none of it may become markup.
- Nothing is fetched: the style is inline, images are ``data:`` URIs or inline SVG, there is no script, and
  the page's Content-Security-Policy says so (a browser refuses any load the page would try). It reads the
  same offline, and prints (a print stylesheet: no background, figures kept whole on a page).
- Pictures come in as bytes (PNG) or markup (SVG, as matplotlib writes it); this module draws nothing and
  imports nothing heavy.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence

# No network, no script: images from data: URIs, style from the page itself.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

STYLE = """
:root { color-scheme: light; --ink: #1d1d1f; --muted: #5f6368; --rule: #d9d9de; --pass: #1a7f37; --fail: #cf222e;
        --warn: #9a6700; --paper: #ffffff; --band: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 1.25rem 3rem; color: var(--ink); background: var(--paper);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--rule); padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .4rem; }
p.note { color: var(--muted); margin: .25rem 0 1rem; }
pre { background: var(--band); border: 1px solid var(--rule); border-radius: 4px; padding: .75rem 1rem;
      overflow-x: auto; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
figure { margin: 1rem 0; }
figure img, figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: .9rem; margin-top: .3rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .92rem; }
th, td { border-bottom: 1px solid var(--rule); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--band); }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); font-weight: 600; }
.fail, .error { color: var(--fail); font-weight: 600; }
.timeout, .not_started { color: var(--warn); font-weight: 600; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  pre { white-space: pre-wrap; word-break: break-word; background: none; }
  th { background: none; }
  figure, table, pre { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
}
"""

_PROLOG = re.compile(r"\A\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?(?:<!--.*?-->\s*)*", re.S)


def escape(text: object) -> str:
    """``text`` as HTML text (quotes too, so that it may stand in an attribute)."""
    return html.escape(str(text), quote=True)


def page(title: str, *sections: str, lang: str = "en") -> str:
    """A whole page: ``title`` (text) as its title and first heading, then ``sections`` (HTML from the
    functions here), in order."""
    return (f'<!DOCTYPE html>\n<html lang="{escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{escape(POLICY)}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n'
            f'<h1>{escape(title)}</h1>\n' + "\n".join(sections) + "\n</body>\n</html>\n")


def heading(text: str, level: int = 2, anchor: str | None = None) -> str:
    """A heading (``level`` 2 to 4), with an id to link to where ``anchor`` is given."""
    level = min(max(level, 2), 4)
    ident = f' id="{escape(anchor)}"' if anchor else ""
    return f"<h{level}{ident}>{escape(text)}</h{level}>"


def paragraph(text: str, note: bool = False) -> str:
    """A paragraph of text; a ``note`` is set quieter."""
    kind = ' class="note"' if note else ""
    return f"<p{kind}>{escape(text)}</p>"


def pre(text: str) -> str:
    """A text report as it prints: its lines and spacing kept, in a fixed-width font."""
    return f"<pre>{escape(text)}</pre>"


def png(data: bytes, alt: str, caption: str | None = None) -> str:
    """A PNG image (its bytes) inline, as a figure with ``alt`` text and a caption."""
    source = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return _figure(f'<img src="{source}" alt="{escape(alt)}">', caption)


def svg(markup: str, alt: str, caption: str | None = None) -> str:
    """An SVG image inline, as a figure: ``markup`` as matplotlib writes it (``savefig(format="svg")``), its
    XML prolog dropped; ``alt`` as its label. The markup is the grader's own drawing, not escaped here (the
    text in it is, by the SVG writer)."""
    body = _PROLOG.sub("", markup, count=1)
    if not body.startswith("<svg"):
        raise ValueError("not an SVG document: expected <svg ...> after the XML prolog")
    body = '<svg role="img" aria-label="' + escape(alt) + '"' + body[len("<svg"):]
    return _figure(body, caption)


def _figure(image: str, caption: str | None) -> str:
    captioned = f"\n<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return f"<figure>\n{image}{captioned}\n</figure>"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[int] = (),
          classes: dict[int, str] | None = None) -> str:
    """A table: ``header`` (text), then ``rows`` of cells (text, numbers); the columns in ``numeric`` set to
    the right, and column ``i`` of a row given the class its cell names where ``classes[i]`` is ``"cell"``
    (a status column, coloured by its value)."""
    numeric, classes = set(numeric), classes or {}

    def cell(tag: str, i: int, value: object) -> str:
        names = (["n"] if i in numeric else []) + ([re.sub(r"\W", "_", str(value))] if classes.get(i) == "cell" else [])
        kind = f' class="{escape(" ".join(names))}"' if names else ""
        return f"<{tag}{kind}>{escape(value)}</{tag}>"

    head = "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"
    body = "\n".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def section(*parts: str) -> str:
    """Parts kept together (a heading and what it heads), for a page to take as one section."""
    return "<section>\n" + "\n".join(parts) + "\n</section>"
