// The console's shell: sign-in, the token's scopes (GET /v1/whoami), and the views by URL
// fragment (#screens, #screens/home, #syncs/ID, …) so Back works and every view has a link.

import { get, session, ApiError } from "./api.js";
import { el } from "./ui.js";
import screens from "./screens.js";
import syncs from "./syncs.js";
import cohorts from "./cohorts.js";
import experiments from "./experiments.js";
import hub from "./hub.js";
import components from "./components.js";
import webhooks from "./webhooks.js";

const views = { screens, syncs, cohorts, experiments, hub, components, webhooks };
const $ = (id) => document.getElementById(id);

const state = { who: null, stop: null, route: null };
/** Whether the signed-in token may make changes of `scope` (the hub checks every call anyway). */
const can = (scope) => Boolean(state.who?.allows.includes(scope));
window.consoleState = state; // for tests and the curious

async function signIn(token) {
  const who = await get("/v1/whoami", { token });
  session.token = token;
  state.who = who;
  $("sign-in").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  $("who-name").textContent = `${who.name} (${who.scopes.join(", ")})`;
  const changes = ["publish", "sync", "experiment"].filter(can);
  $("read-only").hidden = changes.length === 3;
  $("read-only").textContent = changes.length
    ? `This token may change: ${changes.join(", ")}. Other changes are disabled.`
    : "This token can read only: every view is shown, every change is disabled (the hub refuses them too).";
  if (!location.hash) location.hash = "#screens";
  else show();
}

function signOut() {
  state.stop?.();
  session.token = null;
  state.who = null;
  $("nav").hidden = true;
  $("who").hidden = true;
  $("read-only").hidden = true;
  $("view").replaceChildren();
  $("sign-in").hidden = false;
  $("token").value = "";
  $("sign-in-message").textContent = "";
  $("token").removeAttribute("aria-invalid");
  $("token").focus();
}

function show() {
  if (!state.who) return;
  const [name, ...rest] = location.hash.slice(1).split("/");
  const view = views[name] ?? views.screens;
  const argument = rest.length ? decodeURIComponent(rest.join("/")) : null;
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.view === (views[name] ? name : "screens")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  state.stop?.();
  const root = el("div", { className: "view", dataset: { view: views[name] ? name : "screens" } });
  $("view").replaceChildren(root);
  const route = location.hash;
  // A new view replaced the element that had the focus: start the keyboard at its content.
  const moved = state.route !== null && state.route !== route;
  state.route = route;
  state.stop = view({ root, argument, can, who: state.who, navigate: (hash) => (location.hash = hash) }) ?? null;
  if (moved) $("main").focus({ preventScroll: true });
  document.title = `${root.querySelector("h2")?.textContent ?? "Console"} · PushHub console`;
}

window.addEventListener("hashchange", show);
window.addEventListener("pushhub:unauthorized", () => {
  if (!state.who) return;  // a sign-in attempt: its form says why
  signOut();
  $("sign-in-message").textContent = "The hub no longer accepts this token (revoked, or the hub has another root token): sign in again.";
});
$("sign-out").addEventListener("click", signOut);
$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = $("token").value.trim();
  try {
    await signIn(token);
  } catch (error) {
    $("sign-in-message").textContent = error instanceof ApiError && error.status === 401
      ? "The hub refused this token (401): check it, or ask for a new one."
      : error.message;
    $("token").setAttribute("aria-invalid", "true");
  }
});

(async () => {
  const saved = session.token;
  if (saved) {
    try {
      await signIn(saved);
    } catch {
      signOut();
    }
  } else {
    signOut();
  }
  window.consoleReady = true;
})();
