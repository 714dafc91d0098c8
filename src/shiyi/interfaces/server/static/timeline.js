// The Sessions tab: a session's remembered turns in order, and the memories derived from
// them, each linking to the turn (anchor run:iteration:segment) it came from.
import { Memory } from "./api.js";
import { age, factLine, h, versionCount, when } from "./ui.js";

const $ = (selector, root = document) => root.querySelector(selector);

export async function loadSessions() {
  const select = $("#session-select");
  const { sessions } = await Memory.sessions();
  const chosen = select.value;
  select.replaceChildren(
    h("option", { value: "" }, sessions.length ? "Choose a session…" : "No sessions yet"),
    ...sessions.map((s) =>
      h("option", { value: s.id }, `${s.title || "untitled"} · ${s.message_count} messages · ${age(s.updated_at)} (${s.id})`),
    ),
  );
  if (chosen && sessions.some((s) => s.id === chosen)) select.value = chosen;
  if (select.value) await loadTimeline(select.value);
}

function turnFor(fact, events) {
  return (
    events.find((e) => fact.anchor && e.anchor === fact.anchor) ||
    events.find((e) => fact.source_events.includes(e.id))
  );
}

async function loadTimeline(id) {
  const box = $("#timeline");
  if (!id) return box.replaceChildren();
  const { title, events, facts } = await Memory.timeline(id);
  const derivedCount = new Map();
  const line = (fact) => {
    const turn = turnFor(fact, events);
    if (turn) derivedCount.set(turn.id, (derivedCount.get(turn.id) || 0) + 1);
    return factLine(
      fact,
      " ",
      turn
        ? h("a", { href: `#turn-${turn.id}`, class: "turn-link", onclick: (ev) => jump(ev, turn.id) },
            `from turn ${turn.anchor}`)
        : h("span", { class: "caption" }, "(turn not remembered)"),
    );
  };
  // Run archives (one per finished run) apart and collapsed, as on the memory list.
  const runs = facts.filter((fact) => fact.source === "archive");
  const learned = facts.filter((fact) => fact.source !== "archive");
  box.replaceChildren(
    h("h2", {}, title || id),
    h("h3", {}, `Memories derived from this session (${versionCount(learned)})`),
    learned.length ? h("ul", { class: "derived" }, learned.map(line)) : h("p", {}, "None yet."),
    ...(runs.length
      ? [h("details", { class: "runs" }, h("summary", {}, `Past runs (${runs.length})`),
          h("ul", { class: "derived" }, runs.map(line)))]
      : []),
    h("h3", {}, `Turns (${events.length})`),
    h(
      "ol",
      { class: "timeline" },
      events.map((e) =>
        h(
          "li",
          { class: "turn", id: `turn-${e.id}`, tabindex: "-1", "data-anchor": e.anchor },
          h("div", { class: "turn-head" }, h("strong", {}, e.role), h("span", {}, when(e.ts)),
            h("code", {}, e.anchor),
            derivedCount.get(e.id) ? h("span", {}, `→ ${derivedCount.get(e.id)} memory`) : null),
          h("p", {}, e.content.length > 2000 ? `${e.content.slice(0, 2000)}…` : e.content),
        ),
      ),
    ),
  );
}

function jump(event, id) {
  event.preventDefault();
  for (const old of document.querySelectorAll(".turn.highlight")) old.classList.remove("highlight");
  const turn = document.getElementById(`turn-${id}`);
  turn.classList.add("highlight");
  turn.scrollIntoView({ block: "center" });
  turn.focus();
}

export function installTimeline(showError) {
  $("#session-select").addEventListener("change", (event) =>
    loadTimeline(event.currentTarget.value).catch(showError),
  );
}

