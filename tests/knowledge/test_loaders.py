"""Each format's loader: headings, paragraphs and code come out as blocks; bad input is refused
with a message naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.errors import IngestError
from shiyi.knowledge.loaders import format_of, load
from shiyi.knowledge.models import Block
from tests.knowledge.conftest import make_pdf


def headings(blocks: list[Block]) -> list[tuple[int, str]]:
    return [(b.level, b.text) for b in blocks if b.kind == "heading"]


def test_markdown_headings_code_and_front_matter() -> None:
    text = (
        "---\ntitle: Field Guide\nauthor: x\n---\n"
        "Intro line.\n\n# Setup\n\nInstall it.\n\n```bash\n# not a heading\nmake\n```\n\n"
        "Usage\n-----\n\nRun it.\n\n### Deep ###\n\n- one\n- two\n"
    )
    doc = load(Path("guide.md"), text.encode())
    assert doc.title == "Field Guide"
    assert headings(doc.blocks) == [(1, "Setup"), (2, "Usage"), (3, "Deep")]
    code = [b.text for b in doc.blocks if b.kind == "code"]
    assert code == ["```bash\n# not a heading\nmake\n```"]
    assert Block("text", "- one\n- two") in doc.blocks


def test_markdown_title_falls_back_to_first_h1_then_file_name() -> None:
    assert load(Path("a.md"), b"# Real Title\n\ntext").title == "Real Title"
    assert load(Path("notes.md"), b"just text").title == "notes"


def test_html_headings_text_and_skipped_scripts() -> None:
    html = (
        "<html><head><title>Ops Handbook</title><style>p{}</style></head><body>"
        "<h1>Deploys</h1><p>Deploy with <b>make&nbsp;release</b>.</p>"
        "<script>var secret = 1;</script><h2>Rollback</h2><ul><li>stop</li><li>revert</li></ul>"
        "<pre>git revert HEAD\n</pre></body></html>"
    )
    doc = load(Path("ops.html"), html.encode())
    assert doc.title == "Ops Handbook"
    assert headings(doc.blocks) == [(1, "Deploys"), (2, "Rollback")]
    texts = [b.text for b in doc.blocks if b.kind == "text"]
    assert texts == ["Deploy with make release.", "stop", "revert"]  # &nbsp; folded
    assert [b.text for b in doc.blocks if b.kind == "code"] == ["git revert HEAD"]
    assert not any("secret" in b.text for b in doc.blocks)


def test_python_source_sections_per_definition() -> None:
    source = (
        '"""Module doc."""\nimport os\n\n\ndef top(a: int) -> int:\n    return a\n\n\n'
        'class Store:\n    """Keeps things."""\n\n    def get(self, key):\n        return key\n\n'
        "    @property\n    def size(self):\n        return 0\n"
    )
    doc = load(Path("store.py"), source.encode())
    assert doc.title == "store.py"
    assert headings(doc.blocks) == [
        (1, "def top(a: int) -> int"),
        (1, "class Store"),
        (2, "def get(self, key)"),
        (2, "def size(self)"),
    ]
    code = "\n".join(b.text for b in doc.blocks if b.kind == "code")
    for piece in ("import os", "return a", "Keeps things.", "return key", "@property"):
        assert piece in code


def test_other_languages_split_at_definitions() -> None:
    source = "package main\n\nfunc Serve() {\n}\n\nfunc main() {\n\tServe()\n}\n"
    doc = load(Path("main.go"), source.encode())
    assert headings(doc.blocks) == [(1, "func Serve()"), (1, "func main()")]


def test_pdf_pages_become_sections() -> None:
    data = make_pdf([["Quarterly report", "Revenue grew 12 percent."], ["Outlook is stable."]])
    doc = load(Path("report.pdf"), data)
    assert doc.format == "pdf"
    assert headings(doc.blocks) == [(1, "Page 1"), (1, "Page 2")]
    text = " ".join(b.text for b in doc.blocks if b.kind == "text")
    assert "Revenue grew 12 percent." in text
    assert "Outlook is stable." in text


def test_pdf_title_from_metadata() -> None:
    assert load(Path("x.pdf"), make_pdf([["a"]], title="Annual Plan")).title == "Annual Plan"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("bad.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog garbage", "cannot read this PDF"),
        ("fake.pdf", b"just some text", "not a PDF file"),
        ("blob.md", b"PK\x03\x04\x00\x00binary", "looks binary"),
        ("latin.txt", "café".encode("latin-1"), "not UTF-8 text"),
        ("image.png", b"\x89PNG", "unsupported file type .png"),
        ("Makefile", b"all:\n", r"unsupported file type \(no extension\)"),
    ],
)
def test_bad_input_is_refused_with_the_file_named(name: str, data: bytes, message: str) -> None:
    with pytest.raises(IngestError, match=message) as caught:
        load(Path(name), data)
    assert name in str(caught.value)


def test_formats_by_extension() -> None:
    assert format_of(Path("A.MD")) == "markdown"
    assert format_of(Path("x.htm")) == "html"
    assert format_of(Path("x.rs")) == "source"
    assert format_of(Path("x.docx")) is None


def test_an_encrypted_pdf_is_refused() -> None:
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    data = io.BytesIO()
    writer.write(data)
    with pytest.raises(IngestError, match=r"e\.pdf: the PDF is encrypted; decrypt it"):
        load(Path("e.pdf"), data.getvalue())
