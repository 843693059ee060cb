"""Cut documents into chunks along headings and paragraphs, with a size bound.

Every chunk's text is exactly ``document[start:end]`` (code-point offsets), so the checker can
later compare it with the current source.  Ids are ``<document_id>-<n>``, stable while the
document's structure is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from citecheck.contract.corpus import read_text
from citecheck.contract.log import Chunk, checksum

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"(?:\r?\n)[ \t]*(?:\r?\n)+")
DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True, slots=True)
class ChunkingParams:
    max_chars: int = 700
    version: str = "chunking.v1"


def _title(text: str, fallback: str) -> str:
    m = _HEADING.search(text)
    return m.group(2).strip() if m and m.group(1) == "#" else fallback


def _sections(text: str) -> list[tuple[str | None, int, int]]:
    """(section heading, start, end) for each heading-delimited section."""
    marks = [(m.start(), m.group(2).strip()) for m in _HEADING.finditer(text)]
    if not marks or marks[0][0] > 0:
        marks.insert(0, (0, None))
    out = []
    for i, (start, heading) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        out.append((heading, start, end))
    return out


def _paragraphs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for m in _PARAGRAPH_BREAK.finditer(text, start, end):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, end))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
    return out


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")
_SPACE = re.compile(r"\s")


def _bounded(text: str, s: int, e: int, max_chars: int) -> list[tuple[int, int]]:
    """Split a paragraph longer than ``max_chars`` at the last sentence end that fits, else at
    the last whitespace, so that no chunk exceeds the bound (a word longer than it is cut)."""
    out: list[tuple[int, int]] = []
    while e - s > max_chars:
        window = text[s:s + max_chars]
        ends = [m.end() - 1 for m in _SENTENCE_END.finditer(window)]
        spaces = [m.start() for m in _SPACE.finditer(window)]
        cut = ends[-1] if ends else spaces[-1] if spaces else max_chars
        if cut <= 0:
            cut = max_chars
        piece_end = s + cut
        while piece_end > s and text[piece_end - 1].isspace():
            piece_end -= 1
        if piece_end > s:
            out.append((s, piece_end))
        s += cut
        while s < e and text[s].isspace():
            s += 1
    if s < e:
        out.append((s, e))
    return out


def _pack(paragraphs: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    """Greedily merge consecutive paragraphs while the span stays within ``max_chars``."""
    out: list[tuple[int, int]] = []
    for s, e in paragraphs:
        if out and e - out[-1][0] <= max_chars:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def chunk_document(text: str, document_id: str, source: str, params: ChunkingParams = ChunkingParams()) -> list[Chunk]:
    """The chunks of one document, in order."""
    title = _title(text, document_id)
    chunks: list[Chunk] = []
    for heading, s, e in _sections(text):
        body = [piece for ps, pe in _paragraphs(text, s, e) if not _HEADING.fullmatch(text[ps:pe])
                for piece in _bounded(text, ps, pe, params.max_chars)]
        for cs, ce in _pack(body, params.max_chars):
            piece = text[cs:ce]
            chunks.append(Chunk(f"{document_id}-{len(chunks) + 1}", document_id, source, title, heading,
                                piece, cs, ce, checksum(piece), None, None))
    return chunks


def documents(root: str | Path) -> list[Path]:
    """The text and markdown documents under ``root``, in path order."""
    root = Path(root)
    return sorted(p for p in root.rglob("*") if p.suffix in DOCUMENT_SUFFIXES and p.is_file())


def chunk_folder(root: str | Path, params: ChunkingParams = ChunkingParams()) -> list[Chunk]:
    """The chunks of every text or markdown document under ``root``, in path order."""
    root = Path(root)
    chunks: list[Chunk] = []
    for path in documents(root):
        rel = path.relative_to(root).as_posix()
        chunks.extend(chunk_document(read_text(path), Path(rel).stem, rel, params))
    return chunks
