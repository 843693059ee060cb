// The span marker (pages/_span_marking.py): one sentence, its words and the spans marked in it as
// not supported by the chunk.  Offsets here are UTF-16 units into the sentence (a JavaScript
// string's unit); Python converts them to the log's code points (citecheck.labelling.marked_spans).
// The sentence is data, never markup: it reaches the page only through textContent.
//
// M (anywhere but a text box) brings the keyboard to the focused item's marker.  Keys, with the
// sentence focused: Left/Right move the word cursor, Shift+Left/Right extend the
// selection word by word, Home/End go to the first/last word, Enter or Space marks the selection
// (the word under the cursor when nothing is selected), Backspace or Delete unmarks the last span
// marked, Escape drops the selection.  With the mouse: select words (a part of a word counts as the
// whole word), then Enter or "Mark selected words".

function sorted(spans) {
  return spans.map((s) => [s[0], s[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

function sameSpan(a, b) {
  return a[0] === b[0] && a[1] === b[1];
}

function add(st, span) {
  // merge the new span with every span it overlaps or touches; the merged span is the last marked
  let [a, b] = span;
  const keep = [];
  for (const s of st.spans) {
    if (s[0] <= b && a <= s[1]) {
      a = Math.min(a, s[0]);
      b = Math.max(b, s[1]);
      st.order = st.order.filter((o) => !sameSpan(o, s));
    } else {
      keep.push(s);
    }
  }
  keep.push([a, b]);
  st.spans = sorted(keep);
  st.order.push([a, b]);
}

function removeLast(st) {
  const last = st.order.pop();
  if (last) st.spans = st.spans.filter((s) => !sameSpan(s, last));
  return !!last;
}

function selection(st) {
  if (!st.words.length) return null;
  const lo = Math.min(st.anchor === null ? st.cursor : st.anchor, st.cursor);
  const hi = Math.max(st.anchor === null ? st.cursor : st.anchor, st.cursor);
  return [st.words[lo][0], st.words[hi][1]];
}

function render(st) {
  const text = st.text;
  const sel = st.focused ? selection(st) : null;
  const cur = st.focused && st.words.length ? st.words[st.cursor] : null;
  const cuts = new Set([0, text.length]);
  for (const s of [...st.words, ...st.spans, ...(sel ? [sel] : [])]) {
    cuts.add(s[0]);
    cuts.add(s[1]);
  }
  const points = [...cuts].filter((c) => c >= 0 && c <= text.length).sort((x, y) => x - y);
  const frag = document.createDocumentFragment();
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i], b = points[i + 1];
    const piece = document.createElement("span");
    piece.textContent = text.slice(a, b);
    if (st.spans.some((s) => s[0] <= a && b <= s[1])) piece.classList.add("ccsm-marked");
    if (sel && sel[0] <= a && b <= sel[1]) piece.classList.add("ccsm-sel");
    if (cur && cur[0] <= a && b <= cur[1]) piece.classList.add("ccsm-cursor");
    frag.appendChild(piece);
  }
  st.textEl.replaceChildren(frag);
  const quoted = st.spans.map((s) => "\u201c" + text.slice(s[0], s[1]) + "\u201d");
  st.statusEl.textContent = st.spans.length
    ? `${st.spans.length} marked as not supported: ${quoted.join(", ")}`
    : "Nothing marked yet.";
  st.root.dataset.spans = JSON.stringify(st.spans);
}

function send(st) {
  st.sendValue("spans", { token: st.token, spans: st.spans });
}

function offsetIn(el, node, off) {
  const r = document.createRange();
  r.setStart(el, 0);
  r.setEnd(node, off);
  return r.toString().length;
}

function bind(st) {
  const el = st.textEl;
  // (a mouse selection in progress would be lost if the text were drawn again on focus)
  el.addEventListener("mousedown", () => { st.selecting = true; window.__ccsmSelecting = st; });
  el.addEventListener("focus", () => { st.focused = true; if (!st.selecting) render(st); });
  el.addEventListener("blur", () => { st.focused = false; render(st); });
  el.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const n = st.words.length;
    let handled = true;
    if ((e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "Home" || e.key === "End") && n) {
      if (e.shiftKey && st.anchor === null) st.anchor = st.cursor;
      if (!e.shiftKey) st.anchor = null;
      const to = { ArrowRight: st.cursor + 1, ArrowLeft: st.cursor - 1, Home: 0, End: n - 1 }[e.key];
      st.cursor = Math.max(0, Math.min(n - 1, to));
    } else if ((e.key === "Enter" || e.key === " ") && n) {
      add(st, selection(st));
      st.anchor = null;
      send(st);
    } else if (e.key === "Backspace" || e.key === "Delete") {
      if (removeLast(st)) send(st);
    } else if (e.key === "Escape") {
      st.anchor = null;
    } else {
      handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
      render(st);
    }
  });
  st.mouseup = () => {
    st.selecting = false;
    const s = document.getSelection();
    const r = s && !s.isCollapsed && s.rangeCount ? s.getRangeAt(0) : null;
    if (!r || !el.contains(r.startContainer) || !el.contains(r.endContainer)) { render(st); return; }
    const a = offsetIn(el, r.startContainer, r.startOffset), b = offsetIn(el, r.endContainer, r.endOffset);
    const touched = st.words.map((w, i) => [w, i]).filter(([w]) => w[0] < b && a < w[1]).map(([, i]) => i);
    if (!touched.length) { render(st); return; }
    st.anchor = touched[0];
    st.cursor = touched[touched.length - 1];
    s.removeAllRanges();
    el.focus();
    render(st);
  };
  if (!window.__ccsmMouseup) {  // one listener for every marker: a drag may end outside the sentence
    window.__ccsmMouseup = true;
    document.addEventListener("mouseup", () => {
      const active = window.__ccsmSelecting;
      window.__ccsmSelecting = null;
      if (active) active.mouseup();
    });
  }
  st.markBtn.addEventListener("click", () => {
    if (!st.words.length) return;
    add(st, selection(st));
    st.anchor = null;
    send(st);
    render(st);
  });
  st.undoBtn.addEventListener("click", () => {
    if (removeLast(st)) send(st);
    render(st);
  });
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "ccsm";
  const help = document.createElement("div");
  help.className = "ccsm-help";
  help.textContent = "Mark the words the chunk does not support: select them with the mouse, or focus the " +
    "sentence and use \u2190/\u2192 (word), Shift+\u2190/\u2192 (extend), Enter or Space (mark), " +
    "Backspace (unmark the last).";
  const text = document.createElement("div");
  text.className = "ccsm-text";
  text.tabIndex = 0;
  text.setAttribute("role", "textbox");
  text.setAttribute("aria-readonly", "true");
  text.setAttribute("aria-label", "Sentence: mark the words the chunk does not support");
  const row = document.createElement("div");
  row.className = "ccsm-row";
  const mark = document.createElement("button");
  mark.type = "button";
  mark.textContent = "Mark selected words";
  const undo = document.createElement("button");
  undo.type = "button";
  undo.textContent = "Unmark last";
  const status = document.createElement("div");
  status.className = "ccsm-status";
  status.setAttribute("aria-live", "polite");
  row.append(mark, undo, status);
  root.append(help, text, row);
  parent.appendChild(root);
  return { root, textEl: text, statusEl: status, markBtn: mark, undoBtn: undo };
}

function installMKey() {
  // M (outside a text box) moves the keyboard focus to the marker of the focused item (the review
  // page's focus mark, .cc-focus, carries the same token), or to the only marker on the page.
  if (window.__ccsmKey) return;
  window.__ccsmKey = true;
  document.addEventListener("keydown", (e) => {
    if ((e.key !== "m" && e.key !== "M") || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable
              || (t.classList && t.classList.contains("ccsm-text")))) return;
    const focus = document.querySelector(".cc-focus[data-focus]");
    const markers = [...document.querySelectorAll(".ccsm")];
    const mine = focus ? markers.find((m) => m.dataset.token === focus.dataset.focus)
                       : (markers.length === 1 ? markers[0] : null);
    if (!mine) return;
    e.preventDefault();
    e.stopPropagation();
    const text = mine.querySelector(".ccsm-text");
    text.focus();
    text.scrollIntoView({ block: "center" });
  }, true);
}

export default function (component) {
  installMKey();
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".ccsm");
  let st = root && root.__ccsm;
  if (!st) {
    st = build(parentElement);
    root = st.root;
    root.__ccsm = st;
    st.focused = false;
    bind(st);
  }
  st.sendValue = setTriggerValue;
  const words = Array.isArray(data && data.words) ? data.words : [];
  const spans = Array.isArray(data && data.spans) ? data.spans : [];
  if (st.token !== data.token) {
    st.token = data.token;
    st.cursor = 0;
    st.anchor = null;
    st.saved = undefined;
  }
  st.text = String(data.text || "");
  st.words = words;
  st.cursor = Math.min(st.cursor, Math.max(0, words.length - 1));
  const saved = JSON.stringify(spans);
  if (st.saved !== saved) {  // what the labels store holds now (Python snapped it to words)
    st.saved = saved;
    st.spans = sorted(spans);
    st.order = st.spans.map((s) => [s[0], s[1]]);
  }
  root.dataset.token = st.token;
  render(st);
}
