// The inbox's only script: live refresh of the pending list over SSE (the server sends an
// event when an approval opens or is decided; the list is re-fetched as server-rendered HTML)
// and countdowns for deadlines and time locks. Everything works without it, just not live.
"use strict";

// Each card's HTML as the server last sent it (the page changes countdown texts itself).
const served = new Map();

function tick() {
  const now = Date.now();
  for (const el of document.querySelectorAll("[data-deadline]")) {
    const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - now) / 1000));
    el.textContent = left + " s left";
    el.classList.toggle("urgent", left <= 10);
  }
}

async function refresh(box) {
  try {
    const resp = await fetch(box.dataset.src, { credentials: "same-origin", cache: "no-store" });
    if (resp.status === 401 || resp.redirected) {
      window.location.assign("/inbox/login");
      return;
    }
    if (!resp.ok) return;
    const html = await resp.text();
    if (html === box.dataset.last) return;
    box.dataset.last = html;
    // Keep the cards that did not change as they are (focus, typed text, a button about to be
    // clicked); replace only what changed, and carry typed text over into replaced cards.
    const typed = {};
    for (const input of box.querySelectorAll("input[id]")) {
      if (input.type !== "hidden" && input.value) typed[input.id] = input.value;
    }
    const fresh = document.createElement("template");
    fresh.innerHTML = html;
    const next = [];
    for (const node of Array.from(fresh.content.children)) {
      const old = node.id ? document.getElementById(node.id) : null;
      const same = old && old.parentNode === box && served.get(node.id) === node.outerHTML;
      if (node.id) served.set(node.id, node.outerHTML);
      next.push(same ? old : node);
    }
    box.replaceChildren(...next);
    for (const [id, value] of Object.entries(typed)) {
      const input = document.getElementById(id);
      if (input && !input.value) input.value = value;
    }
    box.dataset.refreshed = String(Number(box.dataset.refreshed || "0") + 1);
    tick();
  } catch (_) {
    // The next event (or the reconnect) refreshes again.
  }
}

function live() {
  const box = document.getElementById("pending");
  const state = document.getElementById("live-state");
  if (!box || typeof EventSource === "undefined") return;
  const events = new EventSource("/inbox/events");
  events.addEventListener("open", () => {
    if (state) state.textContent = "connected";
    refresh(box);
  });
  events.addEventListener("error", () => {
    if (state) state.textContent = "reconnecting…";
  });
  events.addEventListener("approval", () => refresh(box));
}

document.addEventListener("DOMContentLoaded", () => {
  tick();
  setInterval(tick, 500);
  live();
});
