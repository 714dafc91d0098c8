// The Knowledge tab: the knowledge base's documents (source, sections, chunks, added, size),
// a search showing each matched chunk inside its section, and adding (a workspace path or
// uploaded files), re-indexing and removing documents.
import { ApiError, api } from "./api.js";
import { age, h, when } from "./ui.js";

const $ = (selector, root = document) => root.querySelector(selector);

export const Knowledge = {
  list: () => api("GET", "/v1/knowledge"),
  search: (q) => api("GET", "/v1/knowledge/search", { params: { q, limit: 5 } }),
  addPath: (path) => api("POST", "/v1/knowledge/paths", { body: { path } }),
  upload: (file) =>
    api("PUT", `/v1/knowledge/uploads/${encodeURIComponent(file.name)}`, { raw: file }),
  reindex: (id) => api("POST", `/v1/knowledge/${encodeURIComponent(id)}/reindex`),
  remove: (id) => api("DELETE", `/v1/knowledge/${encodeURIComponent(id)}`),
};

function say(text) {
  $("#kb-status").textContent = text;
}

function fail(error) {
  const box = $("#kb-error");
  box.hidden = !error;
  if (error)
    box.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
}

export function size(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function reported(report) {
  const parts = [];
  for (const key of ["added", "updated", "unchanged"]) {
    if (report[key].length) parts.push(`${report[key].length} ${key}`);
  }
  parts.push(`${report.chunks} chunks`);
  const failed = report.failed.map((f) => f.reason);
  return { text: parts.join(", "), failed };
}

// --- documents ------------------------------------------------------------------------------

function row(doc) {
  const source = h(
    "td",
    { class: "source" },
    h("span", { class: "doc-title" }, doc.title || doc.shown),
    h("span", { class: "caption" }, ` ${doc.shown} · ${doc.format}`),
    doc.missing ? h("span", { class: "badge status expired" }, "file missing") : null,
  );
  const name = doc.title || doc.shown;
  return h(
    "tr",
    { "data-doc": doc.id },
    source,
    h("td", { class: "num" }, String(doc.sections)),
    h("td", { class: "num" }, String(doc.chunks)),
    h("td", { title: when(doc.added_at) }, age(doc.added_at)),
    h("td", { class: "num" }, size(doc.bytes)),
    h(
      "td",
      { class: "row-actions" },
      h("button", { type: "button", class: "ghost", "aria-label": `Re-index ${name}`,
        onclick: (event) => act(() => Knowledge.reindex(doc.id), `Re-indexed ${name}`, event) },
        "Re-index"),
      h("button", { type: "button", class: "ghost danger-text", "aria-label": `Remove ${name}`,
        onclick: (event) => act(() => Knowledge.remove(doc.id), `Removed ${name}`, event) },
        "Remove"),
    ),
  );
}

export async function loadKnowledge() {
  const { documents } = await Knowledge.list();
  $("#kb-docs tbody").replaceChildren(...documents.map(row));
  $("#kb-docs").hidden = documents.length === 0;
  $("#kb-empty").hidden = documents.length !== 0;
  return documents;
}

async function act(action, done, event) {
  const button = event && event.currentTarget;
  if (button) button.disabled = true;
  fail(null);
  try {
    const report = await action();
    const result = report && report.chunks !== undefined ? reported(report) : null;
    if (result && result.failed.length) fail(result.failed.join("; "));
    say(result ? `${done}: ${result.text}` : done);
    await loadKnowledge();
  } catch (error) {
    fail(error);
  } finally {
    if (button && button.isConnected) button.disabled = false;
  }
}

// --- search -----------------------------------------------------------------------------------

// The passage (section or neighbours) with the matched chunk marked inside it.
function marked(passage) {
  const at = passage.text.indexOf(passage.chunk);
  if (at < 0) return [h("mark", {}, passage.chunk), h("p", { class: "context" }, passage.text)];
  return [
    passage.text.slice(0, at),
    h("mark", {}, passage.chunk),
    passage.text.slice(at + passage.chunk.length),
  ];
}

function passageItem(passage) {
  return h(
    "li",
    { class: "passage", "data-doc": passage.doc_id },
    h("p", { class: "where" },
      h("span", { class: "section-path" }, passage.heading_path || passage.doc_title),
      h("span", { class: "caption" }, ` · ${passage.doc_path}`)),
    h("div", { class: "passage-text" }, marked(passage)),
  );
}

async function search(event) {
  event.preventDefault();
  fail(null);
  const q = $("#kb-q").value.trim();
  if (!q) return;
  try {
    const { passages } = await Knowledge.search(q);
    $("#kb-passages").replaceChildren(...passages.map(passageItem));
    say(passages.length ? `${passages.length} passages` : "No passage matched.");
  } catch (error) {
    fail(error);
  }
}

// --- adding -----------------------------------------------------------------------------------

function addPath(event) {
  event.preventDefault();
  const path = $("#kb-path").value.trim();
  if (!path) return;
  act(() => Knowledge.addPath(path), `Added ${path}`).then(() => ($("#kb-path").value = ""));
}

async function upload() {
  const input = $("#kb-upload");
  for (const file of input.files) {
    say(`Uploading ${file.name}…`);
    await act(() => Knowledge.upload(file), `Uploaded ${file.name}`);
  }
  input.value = "";
}

export function installKnowledge() {
  $("#kb-search").addEventListener("submit", search);
  $("#kb-add-path").addEventListener("submit", addPath);
  $("#kb-upload").addEventListener("change", upload);
}
