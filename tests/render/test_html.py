"""The page builder (grader/render/html.py), read back by the standard library's HTML parser: learner text
stays text, a page fetches nothing and runs nothing, a picture comes back as the bytes it was given. How a
browser shows such a page: tests/render/test_browser_pages.py."""

import base64
import struct
import zlib
from html.parser import HTMLParser

import pytest

from grader.render import html

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> "quoted" \'single\''


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG, grey, of ``width`` by ``height`` pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Parsed(HTMLParser):
    """A page's tags (with their attributes) and its text, as a browser's parser reads them."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def named(self, tag: str) -> list[dict]:
        return [attrs for name, attrs in self.tags if name == tag]


def test_learner_text_stays_text_everywhere_it_goes():
    page = html.page(HOSTILE, html.heading(HOSTILE), html.paragraph(HOSTILE), html.pre(HOSTILE),
                     html.png(tiny_png(), alt=HOSTILE, caption=HOSTILE),
                     html.table(["who", HOSTILE], [[HOSTILE, 1]]))
    parsed = Parsed(page)
    assert not parsed.named("script")
    assert [attrs["alt"] for attrs in parsed.named("img")] == [HOSTILE]
    assert all("onerror" not in attrs for _, attrs in parsed.tags)
    assert "".join(parsed.text).count(HOSTILE) == 8  # title, h1, h2, p, pre, caption, header, cell
    assert sum(tag == "img" for tag, _ in parsed.tags) == 1


def test_a_page_fetches_nothing_and_says_so_to_the_browser():
    page = html.page("t5_relative_pos: FAIL", html.pre("report"))
    parsed = Parsed(page)
    policy = [attrs["content"] for attrs in parsed.named("meta")
              if attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy == [html.POLICY]
    assert "default-src 'none'" in html.POLICY and "script-src" not in html.POLICY
    assert not [attrs for _, attrs in parsed.tags if {"src", "href"} & set(attrs)]
    assert "http:" not in page and "https:" not in page
    assert "@media print" in page


def test_a_text_report_keeps_its_lines_and_spacing():
    report = "FAIL: t5_relative_pos\n\n  expected   1  2\n  yours      1  3\n"
    parsed = Parsed(html.pre(report))
    assert parsed.tags == [("pre", {})]
    assert "".join(parsed.text) == report


def test_a_png_comes_back_as_the_bytes_it_was_given():
    data = tiny_png()
    [img] = Parsed(html.png(data, "expected | yours")).named("img")
    scheme, _, encoded = img["src"].partition(",")
    assert scheme == "data:image/png;base64"
    assert base64.b64decode(encoded) == data


def test_svg_markup_is_inlined_without_its_prolog():
    markup = ('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n'
              '  "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<!-- Created with matplotlib -->\n'
              '<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt"><rect width="5" height="5"/></svg>\n')
    figure = html.svg(markup, "bias per head", caption="head 0")
    parsed = Parsed(figure)
    assert [tag for tag, _ in parsed.tags] == ["figure", "svg", "rect", "figcaption"]
    assert parsed.named("svg")[0]["aria-label"] == "bias per head"
    assert "<?xml" not in figure and "DOCTYPE" not in figure
    with pytest.raises(ValueError):
        html.svg("<html></html>", "not a picture")


def test_a_table_sets_numbers_right_and_colours_a_status_column():
    table = html.table(["student", "status", "seconds"], [["ada", "pass", 1.5], ["bo", "not_started", 0]],
                       numeric=[2], classes={1: "cell"})
    parsed = Parsed(table)
    cells = [attrs.get("class") for tag, attrs in parsed.tags if tag == "td"]
    assert cells == [None, "pass", "n", None, "not_started", "n"]
    assert [t for t in parsed.text if t.strip()] == ["student", "status", "seconds", "ada", "pass", "1.5", "bo",
                                                      "not_started", "0"]
