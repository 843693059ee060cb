"""The scripts of a page's elements, asked for with the page itself (issue #36, a cold server).

Streamlit's browser code is split: the page (``index.html``) loads the main bundle, opens the
websocket, and only when the script run's elements arrive does it fetch the code of each kind of
element (a text input, a radio, a button, an iframe...) and, after each, the modules that one
imports.  On a freshly opened browser that came after the run: Review's first view fetched about
fifty such modules between the websocket opening and the page being drawn.  Named in the page as
``<link rel="modulepreload">``, they are fetched while the main bundle is, and are there when the
elements arrive.

:func:`closure` finds an element's module (``TextInput.<hash>.js``) and every module it imports,
read from the files themselves, so the list follows the Streamlit installed; an element whose
module is not found (another Streamlit, renamed) is left out, and the page works as before.
Nothing here imports Streamlit: the server (``pages/_server.py``) passes its static folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

# A static import of a sibling module: ``from"./x.js"`` or ``import"./x.js"`` (not ``import("./x.js")``,
# which loads only when called, and which the element's code decides)
_STATIC_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.$~-]+\.js)"')
_NAME = re.compile(r"[A-Za-z][\w-]*")


def module_of(js_dir: Path, element: str) -> str | None:
    """The file of ``element``'s module (``<element>.<hash>.js``) in ``js_dir``; None when there is
    none, or more than one."""
    if not _NAME.fullmatch(element):
        return None
    pattern = re.compile(rf"{re.escape(element)}\.[\w-]+\.js")
    found = [p.name for p in js_dir.glob(f"{element}.*.js") if pattern.fullmatch(p.name)]
    return found[0] if len(found) == 1 else None


def closure(js_dir: Path, elements: Sequence[str]) -> list[str]:
    """The modules of ``elements`` and every module they import, each once, in the order found."""
    queue = [name for name in (module_of(js_dir, e) for e in elements) if name is not None]
    seen: dict[str, None] = {}
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        try:
            text = (js_dir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        seen[name] = None
        queue.extend(found for found in _STATIC_IMPORT.findall(text) if found not in seen)
    return list(seen)


def with_preloads(page: str, modules: Iterable[str], prefix: str = "./static/js/") -> str:
    """``page`` (Streamlit's ``index.html``) with a ``modulepreload`` link for each of ``modules``
    it does not name already, at the end of its head; ``page`` as it is when it has no head."""
    links = "".join(f'<link rel="modulepreload" crossorigin href="{prefix}{name}">\n'
                    for name in dict.fromkeys(modules) if f"{prefix}{name}" not in page)
    at = page.find("</head>")
    return page if at < 0 or not links else page[:at] + links + page[at:]
