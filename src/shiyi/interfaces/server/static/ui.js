// DOM helpers, formatting and the memory card (seed 001 6.1). Text always goes in as
// text nodes: memories are never parsed as HTML.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
const ICONS = {
  // Brain (semantic), Clock (episodic), Workflow (procedural), Users (shared): line icons.
  semantic: [
    "M9 4a3 3 0 0 0-3 3v.5A3 3 0 0 0 4 10.3 3 3 0 0 0 5 15a3 3 0 0 0 4 4.5V4z",
    "M15 4a3 3 0 0 1 3 3v.5a3 3 0 0 1 2 2.8A3 3 0 0 1 19 15a3 3 0 0 1-4 4.5V4z",
    "M9 4a3 3 0 0 1 6 0M9 19.5a3 3 0 0 0 6 0",
  ],
  episodic: ["M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z", "M12 7v5l3 2"],
  procedural: [
    "M3 4h7v6H3zM14 14h7v6h-7z",
    "M6.5 10v4a2 2 0 0 0 2 2H14",
    "M17.5 14v-4a2 2 0 0 0-2-2H10",
  ],
  shared: [
    "M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8z",
    "M2 21v-1a6 6 0 0 1 12 0v1",
    "M16 3.5a4 4 0 0 1 0 7.5M22 21v-1a6 6 0 0 0-4-5.6",
  ],
};

export function icon(family) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.8");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  for (const d of ICONS[family] || ICONS.semantic) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return h("span", { class: "icon" }, svg);
}

export const FAMILIES = {
  semantic: ["semantic", "preference", "decision", "convention"],
  episodic: ["episodic", "mood"],
  procedural: ["procedural", "todo"],
};

export function familyOf(kind, scope) {
  if (scope === "workspace") return "shared";
  for (const [family, kinds] of Object.entries(FAMILIES)) if (kinds.includes(kind)) return family;
  return "semantic";
}

// Units of age(), largest first: a difference is told in the largest unit it reaches
// (40 days: 1 month, not 40 days' worth of the next smaller unit's name).
const AGE_UNITS = [
  [86400 * 365, "y"], [86400 * 30, "mo"], [86400, "d"], [3600, "h"], [60, "min"],
];

// How long ago `seconds` (epoch) was, seen at `now` (epoch seconds; default: this moment).
// A time ahead of the clock (another machine's skew, a scheduled date) says "in …".
export function age(seconds, now = Date.now() / 1000) {
  if (seconds === null || seconds === undefined || !Number.isFinite(Number(seconds))) return "–";
  const diff = now - Number(seconds);
  const size = Math.abs(diff);
  if (size < 60) return "just now";
  const [step, unit] = AGE_UNITS.find(([unitSeconds]) => size >= unitSeconds);
  const count = Math.floor(size / step);
  return diff < 0 ? `in ${count} ${unit}` : `${count} ${unit} ago`;
}

export function when(seconds) {
  return new Date(seconds * 1000).toLocaleString();
}

export const percent = (value) => `${Math.round(value * 100)}%`;

export function factText(fact) {
  return fact.key ? `${fact.key}: ${fact.value}` : fact.value;
}

export const plural = (count, word) => `${count} ${count === 1 ? word : `${word}s`}`;

// Where a fact came from, counted from its source turns (not its evidence count, which
// counts observations: one turn read twice is two observations).
const ORIGINS = {
  explicit: "Saved on request",
  import: "Imported",
  archive: "Run archive",
};

export function sourceText(fact) {
  let origin = ORIGINS[fact.source] || "No source turn recorded";
  if (fact.source_turns) {
    origin = `From ${plural(fact.source_turns, "turn")} in ${plural(fact.source_sessions, "session")}`;
  } else if (fact.source_events.length) {
    origin = "Source turns no longer remembered";
  }
  return fact.evidence_count > 1 ? `${origin}, observed ${fact.evidence_count} times` : origin;
}

// The status a fact is in, when it is not simply current: superseded, pending (a conflict
// when it contradicts an active fact) or expired.
export function statusBadge(fact) {
  if (fact.status === "active") return null;
  const conflict = fact.status === "pending" && fact.conflicts_with;
  const label = conflict ? "conflict" : fact.status;
  return h("span", { class: `badge status ${fact.status}${conflict ? " conflict" : ""}` }, label);
}

// What ended a superseded version: its newer version and when.
export function endedNote(fact) {
  if (fact.status !== "superseded") return null;
  const parts = [];
  if (fact.replaced_by) parts.push(`replaced by “${factText(fact.replaced_by)}”`);
  if (fact.valid_to) parts.push(`ended ${age(fact.valid_to)}`);
  if (!parts.length) parts.push("replaced by a newer version");
  return h("span", { class: "ended", title: fact.valid_to ? when(fact.valid_to) : undefined },
    parts.join(", "));
}

// "3" or "2 current, 1 superseded": how many of a list's facts are past versions.
export function versionCount(facts) {
  const past = facts.filter((fact) => fact.status === "superseded").length;
  return past ? `${facts.length - past} current, ${past} superseded` : String(facts.length);
}

// One fact in a list (entity view, session timeline): kind, status, text, what replaced it.
export function factLine(fact, ...extra) {
  return h(
    "li",
    { "data-fact": fact.id, class: `fact-line ${fact.status}` },
    h("span", { class: "badge" }, fact.kind), " ", statusBadge(fact), " ",
    h("span", { class: "fact-text" }, factText(fact)), " ",
    endedNote(fact), ...extra,
  );
}

// A memory card: a fact (editable) or a remembered turn (an event: read-only).
export function card(item, handlers) {
  const isFact = item.node === "fact";
  const kind = isFact ? item.kind : "episodic";
  const family = familyOf(kind, isFact ? item.scope : "user");
  const text = isFact ? factText(item) : item.text;
  const label = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  const head = h(
    "div",
    { class: "card-head" },
    icon(family),
    h("span", { class: "badge" }, isFact ? kind : "turn"),
    family === "shared" ? h("span", { class: "badge" }, "shared") : null,
    isFact ? statusBadge(item) : null,
    h(
      "span",
      { class: "meta-right" },
      h("span", { title: "confidence" }, `Confidence ${percent(item.confidence)}`),
      h("time", { datetime: new Date((isFact ? item.created_at : item.ts) * 1000).toISOString(),
        title: when(isFact ? item.created_at : item.ts) }, age(isFact ? item.created_at : item.ts)),
    ),
  );
  const tags = (item.entities || []).map((name) =>
    h("button", { type: "button", class: "tag", "aria-label": `Tag ${name}: open entity`,
      onclick: () => handlers.entity(name) }, name),
  );
  const caption = h(
    "p",
    { class: "caption" },
    isFact ? sourceText(item) : "A remembered turn",
    " · ",
    `Agent: ${isFact ? item.agent_id : "shiyi"}`,
    tags.length ? " · Tags:" : null,
    tags,
  );
  const actions = h(
    "div",
    { class: "card-actions" },
    isFact
      ? h("button", { type: "button", class: "edit", "aria-label": `Edit: ${label}`,
          onclick: (e) => handlers.edit(item, e.currentTarget) }, "Edit")
      : null,
    h("button", { type: "button", class: "delete", "aria-label": `Delete: ${label}`,
      onclick: (e) => handlers.remove(item, e.currentTarget) }, "Delete"),
  );
  return h(
    "li",
    {},
    h(
      "article",
      { class: `card ${family}`, "data-id": item.id, "aria-label": `${kind} memory`,
        "data-status": isFact ? item.status : undefined },
      head,
      h("p", { class: "body", title: text }, text),
      isFact ? endedNote(item) : null,
      h("div", { class: "card-foot" }, caption, actions),
    ),
  );
}
