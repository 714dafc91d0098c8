// The "Remember" form: store a fact as the user, then say what it did to what memory
// believes (new, replaced an older value, or already held), as `shiyi memory add` does.
import { Memory } from "./api.js";

const $ = (selector) => document.querySelector(selector);

export function outcomeText(fact) {
  const stored = fact.key ? `${fact.key}: ${fact.value}` : fact.value;
  if (fact.outcome === "confirmed") return `Already remembered: ${stored} (confirmed; no copy made).`;
  const replaced = fact.replaces.map((old) => `“${old.value}”`).join(", ");
  if (replaced) return `Remembered: ${stored}. It replaces ${replaced} (kept in history).`;
  return `Remembered: ${stored}.`;
}

export function installRemember(reload, showError) {
  const form = $("#remember");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = form.elements.text.value.trim();
    if (!text) return;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    showError(null);
    try {
      const body = { text, kind: form.elements.kind.value, key: form.elements.key.value.trim() };
      const fact = await Memory.add(body);
      form.elements.text.value = "";
      form.elements.key.value = "";
      await reload();
      $("#status").textContent = outcomeText(fact);
      form.elements.text.focus(); // the next thing to remember
    } catch (error) {
      showError(error);
    } finally {
      button.disabled = false;
    }
  });
}
