"""Key presses across a server restart: held while the server is away, replayed once it is back.

When the server restarts under an open tab, the tab reconnects to a new session, and Streamlit
(1.67) drops the widget states sent with that session's first run: the first label key pressed
after the restart would reach the server as a plain rerun, and the label would be lost without
a word.  The script below (rendered by the review page in an ``st.iframe`` frame, beside
the key listener of :mod:`.keypresses`) prevents that:

* while the status widget says the connection is lost, and until this page has run again in
  the new session, the keys that act on the server (the label and move keys) are held back
  (not passed to Streamlit) and a banner says they wait;
* once the connection is back, it first asks Streamlit to run the page again (Streamlit's ``R``
  key): that run, whose widget states a new session drops, starts the new session from the page
  address (``?reviewer=``, ``?answer=``, ``?item=``), and later messages keep theirs;
* the frame carries the session's token, so a new session draws it again, and the new frame's
  script releases the hold (in the same session, after a dropped connection, the old frame
  releases it once the app is idle); the held keys are then replayed one at a time, each once
  the app is idle again.

The token is hex from :func:`session_token`, so nothing untrusted reaches the script.  It goes
in a frame of its own that is drawn once per session, at the end of the page: its script setting
``document.__ccRun`` also tells the browser tests that the whole page has been drawn.
"""

from __future__ import annotations

from citecheck.review.tokens import is_token, new_token

HELD_KEYS = "123456789jknpuz"  # the keys the review page acts on (case-insensitive)
BANNER = "The connection to the server was lost. Your key presses wait and are sent when it is back."


def session_token() -> str:
    """A new random token for one server session (hex)."""
    return new_token(8)


def reconnect_script(session: str) -> str:
    """The script for the review page in one session; ``session`` is hex from :func:`session_token`."""
    if not session or not is_token(session):
        raise ValueError("session must be hex from session_token")
    keys = "".join(sorted(set(HELD_KEYS + HELD_KEYS.upper())))
    return f"""<script>
(function () {{
const win = window.parent, doc = win.document, me = "{session}";
const keys = "{keys}";
const lost = () => {{
  const s = doc.querySelector('[data-testid="stStatusWidget"]');
  return !!s && /connect/i.test(s.textContent || "");
}};
const idle = () => !doc.querySelector('[data-testid="stStatusWidget"]');
const inBox = (t) => t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
function banner(on) {{
  let b = doc.getElementById("cc-held");
  if (on && !b) {{
    b = doc.createElement("div");
    b.id = "cc-held";
    b.setAttribute("role", "alert");
    b.textContent = "{BANNER}";
    b.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:1000000;padding:8px 16px;" +
      "background:#fff3cd;color:#3d2c00;border-bottom:2px solid #b58900;font:15px sans-serif;";
    doc.body.appendChild(b);
  }} else if (!on && b) {{
    b.remove();
  }}
}}
function hold(e) {{
  if (!doc.__ccHeld || !doc.querySelector(".cc-focus")) return;  // held on the review page only
  if (e.ctrlKey || e.metaKey || e.altKey || inBox(e.target)) return;
  if (e.key.length !== 1 || keys.indexOf(e.key) < 0) return;
  e.preventDefault();
  e.stopImmediatePropagation();
  doc.__ccQueue.push(e.key);
  banner(true);
}}
function press(key) {{
  const code = /[0-9]/.test(key) ? "Digit" + key : "Key" + key.toUpperCase();
  const k = key.toUpperCase().charCodeAt(0);
  for (const type of ["keydown", "keyup"]) {{
    doc.body.dispatchEvent(new KeyboardEvent(type, {{key, code, keyCode: k, which: k, bubbles: true,
                                                      cancelable: true}}));
  }}
}}
if (win.__ccHold) win.removeEventListener("keydown", win.__ccHold, true);
win.__ccHold = hold;
win.addEventListener("keydown", hold, true);
doc.__ccQueue = doc.__ccQueue || [];
doc.__ccHeld = false;  // the page has run in this session: keys reach a session that knows it
doc.__ccRun = me;
let away = false, sent = 0, still = 0;
setInterval(() => {{
  if (doc.__ccRun !== me) return;  // a newer frame is in charge
  if (lost()) {{
    away = true;
    doc.__ccHeld = true;
    banner(true);
    return;
  }}
  if (away) {{  // back: the first message to the server runs the page (a new session drops its widgets)
    if (!idle()) return;
    away = false;
    sent = Date.now();
    press("r");
    return;
  }}
  if (doc.__ccHeld) {{
    // A new session draws this frame again with its token, which releases the hold; the same
    // session (the connection dropped, the server stayed) does not, so release once it is idle.
    if (idle() && Date.now() - sent > 1500) doc.__ccHeld = false;
    return;
  }}
  if (!doc.__ccQueue.length) {{ banner(false); return; }}
  if (!idle()) {{ still = 0; return; }}
  if (still++ < 2) return;  // idle for a moment: the page is drawn
  still = 0;
  press(doc.__ccQueue.shift());
}}, 150);
}})();
</script>"""
