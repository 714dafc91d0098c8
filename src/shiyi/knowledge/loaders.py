"""Reading files into blocks (headings, paragraphs, code): Markdown, text, HTML, PDF, source.

Every loader returns the same shape, :class:`LoadedDocument`, so chunking knows nothing about
formats.  A file that cannot be read raises :class:`IngestError` naming the file and why;
the caller keeps whatever an earlier version of it stored.
"""

from __future__ import annotations

import ast
import io
import logging
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from shiyi.errors import IngestError
from shiyi.index.text import word_set
from shiyi.knowledge.models import Block, LoadedDocument

MARKDOWN = frozenset({".md", ".markdown", ".mdx"})
TEXT = frozenset({".txt", ".text", ".rst", ".adoc", ".org"})
HTML = frozenset({".html", ".htm", ".xhtml"})
PDF = frozenset({".pdf"})
SOURCE = word_set(
    """.py .pyi .js .jsx .mjs .cjs .ts .tsx .go .rs .java .kt .kts .scala .c .h .cc .cpp .cxx
    .hpp .hh .cs .rb .php .swift .m .sh .bash .zsh .lua .r .sql .pl .ex .exs .erl .hs .ml
    .dart .vue .svelte .yaml .yml .toml .ini .cfg"""
)
SUPPORTED = MARKDOWN | TEXT | HTML | PDF | SOURCE
_SNIFF_BYTES = 8192


def format_of(path: Path) -> str | None:
    """The loader name for ``path``'s extension, or None when it is not supported."""
    suffix = path.suffix.lower()
    for name, suffixes in (
        ("markdown", MARKDOWN),
        ("text", TEXT),
        ("html", HTML),
        ("pdf", PDF),
        ("source", SOURCE),
    ):
        if suffix in suffixes:
            return name
    return None


def unsupported_message(path: Path) -> str:
    kinds = "Markdown, text, HTML, PDF and source files"
    shown = path.suffix or "(no extension)"
    return f"{path}: unsupported file type {shown}; shiyi kb reads {kinds}"


def load(path: Path, data: bytes) -> LoadedDocument:
    """Blocks of ``data``, the bytes of ``path``, read by the loader of its extension."""
    kind = format_of(path)
    if kind is None:
        raise IngestError(unsupported_message(path))
    if kind == "pdf":
        return load_pdf(path, data)
    text = decode_text(path, data)
    loaders: dict[str, Callable[[Path, str], LoadedDocument]] = {
        "markdown": load_markdown,
        "text": load_text,
        "html": load_html,
        "source": load_source,
    }
    return loaders[kind](path, text)


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text (a BOM is dropped); binary content is refused rather than indexed as junk."""
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise IngestError(f"{path}: looks binary (NUL bytes), not a text {path.suffix} file")
    try:
        return data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"{path}: not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "convert it to UTF-8 and add it again"
        ) from None


def _paragraphs(text: str) -> Iterator[str]:
    for part in re.split(r"\n\s*\n", text):
        if part.strip():
            yield part.strip("\n")


# --- Markdown ------------------------------------------------------------------------------

# The closing "#"s are stripped in Python (:func:`_atx_title`): as a lazy title before
# "[ \t]*#*[ \t]*$" the regex took cubic time on a long heading line (issue 29).
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_TITLE = re.compile(r"^title:\s*[\"']?(.+?)[\"']?\s*$", re.MULTILINE)


def _atx_title(rest: str) -> str:
    """The heading's text without its closing sequence: ``Title ##`` -> ``Title``."""
    title = rest.rstrip(" \t").rstrip("#").rstrip(" \t") or rest[:1]
    return title.strip()


def load_markdown(path: Path, text: str) -> LoadedDocument:
    """ATX and setext headings, fenced code kept whole (a ``#`` inside code is no heading)."""
    front_title, body = _front_matter(text)
    blocks: list[Block] = []
    paragraph: list[str] = []
    lines = body.split("\n")
    i = 0

    def flush() -> None:
        if paragraph and "".join(paragraph).strip():
            blocks.append(Block("text", "\n".join(paragraph).strip("\n")))
        paragraph.clear()

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        heading = _ATX.match(line)
        setext = _SETEXT.match(line)
        if fence:
            flush()
            end = _fence_end(lines, i, fence.group(1))
            blocks.append(Block("code", "\n".join(lines[i : end + 1])))
            i = end + 1
            continue
        if heading:
            flush()
            blocks.append(Block("heading", _atx_title(heading.group(2)), len(heading.group(1))))
        elif setext and len(paragraph) == 1 and paragraph[0].strip():
            title = paragraph.pop().strip()
            blocks.append(Block("heading", title, 1 if setext.group(1)[0] == "=" else 2))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
        i += 1
    flush()
    first_h1 = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
    return LoadedDocument(front_title or first_h1 or path.stem, "markdown", blocks)


def _front_matter(text: str) -> tuple[str | None, str]:
    """(title, rest) for YAML front matter between ``---`` lines at the very start."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---", 4)
    if end < 0:
        return None, text
    match = _FRONT_TITLE.search(text[4:end])
    return (match.group(1) if match else None), text[end + 4 :].lstrip("\n")


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    closing = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    return len(lines) - 1  # an unclosed fence runs to the end, as in CommonMark


# --- plain text ----------------------------------------------------------------------------


def load_text(path: Path, text: str) -> LoadedDocument:
    return LoadedDocument(path.stem, "text", [Block("text", p) for p in _paragraphs(text)])


# --- HTML ----------------------------------------------------------------------------------

_BLOCK_TAGS = word_set(
    "p div li ul ol tr td th table section article aside header footer nav main blockquote "
    "dd dt dl figcaption br hr form"
)
_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})


class _HtmlBlocks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title = ""
        self._buffer: list[str] = []
        self._skip = 0
        self._in_title = False
        self._heading: int = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP_TAGS:
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self._heading = int(tag[1])
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) and self._heading:
            self._flush()
            self._heading = 0
        elif tag == "pre":
            self._flush()
            self._pre = max(0, self._pre - 1)
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self._buffer.append(data)

    def _flush(self) -> None:
        raw = "".join(self._buffer)
        self._buffer.clear()
        if self._pre:
            if raw.strip():
                self.blocks.append(Block("code", raw.strip("\n")))
            return
        text = " ".join(raw.split())
        if not text:
            return
        if self._heading:
            self.blocks.append(Block("heading", text, self._heading))
        else:
            self.blocks.append(Block("text", text))

    def close(self) -> None:
        super().close()
        self._flush()


def load_html(path: Path, text: str) -> LoadedDocument:
    parser = _HtmlBlocks()
    parser.feed(text)
    parser.close()
    first_h1 = next((b.text for b in parser.blocks if b.kind == "heading"), None)
    title = " ".join(parser.title.split()) or first_h1 or path.stem
    return LoadedDocument(title, "html", parser.blocks)


# --- PDF -----------------------------------------------------------------------------------


def load_pdf(path: Path, data: bytes) -> LoadedDocument:
    """Text per page (pypdf, pure Python); each page is a section titled ``Page N``.

    PDFs carry no reliable headings, so the page is the parent a chunk expands to.
    """
    if not data.lstrip()[:5].startswith(b"%PDF-"):
        raise IngestError(f"{path}: not a PDF file (no %PDF- header)")
    from pypdf import PdfReader

    # pypdf logs what it repairs ("EOF marker not found"); a PDF it cannot read raises,
    # and that becomes the one message the user sees.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError(f"{path}: the PDF is encrypted; decrypt it and add it again")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = reader.metadata.title if reader.metadata else None
    except IngestError:
        raise
    except Exception as exc:  # pypdf raises many kinds (PdfReadError, ValueError, KeyError…)
        raise IngestError(f"{path}: cannot read this PDF ({type(exc).__name__}: {exc})") from None
    blocks: list[Block] = []
    for number, text in enumerate(pages, start=1):
        paragraphs = list(_paragraphs(text.replace("\r\n", "\n")))
        if paragraphs:
            blocks.append(Block("heading", f"Page {number}", 1))
            blocks.extend(Block("text", p) for p in paragraphs)
    title = str(meta_title).strip() if meta_title else ""
    return LoadedDocument(title or path.stem, "pdf", blocks)


# --- source code ---------------------------------------------------------------------------

_DEFINITION = re.compile(
    r"^(?:export\s+(?:default\s+)?)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
    r"(?:def|class|func|fn|function|interface|struct|enum|impl|trait|type|module|object|"
    r"public|private|protected|internal|static|abstract|final|sealed|data)\b"
)


def load_source(path: Path, text: str) -> LoadedDocument:
    """Top-level definitions become sections (Python through ``ast``, with methods below
    their class); other languages split at definition lines in column 0."""
    if path.suffix in (".py", ".pyi"):
        try:
            return LoadedDocument(path.name, "source", _python_blocks(text))
        except SyntaxError:
            pass  # not valid Python: the line heuristic still gives useful sections
    return LoadedDocument(path.name, "source", _definition_blocks(text))


def _python_blocks(source: str) -> list[Block]:
    tree = ast.parse(source)
    lines = source.split("\n")
    blocks: list[Block] = []
    position = 0  # next line (0-based) not yet emitted

    def code(start: int, end: int) -> None:
        snippet = "\n".join(lines[start:end]).strip("\n")
        if snippet.strip():
            blocks.append(Block("code", snippet))

    def visit(nodes: list[ast.stmt], level: int) -> None:
        nonlocal position
        for node in nodes:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            code(position, first)
            blocks.append(Block("heading", _signature(lines[node.lineno - 1]), level))
            end = node.end_lineno or node.lineno
            if isinstance(node, ast.ClassDef) and level == 1:
                # The class line and docstring go with the first method's preceding code.
                position = first
                visit(list(node.body), 2)
                code(position, end)
            else:
                code(first, end)
            position = end

    visit(list(tree.body), 1)
    code(position, len(lines))
    return blocks


def _signature(line: str) -> str:
    signature = line.strip().rstrip(":{").strip()
    return signature if len(signature) <= 120 else signature[:119] + "…"


def _definition_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    current: list[str] = []
    for line in text.split("\n"):
        if _DEFINITION.match(line):
            if "\n".join(current).strip():
                blocks.append(Block("code", "\n".join(current).strip("\n")))
            current = []
            blocks.append(Block("heading", _signature(line), 1))
        current.append(line)
    if "\n".join(current).strip():
        blocks.append(Block("code", "\n".join(current).strip("\n")))
    return blocks
