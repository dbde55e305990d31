// A screen's release (DESIGN §15, issue 27), shown on the screen's page: the release that rolls,
// else the newest — its status, versions, percent, health against its guard (exposed, rendered,
// errored, error rate), the halt, every step and the recent render errors, read again every 2 s;
// and the actions, each confirmed with who it affects: start one (a tree editor with the QA
// cohort, percent and guard, counted by the hub's dry run), raise its percent (a dry run first:
// how many connected clients it newly exposes), promote it (every subscriber gets the candidate)
// and halt it (the exposed clients go back to the base tree).

import { get, call, screenPath, ApiError } from "./api.js";
import { el, field, input, section, table, number, when, every, debounce, statusLine, actionButton, confirmAction, showIfChanged, setFieldMessage } from "./ui.js";
import { renderScreen } from "./render.js";

const releasesPath = (name) => screenPath(name) + "/releases";
const releasePath = (name, id) => releasesPath(name) + "/" + encodeURIComponent(id);

/** A percent as the hub gives it: `10 %`, `0.5 %`. */
export const percentText = (value) => (typeof value === "number" ? `${value} %` : "–");

/** A share (0…1) as a percent with at most two decimals: 0.0291 → `2.91 %`. */
export const rateText = (value) => (typeof value === "number" ? `${Math.round(value * 10000) / 100} %` : "–");

const plural = (count, word) => `${number(count)} ${word}${count === 1 ? "" : "s"}`;

/** What an input holds for the hub: a number when it reads as one, else the text (the hub's refusal then names the field). */
const numberOrText = (text) => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text.trim());

/**
 * The release panel of screen `name`: `element` to place on its page, `stop` for when the view
 * changes. `changed` runs after an action that moved the screen's version.
 */
export function releasePanel({ name, can, changed }) {
  const summary = el("div", { className: "release-summary" });
  const steps = el("div");
  const errors = el("div");
  const status = statusLine();
  status.id = "release-action-status";

  // The actions on a rolling release.
  const raiseTo = field("New percent", input({ name: "raise_to", inputMode: "decimal", placeholder: "10" }), { hint: "only upward while it rolls" });
  const raiseButton = actionButton("Raise percent…", { scope: "publish", can, className: "primary", onclick: () => raise() });
  raiseButton.id = "raise-percent";
  const promoteButton = actionButton("Promote…", { scope: "publish", can, onclick: () => promote() });
  promoteButton.id = "promote-release";
  const haltReason = field("Reason to halt", input({ name: "halt_reason", placeholder: "carousel crashes on Android" }), { hint: "required: kept in the release's steps and the audit log" });
  const haltButton = actionButton("Halt…", { scope: "publish", can, className: "danger", onclick: () => halt() });
  haltButton.id = "halt-release";
  const controls = el("div", { className: "release-actions", id: "release-actions" },
    el("div", { className: "inline-form" }, raiseTo, raiseButton),
    el("div", { className: "inline-form" }, haltReason, haltButton, promoteButton));

  const starter = startForm({ name, can, started: (answer) => {
    status.show(`Started ${answer.release}: v${answer.version} sent to ${plural(answer.sent, "connected client")} now.`, "ok");
    load().catch(() => {});
    changed();
  } });

  const history = el("div", { className: "two" },
    el("div", {}, el("h3", {}, "Steps"), steps), el("div", {}, el("h3", {}, "Render errors"), errors));
  const element = section("Release", summary, controls, status, history, starter.element);
  element.id = "release";

  let shown = null; // the release on show, as last read

  async function load() {
    let releases;
    try {
      ({ releases } = await get(releasesPath(name)));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) { element.hidden = true; return; }
      throw error;
    }
    element.hidden = false;
    const chosen = releases.find((r) => r.status === "rolling") ?? releases[0] ?? null;
    // A release that no longer rolls changes no more: read it again only when it is another one.
    const fresh = !chosen ? null
      : chosen.status === "rolling" || chosen.release !== shown?.release || chosen.status !== shown?.status
        ? await get(releasePath(name, chosen.release)) : shown;
    shown = fresh;
    show(fresh);
  }

  function show(release) {
    const rolling = release?.status === "rolling";
    controls.hidden = !rolling;
    history.hidden = !release;
    starter.element.hidden = rolling;
    element.dataset.status = release?.status ?? "none";
    showIfChanged(summary, release, () => release ? facts(release) : el("p", { className: "empty", id: "release-none" },
      `${name} has no release yet: start one below (or hubctl screen release ${name} FILE).`));
    showIfChanged(steps, release?.steps ?? [], () => stepsTable(release?.steps ?? []));
    showIfChanged(errors, release?.health ?? null, () => errorsList(release?.health));
  }

  function facts(release) {
    const health = release.health ?? {};
    const guard = release.guard ?? {};
    const waiting = typeof guard.min_units === "number" && (health.reported ?? 0) < guard.min_units
      ? ` — it can act after ${plural(guard.min_units - (health.reported ?? 0), "more report")}` : "";
    const rows = [
      ["Release", el("span", {}, release.release, " ", el("span", { className: "badge", id: "release-status", dataset: { status: release.status } }, release.status))],
      ["Versions", `v${release.base_version} (base) → v${release.version} (candidate)`],
      ["Percent", el("span", { id: "release-percent", dataset: { percent: String(release.percent) } },
        percentText(release.percent) + (release.qa_cohort ? ` of the units, and QA cohort ${release.qa_cohort}` : " of the units"))],
      ["Exposed", el("span", { id: "release-exposed" }, number(health.exposed))],
      ["Rendered", el("span", { id: "release-rendered" }, number(health.rendered))],
      ["Errored", el("span", { id: "release-errored" }, number(health.errored))],
      ["Error rate", el("span", { id: "release-error-rate" }, `${rateText(health.error_rate)} of ${plural(health.reported ?? 0, "reporting unit")}`)],
      ["Guard", el("span", { id: "release-guard" }, `halts above ${rateText(guard.max_error_rate)} once ${plural(guard.min_units, "unit")} have reported${waiting}`)],
    ];
    if (release.halt) {
      rows.push(["Halted", el("span", { id: "release-halt" }, `${when(release.halt.at)} by ${release.halt.by}: ${release.halt.reason}`)]);
    }
    if (release.revert_version != null) rows.push(["Reverted", `v${release.revert_version} has the base tree (v${release.base_version}'s) again`]);
    if (release.message) rows.push(["Message", release.message]);
    rows.push(["Started", `${when(release.created_at)} by ${release.author ?? "–"}`]);
    return el("dl", { className: "facts" }, rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  }

  async function raise() {
    const release = shown;
    setFieldMessage(raiseTo, null);
    const percent = numberOrText(raiseTo.control.value);
    let dry;
    try {
      dry = await call("POST", releasePath(name, release.release) + "/percent?dry_run=true", { percent });
    } catch (error) {
      setFieldMessage(raiseTo, error.message);
      return;
    }
    const ok = await confirmAction({
      title: `Raise ${release.release} to ${percentText(dry.percent)}?`,
      body: [`It newly exposes ${plural(dry.newly_exposed, "connected client")}: ${number(dry.would_expose)} of ${plural(dry.subscribers, "connected subscriber")} will have v${release.version}.`,
        "The percent only goes up while the release rolls; everyone else keeps v" + release.base_version + "."],
      confirm: `Raise to ${percentText(dry.percent)}`,
    });
    if (!ok) return;
    await act("percent", { percent }, (answer) => `Raised to ${percentText(answer.percent)}: v${answer.version} sent to ${plural(answer.sent, "client")}.`, raiseTo);
  }

  async function promote() {
    const release = shown;
    const { screens } = await get("/v1/screens");
    const subscribers = screens.find((screen) => screen.name === name)?.subscribers ?? 0;
    const ok = await confirmAction({
      title: `Promote ${release.release}?`,
      body: [`All ${plural(subscribers, "subscriber")} get version ${release.version}: it becomes ${name}'s version for everyone.`,
        `The ${number(release.health?.exposed)} exposed already have it and are sent nothing new.`],
      confirm: "Promote",
    });
    if (!ok) return;
    await act("promote", {}, (answer) => `Promoted: v${answer.version} is ${name}'s version for everyone; sent to ${plural(answer.sent, "client")}.`);
  }

  async function halt() {
    const release = shown;
    const reason = haltReason.control.value.trim();
    if (!reason) {
      setFieldMessage(haltReason, "A reason is required: it is kept in the release's steps and the audit log.");
      haltReason.control.focus();
      return;
    }
    setFieldMessage(haltReason, null);
    const exposed = release.health?.exposed ?? 0;
    const ok = await confirmAction({
      title: `Halt ${release.release}?`,
      body: [`${plural(exposed, "exposed client")} go back to version ${release.base_version}: its tree is sent again, as v${release.version + 1}.`,
        "Nobody else is sent anything."],
      confirm: "Halt", danger: true,
    });
    if (!ok) return;
    await act("halt", { reason }, (answer) => `Halted: v${answer.revert_version ?? "–"} (the tree of v${answer.base_version}) sent to ${plural(answer.sent, "client")}.`, haltReason);
  }

  /** POSTs `action` to the release on show; says what happened, or shows the refusal (at `at` when given). */
  async function act(action, body, done, at = null) {
    try {
      const answer = await call("POST", releasePath(name, shown.release) + "/" + action, body);
      status.show(done(answer), "ok");
      if (at) at.control.value = "";
      shown = answer;
      show(answer);
      changed();
    } catch (error) {
      if (at) setFieldMessage(at, error.message);
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }

  const stop = every(2000, load);
  return { element, stop };
}

function stepsTable(steps) {
  if (!steps.length) return el("p", { className: "empty" }, "No steps yet.");
  return table(["When", "Who", "What", "Detail"], steps.map((step) => [
    when(step.at), step.actor, step.action,
    step.reason ?? (typeof step.percent === "number" ? percentText(step.percent) : ""),
  ]), { className: "release-steps" });
}

function errorsList(health) {
  const recent = health?.recent_errors ?? [];
  if (!recent.length) return el("p", { className: "empty" }, "No render errors reported.");
  const byComponent = Object.entries(health.errors_by_component ?? {});
  return [
    byComponent.length
      ? el("p", { className: "by-component", id: "release-by-component" }, "By component: " + byComponent.map(([component, count]) => `${component} ${number(count)}`).join(", "))
      : null,
    table(["When", "Unit", "Component", "Message"], recent.map((error) => [when(error.at), error.unit, error.component ?? "–", error.message ?? "–"]),
      { caption: `The latest ${recent.length}`, className: "release-errors" }),
  ].filter(Boolean);
}

/**
 * The form that starts a release: the candidate tree (starting as the current one, drawn as the
 * demo page draws it), the QA cohort, the percent and the guard, with the hub's dry-run count of
 * the connected subscribers who would get it now.
 */
function startForm({ name, can, started }) {
  const tree = field("Candidate tree (JSON)", el("textarea", { name: "release_tree", rows: 14, spellcheck: false }),
    { hint: "the screen's next version; it starts as the current tree" });
  const qaCohort = field("QA cohort", input({ name: "qa_cohort", placeholder: "qa" }), { hint: "always gets the candidate (empty: none)" });
  const percent = field("Percent", input({ name: "release_percent", inputMode: "decimal", value: "0" }), { hint: "of the other units, 0 to 100 (0: the QA cohort only)" });
  const maxErrorRate = field("Max error rate", input({ name: "max_error_rate", inputMode: "decimal", value: "0.02" }), { hint: "the guard halts above this share of render errors (0 to 1)" });
  const minUnits = field("Min units", input({ name: "min_units", inputMode: "numeric", value: "50" }), { hint: "…once this many units have reported" });
  const message = field("Message", input({ name: "release_message" }), { hint: "why, one line (optional)" });
  const reach = el("output", { id: "release-dry-run", className: "count", "aria-live": "polite" }, "…");
  const preview = el("div", { className: "release-preview" });
  const status = statusLine();
  const startButton = actionButton("Start release…", { scope: "publish", can, className: "primary", onclick: () => start() });
  startButton.id = "start-release";
  const fields = { tree, qa_cohort: qaCohort, percent, max_error_rate: maxErrorRate, min_units: minUnits, message };

  const details = el("details", { className: "start-release", id: "start-release-form" },
    el("summary", {}, "Start a release"),
    el("form", { onsubmit: (event) => { event.preventDefault(); start(); } },
      el("div", { className: "two" }, tree, el("div", {}, el("h3", {}, "Drawn as the demo page draws it"), preview)),
      el("div", { className: "grid3" }, qaCohort, percent, message),
      el("div", { className: "grid2" }, maxErrorRate, minUnits),
      el("p", { className: "reach" }, "Would get it now: ", reach),
      el("div", { className: "actions" }, startButton), status));

  details.addEventListener("toggle", async () => {
    if (!details.open || tree.control.value.trim()) return;
    try {
      const current = await get(screenPath(name));
      tree.control.value = JSON.stringify(current.tree, null, 2);
      edited();
    } catch (error) {
      setFieldMessage(tree, error.message);
    }
  });

  /** The request body, or null after showing at the tree field why it is not JSON. */
  function body() {
    let candidate;
    try {
      candidate = JSON.parse(tree.control.value);
    } catch (error) {
      setFieldMessage(tree, `not JSON: ${error.message}`);
      return null;
    }
    const request = { tree: candidate };
    if (qaCohort.control.value.trim()) request.qa_cohort = qaCohort.control.value.trim();
    if (percent.control.value.trim()) request.percent = numberOrText(percent.control.value);
    const guard = {};
    if (maxErrorRate.control.value.trim()) guard.max_error_rate = numberOrText(maxErrorRate.control.value);
    if (minUnits.control.value.trim()) guard.min_units = numberOrText(minUnits.control.value);
    if (Object.keys(guard).length) request.guard = guard;
    if (message.control.value.trim()) request.message = message.control.value.trim();
    return request;
  }

  /** Shows a refusal at the field it names (the tree for `same_as_base`), else under the button. */
  function showError(error) {
    const named = /\b(tree|qa_cohort|percent|max_error_rate|min_units|message)\b/.exec(error.message)?.[1];
    const at = fields[named] ?? (["same_as_base", "invalid_min_app_version"].includes(error.code) ? tree : null);
    if (at) setFieldMessage(at, error.message);
    else status.show(`${error.status} ${error.code}: ${error.message}`, "error");
  }

  function clearErrors() {
    for (const f of Object.values(fields)) setFieldMessage(f, null);
    status.show("");
  }

  let latest = 0; // the newest dry run: an older answer arriving late is not shown
  async function dryRun() {
    const mine = ++latest;
    clearErrors();
    const request = body();
    if (!request) { reach.textContent = "–"; delete reach.dataset.expose; return null; }
    if (!can("publish")) { reach.textContent = "a dry run needs the publish scope"; return null; }
    try {
      const answer = await call("POST", releasesPath(name) + "?dry_run=true", request);
      if (mine !== latest) return null;
      reach.textContent = `${number(answer.would_expose)} of ${plural(answer.subscribers, "connected subscriber")} (v${answer.version})`;
      reach.dataset.expose = String(answer.would_expose);
      return { answer, request };
    } catch (error) {
      if (mine !== latest) return null;
      reach.textContent = "–";
      delete reach.dataset.expose;
      showError(error);
      return null;
    }
  }

  const drawPreview = () => {
    try {
      preview.replaceChildren(renderScreen(JSON.parse(tree.control.value)));
    } catch {
      preview.replaceChildren(el("p", { className: "hint" }, "Not JSON yet."));
    }
  };
  const edited = debounce(300, () => { drawPreview(); dryRun(); });
  details.addEventListener("input", edited);

  async function start() {
    const checked = await dryRun();
    if (!checked) return;
    const { answer: dry, request } = checked;
    const who = request.qa_cohort
      ? `QA cohort ${request.qa_cohort} and ${percentText(dry.percent)} of the other units`
      : `${percentText(dry.percent)} of the units`;
    // An emptied guard field means the hub's default (max_error_rate 0.02, min_units 50).
    const ok = await confirmAction({
      title: `Start a release of ${name}?`,
      body: [`v${dry.version} goes to ${who}: ${number(dry.would_expose)} of ${plural(dry.subscribers, "connected subscriber")} get it now; everyone else keeps v${dry.base_version}.`,
        `The guard halts it when more than ${rateText(request.guard?.max_error_rate ?? 0.02)} of the reporting units fail to render it, once ${number(request.guard?.min_units ?? 50)} have reported.`],
      confirm: "Start release",
    });
    if (!ok) return;
    try {
      const answer = await call("POST", releasesPath(name), request);
      details.open = false;
      tree.control.value = "";
      started(answer);
    } catch (error) {
      showError(error);
    }
  }

  return { element: details };
}
