// The Scripts section of the memory page: the scripts the agent saved (its `scripts` tool),
// each with Show (description, usage, parameters, body) and Delete (files and the
// procedural memory of it). Its own module and dialogs, so the tabs above stay untouched.
import { ApiError, api } from "./api.js";
import { h, when } from "./ui.js";

const $ = (selector) => document.querySelector(selector);
const path = (name) => `/v1/scripts/${encodeURIComponent(name)}`;
export const Scripts = {
  list: () => api("GET", "/v1/scripts"),
  get: (name) => api("GET", path(name)),
  remove: (name) => api("DELETE", path(name)),
};

function say(text) {
  $("#scripts-status").textContent = text;
}

function problem(box, error) {
  box.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
  box.hidden = false;
}

function open(dialog, opener, focus) {
  dialog._opener = opener; // the page's dialog handler returns focus there on close
  dialog.querySelector(".error").hidden = true;
  if (!dialog.open) dialog.showModal();
  dialog.querySelector(focus).focus();
}

function row(script) {
  return h(
    "li",
    { class: "script", dataset: { name: script.name } },
    h("div", { class: "script-head" },
      h("code", { class: "script-usage" }, script.usage),
      h("span", { class: "tag" }, script.language)),
    h("p", { class: "script-description" }, script.description),
    h("p", { class: "caption" }, `Saved ${when(script.updated_at)}`),
    h("div", { class: "script-actions" },
      h("button", { type: "button", class: "ghost", "aria-label": `Show script ${script.name}`,
        onclick: (event) => showScript(script.name, event.currentTarget) }, "Show"),
      h("button", { type: "button", class: "ghost", "aria-label": `Delete script ${script.name}`,
        onclick: (event) => confirmDelete(script, event.currentTarget) }, "Delete")),
  );
}

export async function loadScripts() {
  const { scripts } = await Scripts.list();
  $("#scripts-list").replaceChildren(...scripts.map(row));
  const count = `${scripts.length} ${scripts.length === 1 ? "script" : "scripts"}`;
  say(scripts.length ? count : "No saved scripts yet. 还没有保存的脚本。");
}

async function showScript(name, opener) {
  const dialog = $("#script-dialog");
  $("#script-title").textContent = `Script ${name}`;
  $("#script-detail").replaceChildren(h("p", {}, "Loading…"));
  open(dialog, opener, "[data-close]");
  let script;
  try {
    script = await Scripts.get(name);
  } catch (error) {
    $("#script-detail").replaceChildren();
    problem(dialog.querySelector(".error"), error);
    return;
  }
  const params = script.parameters.map((p) =>
    h("li", {}, h("code", {}, p.name), p.required ? "" : " (optional)",
      p.description ? ` — ${p.description}` : ""));
  $("#script-detail").replaceChildren(
    h("p", {}, script.description),
    h("p", { class: "caption" }, `${script.language} · usage `, h("code", {}, script.usage),
      ` · saved by ${script.saved_by || "unknown"} ${when(script.updated_at)}`),
    params.length ? h("ul", { class: "mini" }, params) : "",
    h("pre", { class: "script-code", tabindex: "0", "aria-label": `Body of ${name}` }, script.body),
  );
}

let deleting = null;

function confirmDelete(script, opener) {
  deleting = script.name;
  $("#script-confirm-text").textContent =
    `Delete the script ${script.name} and forget the procedural memory of it? ` +
    "This cannot be undone.";
  open($("#script-confirm"), opener, "#script-confirm-ok");
}

$("#script-confirm form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const dialog = $("#script-confirm");
  let report;
  try {
    report = await Scripts.remove(deleting);
  } catch (error) {
    problem(dialog.querySelector(".error"), error);
    return;
  }
  dialog._opener = $("#scripts-title");
  dialog.close("ok");
  await loadScripts().catch((error) => problem($("#scripts-error"), error));
  const memories = report.forgotten === 1 ? "memory" : "memories";
  say(`Deleted ${report.name} (${report.forgotten} procedural ${memories} forgotten). ` +
    $("#scripts-status").textContent);
});

loadScripts().catch((error) => problem($("#scripts-error"), error));
