// A sentence row's label buttons (pages/_review_items.py): one component per row instead of one
// Streamlit button per label, which cost the browser about 10 ms each on every key press.  A click
// sends {token, label}; Python saves it through the same callback as the focused item's buttons.
// Every text here is data and reaches the page only through textContent and title.

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".ccrl");
  if (!root) {
    root = document.createElement("div");
    root.className = "ccrl";
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", "Label this cited chunk");
    parentElement.appendChild(root);
    root.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-label]");
      if (!b || !root.contains(b)) return;
      root.__send("label", { token: root.__token, label: b.dataset.label });
    });
  }
  root.__send = setTriggerValue;
  root.__token = String(data && data.token || "");
  const shown = JSON.stringify(data);
  if (root.__shown === shown) return;  // the same row drawn again: nothing to redo
  root.__shown = shown;
  const labels = Array.isArray(data && data.labels) ? data.labels : [];
  root.replaceChildren(...labels.map((entry) => {
    const [label, text, help] = Array.isArray(entry) ? entry : [];
    const b = document.createElement("button");
    b.type = "button";
    b.className = "ccrl-b";
    b.dataset.label = String(label || "");
    const chosen = label === data.chosen;
    b.textContent = (chosen ? "\u2713 " : "") + String(text || "");
    b.setAttribute("aria-pressed", chosen ? "true" : "false");
    if (chosen) b.classList.add("ccrl-chosen");
    if (help) b.title = String(help);
    return b;
  }));
}
