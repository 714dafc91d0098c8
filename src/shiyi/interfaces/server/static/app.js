// The memory page: health panel, tabs, search and filters, memory cards, edit/delete,
// expired clean-up, conflict resolution, entity view and session timelines.
import { ApiError, Memory, hasToken, onTokenNeeded, setToken } from "./api.js";
import { loadCaches } from "./caches.js";
import { installKnowledge, loadKnowledge } from "./knowledge.js";
import { installRemember } from "./remember.js";
import { installTimeline, loadSessions } from "./timeline.js";
import { FAMILIES, age, card, factLine, factText, familyOf, h, percent, versionCount, when } from "./ui.js";

const $ = (selector, root = document) => root.querySelector(selector);
const TAB_KINDS = { ...FAMILIES, all: [], shared: [] };
const state = { tab: "all", items: [] };

// --- dialogs: native <dialog> (modal, Escape closes); focus returns to the opener ----------

function openDialog(dialog, opener, focusSelector) {
  dialog._opener = opener || document.activeElement;
  for (const error of dialog.querySelectorAll(".error")) error.hidden = true;
  if (!dialog.open) dialog.showModal();
  const target = focusSelector ? $(focusSelector, dialog) : null;
  (target || dialog.querySelector("input, textarea, select, button:not([data-close])"))?.focus();
}

function dialogError(dialog, error) {
  const box = dialog.querySelector(".error");
  box.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
  box.hidden = false;
}

for (const dialog of document.querySelectorAll("dialog")) {
  dialog.addEventListener("close", () => {
    const opener = dialog._opener;
    if (opener && opener.isConnected) opener.focus();
    else $("#results").focus();
  });
  for (const button of dialog.querySelectorAll("[data-close]")) {
    button.addEventListener("click", () => dialog.close("cancel"));
  }
}

function showError(error) {
  const box = $("#error");
  if (!error) {
    box.hidden = true;
    return;
  }
  box.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
  box.hidden = false;
}

// --- token --------------------------------------------------------------------------------

onTokenNeeded(
  () =>
    new Promise((resolve) => {
      const dialog = $("#token-dialog");
      const form = $("#token-form");
      const done = (ok) => {
        form.removeEventListener("submit", submit);
        dialog.removeEventListener("close", cancel);
        resolve(ok);
      };
      const submit = (event) => {
        event.preventDefault();
        setToken($("#token-input").value.trim());
        $("#token-button").hidden = false;
        done(true);
        dialog.close("ok");
      };
      const cancel = () => done(false);
      form.addEventListener("submit", submit);
      dialog.addEventListener("close", cancel);
      openDialog(dialog, document.activeElement, "#token-input");
    }),
);
$("#token-button").hidden = !hasToken();
$("#token-button").addEventListener("click", () => {
  setToken("");
  location.reload();
});

// --- health panel -----------------------------------------------------------------------

async function loadOverview() {
  const o = await Memory.overview();
  $("#stat-total").textContent = String(o.total);
  $("#stat-confidence").textContent =
    o.average_confidence === null ? "–" : percent(o.average_confidence);
  $("#stat-expired").textContent = String(o.expired);
  $("#stat-conflicts").textContent = String(o.conflicts);
}

// --- tabs ---------------------------------------------------------------------------------

const tabs = [...document.querySelectorAll('[role="tab"]')];

function selectTab(tab, focus = false) {
  state.tab = tab.dataset.tab;
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
  }
  $("#panel").setAttribute("aria-labelledby", tab.id);
  if (focus) tab.focus();
  const special = state.tab === "knowledge" || state.tab === "sessions";
  $("#search").hidden = special;
  $("#results").hidden = special;
  $("#knowledge").hidden = state.tab !== "knowledge";
  $("#sessions").hidden = state.tab !== "sessions";
  $("#status").textContent = "";
  if (state.tab === "sessions") loadSessions().catch(showError);
  else if (state.tab === "knowledge") loadKnowledge().catch(showError);
  else if (!special) refresh().catch(showError);
}

for (const tab of tabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (event) => {
    const at = tabs.indexOf(tab);
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[
      event.key
    ];
    if (next === undefined) return;
    event.preventDefault();
    selectTab(tabs[(next + tabs.length) % tabs.length], true);
  });
}

// --- search and the list ------------------------------------------------------------------

function filters() {
  const form = $("#search");
  const value = (name) => form.elements[name].value.trim();
  let kinds = TAB_KINDS[state.tab] || [];
  const kind = value("kind");
  if (kind) kinds = kinds.length && !kinds.includes(kind) ? ["none"] : [kind];
  let scopes = value("scope") ? [value("scope")] : [];
  if (state.tab === "shared") scopes = scopes.length && scopes[0] !== "workspace" ? ["none"] : ["workspace"];
  const since = value("since") ? new Date(`${value("since")}T00:00:00`).getTime() / 1000 : null;
  const until = value("until") ? new Date(`${value("until")}T23:59:59`).getTime() / 1000 : null;
  return { q: value("q"), kinds, scopes, tag: value("tag"), since, until, kind };
}

function eventAllowed(hit, f) {
  if (!["all", "episodic"].includes(state.tab) || f.scopes.length) return false;
  if (f.kind && f.kind !== "episodic") return false;
  if (f.tag && !hit.entities.includes(f.tag.toLowerCase())) return false;
  return (f.since === null || hit.ts >= f.since) && (f.until === null || hit.ts <= f.until);
}

async function refresh() {
  showError(null);
  const f = filters();
  if (f.kinds.includes("none") || f.scopes.includes("none")) return render([], f);
  const params = {
    kind: f.kinds,
    scope: f.scopes,
    entity: f.tag,
    since: f.since,
    until: f.until,
  };
  let items;
  let runsTotal = null;
  if (f.q) {
    const kinds = f.kinds.length ? f.kinds : undefined;
    const { hits, read_as: readAs } = await Memory.search(f.q, { limit: 50, kind: kinds });
    f.readAs = readAs || {};
    const ids = hits.filter((hit) => hit.node === "fact").map((hit) => hit.id);
    const found = ids.length ? (await Memory.facts({ ...params, ids, limit: 200 })).facts : [];
    const byId = new Map(found.map((fact) => [fact.id, { ...fact, node: "fact" }]));
    items = hits
      .map((hit) => (hit.node === "fact" ? byId.get(hit.id) : eventAllowed(hit, f) ? hit : null))
      .filter(Boolean);
  } else {
    // Run archives (one per finished run) are listed apart, so that they neither crowd out
    // nor use up the page's room for the other memories.
    const [page, runs] = await Promise.all([
      Memory.facts({ ...params, not_source: "archive", limit: 200 }),
      Memory.facts({ ...params, source: "archive", limit: RUNS_SHOWN }),
    ]);
    items = [...page.facts, ...runs.facts].map((fact) => ({ ...fact, node: "fact" }));
    runsTotal = runs.total;
  }
  render(items, f, runsTotal);
}

const RUNS_SHOWN = 50;
const isRun = (item) => item.node === "fact" && item.source === "archive";

// "Past runs (N)": the run archives in one group, collapsed while browsing, open for a
// search that found some (a search never hides them).
function runsGroup(runs, total, searching) {
  const more = total > runs.length ? ` (newest ${runs.length} shown)` : "";
  return h(
    "li",
    { class: "runs" },
    h(
      "details",
      { open: searching },
      h("summary", {}, `Past runs (${total})${more}`),
      h("ul", { class: "cards", "aria-label": "Past runs" }, runs.map((item) => card(item, handlers))),
    ),
  );
}

const handlers = { edit: openEdit, remove: confirmDelete, entity: openEntity };

function render(items, f, runsTotal = null) {
  state.items = items;
  const list = $("#results");
  const runs = items.filter(isRun);
  const others = items.filter((item) => !isRun(item));
  const total = runsTotal === null ? runs.length : runsTotal;
  list.replaceChildren(...others.map((item) => card(item, handlers)));
  if (total) list.append(runsGroup(runs, total, Boolean(f.q)));
  let count = `${others.length} ${others.length === 1 ? "memory" : "memories"}`;
  if (total) count += ` and ${total} past ${total === 1 ? "run" : "runs"}`;
  // how the search read the query's typing slips: "resturant" searched as "restaurant"
  const read = Object.entries(f.readAs || {}).map(([slip, word]) => `“${slip}” as “${word}”`);
  const searched = read.length ? ` (searched ${read.join(", ")})` : "";
  // a search ranks every memory it reaches: "found" had read as "matched" for unrelated ones
  $("#status").textContent = f.q ? `${count}, closest first, for “${f.q}”${searched}` : count;
  if (!items.length) {
    list.append(h("li", { class: "empty" }, f.q ? "Nothing matches this search." : "No memories here yet."));
  }
}

$("#search").addEventListener("submit", (event) => {
  event.preventDefault();
  refresh().catch(showError);
});
$("#search").addEventListener("reset", () => setTimeout(() => refresh().catch(showError)));
for (const name of ["kind", "scope", "since", "until"]) {
  $("#search").elements[name].addEventListener("change", () => refresh().catch(showError));
}

async function reloadAll(focusId, focusClass) {
  await Promise.all([refresh(), loadOverview()]);
  const target = focusId && $(`[data-id="${CSS.escape(focusId)}"] .${focusClass}`);
  if (target) target.focus();
}

// --- edit and delete ------------------------------------------------------------------------

let editing = null;

function openEdit(fact, opener) {
  editing = fact;
  const form = $("#edit-form");
  form.elements.key.value = fact.key;
  form.elements.value.value = fact.value;
  form.elements.kind.value = fact.kind;
  form.elements.confidence.value = String(Math.round(fact.confidence * 100));
  openDialog($("#edit-dialog"), opener, "#edit-value");
}

$("#edit-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const dialog = $("#edit-dialog");
  const form = event.currentTarget;
  const body = {
    key: form.elements.key.value.trim(),
    // A copy of the key typed before the value ("lives in: Paris", as the card shows it)
    // is dropped by the server.
    value: form.elements.value.value.trim(),
    kind: form.elements.kind.value,
    confidence: Number(form.elements.confidence.value) / 100,
  };
  try {
    await Memory.patch(editing.id, body);
  } catch (error) {
    dialogError(dialog, error);
    return;
  }
  dialog.close("save");
  await reloadAll(editing.id, "edit").catch(showError);
  $("#status").textContent = "Saved. " + $("#status").textContent;
});
// Enter saves from the text area too (Shift+Enter adds a line).
$("#edit-value").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("#edit-form").requestSubmit();
  }
});

let confirmAction = null;

function openConfirm(title, text, items, action, opener, okLabel = "Delete") {
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  $("#confirm-list").replaceChildren(...items.map((item) => h("li", {}, item)));
  $("#confirm-ok").textContent = okLabel;
  $("#confirm-ok").hidden = !action;
  confirmAction = action;
  openDialog($("#confirm-dialog"), opener, action ? "#confirm-ok" : "[data-close]");
}

$("#confirm-dialog form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const dialog = $("#confirm-dialog");
  let note = "";
  try {
    // An action may answer with a note for the status line (a forget: bytes left on disk).
    if (confirmAction) note = (await confirmAction()) || "";
  } catch (error) {
    dialogError(dialog, error);
    return;
  }
  dialog.close("ok");
  await reloadAll().catch(showError);
  if (note) $("#status").textContent = `${note} ${$("#status").textContent}`;
});

function confirmDelete(item, opener) {
  const text = item.node === "fact" ? factText(item) : item.text;
  openConfirm(
    "Delete memory? 删除记忆？",
    "It is removed from the graph, the vectors, the keyword index and every copy derived from " +
      "it. This cannot be undone.",
    [text],
    async () => {
      const report = await Memory.remove(item.id);
      return report && report.bytes_remain && report.bytes_remain.length
        ? `Deleted; ${report.note}`
        : "Deleted.";
    },
    opener,
  );
}

$("#stat-expired-button").addEventListener("click", async (event) => {
  const opener = event.currentTarget;
  try {
    const { facts } = await Memory.expired();
    if (!facts.length) {
      openConfirm("No expired memories", "Nothing to clean up. 没有过期记忆。", [], null, opener);
      return;
    }
    openConfirm(
      `Clean up ${facts.length} expired ${facts.length === 1 ? "memory" : "memories"}?`,
      "These short-term memories passed their time to live. They will be deleted for good.",
      facts.map((fact) => `${factText(fact)} (${fact.kind}, expired ${age(fact.updated_at)})`),
      () => Memory.cleanup(facts.map((fact) => fact.id)),
      opener,
      `Delete ${facts.length}`,
    );
  } catch (error) {
    showError(error);
  }
});

// --- conflicts ------------------------------------------------------------------------------

function version(fact, which, pendingId) {
  const label = which === "new" ? "New version (pending)" : "Current version";
  return h(
    "div",
    { class: `version card ${familyOf(fact.kind, fact.scope)}` },
    h("h3", {}, label),
    h("p", { class: "body" }, factText(fact)),
    h("p", { class: "caption" }, `Confidence ${percent(fact.confidence)} · ${when(fact.created_at)}`),
    h(
      "button",
      {
        type: "button",
        class: "primary",
        "data-keep": which,
        "aria-label": `Keep the ${which === "new" ? "new" : "current"} version: ${factText(fact)}`,
        onclick: () => resolveConflict(pendingId, which),
      },
      which === "new" ? "Keep new" : "Keep current",
    ),
  );
}

async function loadConflicts() {
  const { conflicts } = await Memory.conflicts();
  const list = $("#conflicts-list");
  list.replaceChildren(
    ...conflicts.map(({ pending, current }) =>
      h(
        "div",
        { class: "pair", role: "group", "aria-label": `Conflict about ${pending.key || "a fact"}` },
        current
          ? version(current, "old", pending.id)
          : h("p", {}, "The fact it contradicted is gone."),
        version(pending, "new", pending.id),
      ),
    ),
  );
  if (!conflicts.length) list.append(h("p", { class: "empty" }, "No open conflicts. 没有冲突。"));
  return conflicts.length;
}

async function resolveConflict(id, keep) {
  const dialog = $("#conflicts-dialog");
  try {
    await Memory.resolve(id, keep);
    await loadConflicts();
  } catch (error) {
    dialogError(dialog, error);
    return;
  }
  (dialog.querySelector("[data-keep]") || dialog.querySelector("[data-close]")).focus();
  reloadAll().catch(showError);
}

$("#stat-conflicts-button").addEventListener("click", async (event) => {
  const opener = event.currentTarget;
  try {
    await loadConflicts();
  } catch (error) {
    showError(error);
    return;
  }
  openDialog($("#conflicts-dialog"), opener, "[data-keep]");
});

// --- entity view ----------------------------------------------------------------------------

async function openEntity(name, opener) {
  const dialog = $("#entity-dialog");
  const body = $("#entity-body");
  $("#entity-title").textContent = `Entity: ${name}`;
  body.replaceChildren(h("p", {}, "Loading…"));
  openDialog(dialog, dialog.open ? dialog._opener : opener || document.activeElement, "[data-close]");
  let view;
  try {
    view = await Memory.entity(name);
  } catch (error) {
    body.replaceChildren();
    dialogError(dialog, error);
    return;
  }
  const { entity, facts, neighbours, events } = view;
  $("#entity-title").textContent = `Entity: ${entity.display || entity.name}`;
  const neighbourItems = neighbours.map((n) =>
    h(
      "li",
      {},
      h(
        "button",
        { type: "button", class: "tag neighbour", onclick: () => openEntity(n.name) },
        n.direction === "out" ? `${n.relation} → ${n.name}` : `${n.name} → ${n.relation}`,
      ),
    ),
  );
  body.replaceChildren(
    h("p", { class: "caption" }, `Type: ${entity.type}`,
      entity.aliases.length ? ` · Also called: ${entity.aliases.join(", ")}` : ""),
    h("h3", {}, `Neighbours (${neighbours.length})`),
    neighbours.length ? h("ul", { class: "neighbours" }, neighbourItems) : h("p", {}, "No related entities."),
    h("h3", {}, `Memories (${versionCount(facts)})`),
    h("ul", { class: "mini entity-facts" }, facts.map((fact) => factLine(fact))),
    h("h3", {}, `Mentioned in ${events.length} ${events.length === 1 ? "turn" : "turns"}`),
    h("ul", { class: "mini" },
      events.slice(0, 20).map((e) => h("li", {}, `${e.role}: ${e.content.slice(0, 160)}`))),
  );
  dialog.querySelector(".neighbour, [data-close]").focus();
}

// --- start ----------------------------------------------------------------------------------

installTimeline(showError);
installKnowledge();
installRemember(() => reloadAll(), showError);
loadOverview().catch(showError);
loadCaches().catch(showError);
refresh().catch(showError);
