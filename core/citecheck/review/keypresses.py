"""Key presses on the review page, one at a time: none lost while the page runs, none sent twice.

A label key (1-4) or a move key (J/K/N/P/U/Z) is a Streamlit button shortcut: the browser sends a
rerun with the button's trigger.  Pressed again before that run has finished, a second trigger
reached the server mid-run: Streamlit interrupts the run, or merges both triggers into one run, and
the second label then went to the item the first had just labelled (or was dropped), without a
word (issue #12).  So the page installs, once per browser document, a listener on the app's own
window (in the app's realm, so it outlives every helper frame) that

* lets a key through at once when the app is idle (no run, none requested) and no key of its own
  is still being served: an idle reviewer's key costs nothing;
* otherwise holds the key (not passed to Streamlit) in a queue, each with a sequence number;
* sends the queue's first key when the run that served the previous one has finished: the app's
  script state went from running back to ``notRunning`` *and* a focus mark of a new run is drawn
  (its ``data-run``, a token per run of the page).  A fragment's run (the page looking, every
  second, whether its log has grown) also sets the script state to running; taken for the key's
  run, it let the next key go while the first was still on its way, and Streamlit handled both in
  one run (CI: two labels on one item, none on the next).  Only keys above the last sequence
  number sent are sent, so a key is sent exactly once;
* keeps a key Streamlit did not take, whether it was held or let through, at the head of the
  queue and tries it again instead of dropping it.  How long depends on what the page draws (the
  ``kbd`` each shortcut button shows, ``aria-label="Shortcut 3"``):

  - the focused item's label buttons are drawn and none shows this digit (3 or 4 on an uncited
    sentence, which takes 1 or 2): dropped at once, so the keys after it do not wait, and a note
    at the foot of the window says which keys the item takes (for ``NOTE_MS``; text only);
  - otherwise (its button was drawn again by a run and not bound yet, or the page had just
    loaded and its buttons are not drawn yet, which a loaded machine makes likely): tried again
    until the app has been idle for ``RETRY_MS``, then dropped.  (Trying a key whose button is
    drawn for longer, every 15 ms, once sent it twice under heavy load: a key whose press was
    acted on though not seen as taken was pressed again.  A lost key shows, as the progress does
    not move; a key sent twice labels an item the reviewer never saw.)

  The last drops are kept in ``__ccKeyQueue.dropped`` (key and why), for whoever debugs a page;
* holds keys on the review page while a run draws it, even at the moment the focused item's box,
  drawn again, has no focus mark (a key let through then went to Streamlit mid-run, ahead of the
  keys held before it: CI under load labelled items out of order);
* leaves Enter or Escape in a text box to hand the keys back (the box loses focus, Streamlit
  commits its value) and leaves text boxes, modified keys and other pages alone.

The same listener keeps the focused item in view: whenever the page shows a focus marker
(``.cc-focus``) with a token or move count it has not scrolled to yet, it scrolls that item's box
to the middle of the window, scrolling the app's own scroller only (``scrollIntoView`` also
scrolled the window, and the whole app, sidebar and all, moved up); but not before the first
move of the session (move count 0), so a
page opened from a link or the menu shows its top: the answer id, the question and the notices.  The move count (``data-move``) changes on every move, so a move onto
the item already focused scrolls again.  This used to be a frame whose content changed on every
run; a frame reloaded on every key press cost each one a document load (10-30 ms in Chromium).
It also keeps a whole chunk the reviewer unfolded (``details.cc-whole``, named by ``data-fold``)
unfolded when a run draws its box again: Streamlit sets an ``st.html`` element's content afresh
on every run, which closes a fold; the listener unfolds it again before the browser paints.

While the connection is lost :mod:`.reconnect` holds keys itself (``__ccHeld``); this queue
steps aside until it lets them go.  The frame of :func:`installer_html` is drawn at the top of
the page with the same content on every run, so it is not drawn again; its guard makes a second
install a no-op.  Nothing untrusted reaches the script: its only inputs are constants here.
"""

from __future__ import annotations

from citecheck.review.reconnect import HELD_KEYS

SETTLE_MS = 40  # the app idle this long after a run before the next held key is sent
LOST_MS = 10000  # a key Streamlit took whose run never started (a dropped message) stops holding after this
NOTE_MS = 4000  # how long the note on a key that labels nothing stays
RETRY_MS = 2000  # a key no shortcut took is tried again until the app has been idle this long, then dropped

_SCRIPT = r"""
(function () {
if (window.__ccKeyQueue) return;
const win = window, doc = document, keys = "@KEYS@";
const q = {queue: [], seq: 0, sent: 0, served: 0, inflight: null, sending: false, dropped: []};
win.__ccKeyQueue = q;
const app = () => doc.querySelector('[data-testid="stApp"]');
const scriptState = () => { const a = app(); return a ? a.getAttribute("data-test-script-state") : null; };
const inBox = (t) => t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"
                           || t.isContentEditable);
let idleSince = 0, shown = "", reviewing = false;
function follow() {  // the newest focus marker into view, once per move (data-move counts them)
  let el = null;
  for (const m of doc.querySelectorAll(".cc-focus")) if (!el || +m.dataset.move > +el.dataset.move) el = m;
  if (!el || el.offsetParent === null) return;
  const at = el.dataset.focus + ":" + el.dataset.move;
  if (at === shown) return;
  shown = at;
  if (el.dataset.move === "0") return;  // no move yet: the page stays at its top (answer id, question, notices)
  centre(el.closest('[data-testid="stVerticalBlockBorderWrapper"]') || el);
}
function centre(box) {  // the box to the middle of the app's own scroller, moving nothing else
  let s = box.parentElement;  // (scrollIntoView also scrolled the window: the whole app, sidebar and all, went up)
  while (s && !(s.scrollHeight > s.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(s).overflowY))) s = s.parentElement;
  if (!s) { box.scrollIntoView({block: "center"}); return; }
  const r = box.getBoundingClientRect(), v = s.getBoundingClientRect();
  s.scrollTop += (r.top + r.height / 2) - (v.top + v.height / 2);
}
function drawn() {  // the runs whose focus marks are on the page (a new run draws a new token)
  let out = "";
  for (const m of doc.querySelectorAll(".cc-focus")) out += (m.dataset.run || "") + " ";
  return out;
}
function watch() {  // the script state, as the app draws it; inflight ends once its run has been and gone
  const s = scriptState(), now = Date.now();
  if (q.inflight) {
    if (s !== "notRunning") q.inflight.seen = true;
    else if ((q.inflight.seen && drawn() !== q.inflight.drawn) || now - q.inflight.at > @LOST@) {
      q.served = q.inflight.seq; q.inflight = null;
    }
  }
  if (s !== "notRunning") idleSince = 0; else if (!idleSince) idleSince = now;
  // the review page (or Disagreements): a focus mark drawn when the app was last idle, or since.
  // While a run draws the focused box again, the mark can be gone for a moment: still this page.
  if (s === "notRunning") reviewing = !!doc.querySelector(".cc-focus");
  else if (!reviewing && doc.querySelector(".cc-focus")) reviewing = true;
}
const ready = () => !q.inflight && scriptState() === "notRunning";
function press(key) {
  const code = /[0-9]/.test(key) ? "Digit" + key : "Key" + key.toUpperCase();
  const k = key.toUpperCase().charCodeAt(0);
  q.sending = true;
  try {
    const down = new KeyboardEvent("keydown", {key, code, keyCode: k, which: k, bubbles: true, cancelable: true});
    doc.body.dispatchEvent(down);
    doc.body.dispatchEvent(new KeyboardEvent("keyup", {key, code, keyCode: k, which: k, bubbles: true}));
    return down.defaultPrevented;
  } finally { q.sending = false; }
}
function took(seq, accepted) {  // Streamlit's shortcut handler prevents the default of a key it acts on
  q.sent = Math.max(q.sent, seq);
  if (accepted) { q.inflight = {seq, at: Date.now(), seen: false, drawn: drawn()}; idleSince = 0; } else q.served = seq;
}
function flush() {
  watch();
  if (doc.__ccHeld || !q.queue.length || !ready() || Date.now() - idleSince < @SETTLE@) return;
  const next = q.queue[0];
  if (next.seq <= q.sent) { q.queue.shift(); return; }  // sent already: never twice
  if (doc.querySelector(".cc-focus") && press(next.key)) { q.queue.shift(); took(next.seq, true); return; }
  const now = Date.now();  // no shortcut took it: try again, for as long as what the page draws says
  if (!next.tried) next.tried = now;
  const has = shortcut(next.key);
  if (now - next.tried > (has === "none" ? 0 : @RETRY@)) {
    q.queue.shift();
    took(next.seq, false);
    q.dropped.push({seq: next.seq, key: next.key, why: has || "not drawn"});
    if (q.dropped.length > 20) q.dropped.shift();
    if (has === "none") say("Key " + next.key + " labels nothing on this item: its labels are "
                            + digits().join(" and ") + ".");
  }
}
function digits() {  // the label keys the page's enabled buttons show, in order
  return [...new Set(marked().filter((text) => /^[0-9]$/.test(text)))].sort();
}
function marked() {  // the keys the page's enabled shortcut buttons show (their kbd marks), upper case
  const out = [];
  for (const k of doc.querySelectorAll('kbd[aria-label^="Shortcut"]')) {
    const b = k.closest("button");
    if (b && !b.disabled) out.push(k.textContent.trim().toUpperCase());
  }
  return out;
}
let note = null, noteTimer = 0;
function say(text) {  // a short note at the foot of the window, gone after a few seconds (text only)
  if (!note || !note.isConnected) {
    note = doc.createElement("div");
    note.className = "cc-key-note";
    note.setAttribute("role", "status");
    note.style.cssText = "position:fixed;left:50%;bottom:24px;transform:translateX(-50%);z-index:1000;"
      + "padding:8px 14px;border-radius:6px;background:#31333f;color:#fff;font:14px sans-serif;"
      + "box-shadow:0 2px 8px rgba(0,0,0,.3)";
    doc.body.appendChild(note);
  }
  note.textContent = text;
  note.hidden = false;
  clearTimeout(noteTimer);
  noteTimer = setTimeout(() => { note.hidden = true; }, @NOTE@);
}
function shortcut(key) {  // "on": an enabled button shows this key; "none": the label buttons are drawn, none
  const want = key.toUpperCase(), keys = marked();  // with this digit; "": neither (yet)
  if (keys.indexOf(want) >= 0) return "on";
  return /[0-9]/.test(want) && keys.some((text) => /^[0-9]$/.test(text)) ? "none" : "";
}
win.addEventListener("keydown", (e) => {
  const t = e.target;
  if ((e.key === "Enter" || e.key === "Escape") && inBox(t)) { setTimeout(() => t.blur(), 0); return; }
  if (q.sending || doc.__ccHeld) return;  // ours, or reconnect's
  if (e.ctrlKey || e.metaKey || e.altKey || inBox(t) || e.key.length !== 1 || keys.indexOf(e.key) < 0) return;
  watch();
  if (!reviewing && !doc.querySelector(".cc-focus")) return;  // not the review page
  const seq = ++q.seq;
  if (ready() && !q.queue.length) {  // idle: straight through, and watch for the run it starts
    took(seq, true);  // (held as served until Streamlit's handler, after this one, has had it)
    const since = idleSince || Date.now();
    setTimeout(() => {
      if (e.defaultPrevented || !e.cancelable || !q.inflight || q.inflight.seq !== seq) return;
      // No shortcut took it (the page had just been drawn, its buttons not bound yet): into the
      // queue's head, tried again while the app has been idle for less than RETRY_MS.  (A key
      // that cannot be cancelled, as a script may send, says nothing either way: left alone.)
      q.inflight = null;
      q.sent = seq - 1;
      q.queue.unshift({seq, key: e.key, tried: since});
    }, 0);
    return;
  }
  e.preventDefault();
  e.stopImmediatePropagation();
  q.queue.push({seq, key: e.key});
}, true);
new MutationObserver((changes) => {  // a run may start and end between two looks: any change counts
  if (q.inflight && changes.length) q.inflight.seen = true;
  watch();
}).observe(doc.documentElement, {subtree: true, attributes: true,
                                                        attributeFilter: ["data-test-script-state"]});
const unfolded = new Set();  // data-fold of the whole chunks the reviewer has open
const refold = new MutationObserver(() => {  // a run drew a box again: its fold came back closed
  for (const d of doc.querySelectorAll("details.cc-whole:not([open])")) if (unfolded.has(d.dataset.fold)) d.open = true;
});
doc.addEventListener("toggle", (e) => {  // (toggle does not bubble: caught on its way down)
  const d = e.target;
  if (!(d instanceof HTMLDetailsElement) || !d.classList.contains("cc-whole") || !d.dataset.fold) return;
  if (d.open) unfolded.add(d.dataset.fold); else unfolded.delete(d.dataset.fold);
  // watched only while a fold is open: an observer of every change costs each run about 10 ms
  if (unfolded.size) refold.observe(doc.body, {childList: true, subtree: true}); else refold.disconnect();
}, true);
setInterval(() => { follow(); flush(); }, 15);
})();
"""


def script() -> str:
    """The listener's code, run in the app's window (not in a frame)."""
    keys = "".join(sorted(set(HELD_KEYS + HELD_KEYS.upper())))
    return (_SCRIPT.replace("@KEYS@", keys).replace("@LOST@", str(LOST_MS))
            .replace("@SETTLE@", str(SETTLE_MS)).replace("@RETRY@", str(RETRY_MS)).replace("@NOTE@", str(NOTE_MS)))


def installer_html() -> str:
    """The frame's page (an ``st.iframe`` of the same origin): it adds the listener's code
    to the app's document as a script element, so the code runs in the app's realm."""
    code = script()
    if "</" in code:
        raise ValueError("the listener's code cannot sit in a script element")
    return ("<script>\n(function () {\nconst doc = window.parent.document;\n"
            "if (window.parent.__ccKeyQueue || doc.getElementById('cc-key-queue')) return;\n"
            "const s = doc.createElement('script');\ns.id = 'cc-key-queue';\n"
            f"s.textContent = {_js_string(code)};\ndoc.head.appendChild(s);\n}})();\n</script>")


def _js_string(text: str) -> str:
    import json

    return json.dumps(text).replace("<", "\\u003c")
