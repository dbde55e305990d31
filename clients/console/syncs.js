// Syncs: a composer for the target (user, users, cohort, all; platform; app version; variant)
// with the hub's dry-run count shown live as the target is edited; mandatory, collapse, spread,
// TTL, silent push; a confirmation stating the count; then the receipts as a funnel that updates live.

import { get, call } from "./api.js";
import { el, field, input, select, section, table, statusLine, actionButton, confirmAction, every, debounce, number, when, showIfChanged } from "./ui.js";
import { barList } from "./charts.js";

export default function syncs(context) {
  return context.argument ? funnel(context) : composer(context);
}

function composer({ root, can, navigate }) {
  const kind = field("Target", select([["cohort", "a cohort"], ["user", "one user"], ["users", "a list of users"], ["all", "everyone"]], { name: "kind" }), { name: "target" });
  const who = field("Cohort", select([], { name: "cohort" }), { name: "cohort" });
  const userInput = field("User id", input({ name: "user", placeholder: "u17" }), { name: "user" });
  const usersInput = field("User ids", el("textarea", { name: "users", rows: 3, placeholder: "u1 u2 u3" }), { name: "users", hint: "separated by spaces, commas or lines" });
  const platform = field("Platform", input({ name: "platform", placeholder: "any" }), { name: "platform", hint: "ios, android, web… (empty: any)" });
  const appVersion = field("App version", input({ name: "app_version", placeholder: "<5.3.0" }), { name: "app_version", hint: "semver comparators, all must hold" });
  const experiment = field("Experiment", input({ name: "variant_experiment", placeholder: "key" }), { name: "variant" });
  const variant = field("Variant", input({ name: "variant_key", placeholder: "B" }), { name: "variant" });
  const reason = field("Reason", input({ name: "reason", value: "hotfix" }), { name: "reason" });
  const scope = field("Scope", input({ name: "scope", value: "bundle" }), { name: "scope", hint: "bundle, config, screen:NAME…" });
  const collapse = field("Collapse key", input({ name: "collapse" }), { name: "collapse" });
  const spread = field("Spread", input({ name: "spread", placeholder: "30s" }), { name: "spread", hint: "deliver over this window" });
  const ttl = field("TTL", input({ name: "ttl", placeholder: "24h" }), { name: "ttl" });
  const push = field("Silent push", select([["none", "none"], ["offline", "to devices offline"], ["always", "to every device"]], { name: "push" }), { name: "push", hint: "through APNs/FCM (docs/push.md)" });
  const hint = field("Hint (JSON object, optional)", el("textarea", { name: "hint", rows: 2, placeholder: '{"min_bundle": "5.3.1"}' }), { name: "hint", hint: "at most 1 KiB, passed to the app with the sync" });
  const mandatory = el("input", { type: "checkbox", name: "mandatory", id: "sync-mandatory" });
  const count = el("output", { id: "dry-run", "aria-live": "polite", className: "count" }, "…");
  const status = statusLine();
  const send = actionButton("Send sync…", { scope: "sync", can, className: "primary", onclick: () => submit() });
  send.id = "send-sync";

  const syncId = field("Sync id", input({ name: "sync_id" }));
  const targetFields = { cohort: who, user: userInput, users: usersInput, all: null };
  const recent = el("div", {}, el("p", { className: "empty" }, "Loading…"));

  root.append(el("h2", {}, "Syncs"), el("div", { className: "columns" },
    section("Compose a sync",
      el("form", { className: "composer", onsubmit: (event) => { event.preventDefault(); submit(); } },
        el("fieldset", {}, el("legend", {}, "Who"), el("div", { className: "grid2" }, kind, who, userInput, usersInput),
          el("div", { className: "grid2" }, platform, appVersion), el("div", { className: "grid2" }, experiment, variant)),
        el("fieldset", {}, el("legend", {}, "What"), el("div", { className: "grid2" }, reason, scope),
          el("div", { className: "grid3" }, collapse, spread, ttl), push, hint,
          el("div", { className: "check" }, mandatory, el("label", { for: mandatory.id }, "Mandatory (the app must apply it before continuing)"))),
        el("p", { className: "reach" }, "Would reach now: ", count),
        el("div", { className: "actions" }, send), status)),
    section("Live syncs (within their TTL)", recent,
      el("form", { className: "inline-form", onsubmit: (event) => { event.preventDefault(); const id = syncId.control.value.trim(); if (id) navigate("#syncs/" + encodeURIComponent(id)); } },
        syncId, el("button", { type: "submit" }, "Open")))));

  const stopList = every(2000, async () => {
    const { syncs } = await get("/v1/syncs?limit=20");
    showIfChanged(recent, syncs, () => syncs.length
      ? table(["Sync", "What", "Target", "Sent", "Targeted → delivered → acked"], syncs.map((sync) => [
        el("a", { href: "#syncs/" + encodeURIComponent(sync.id) }, sync.id),
        `${sync.reason} → ${sync.scope}` + (sync.mandatory ? " (mandatory)" : ""),
        el("code", {}, JSON.stringify(sync.target)), when(sync.created_at),
        `${sync.receipts.targeted_online} → ${sync.receipts.delivered} → ${sync.receipts.acked}`
          + (sync.receipts.pushed || sync.receipts.push_failed
            ? ` (pushed ${sync.receipts.pushed}, failed ${sync.receipts.push_failed})` : ""),
      ]), { className: "syncs" })
      : el("p", { className: "empty" }, "No live syncs."));
  });

  function target() {
    const value = { };
    const k = kind.control.value;
    if (k === "cohort") value.cohort = who.control.value;
    if (k === "user") value.user = userInput.control.value.trim();
    if (k === "users") value.users = usersInput.control.value.split(/[\s,]+/).filter(Boolean);
    if (k === "all") value.all = true;
    if (platform.control.value.trim()) value.platform = platform.control.value.trim();
    if (appVersion.control.value.trim()) value.app_version = appVersion.control.value.trim();
    if (experiment.control.value.trim() || variant.control.value.trim()) value.variant = { [experiment.control.value.trim()]: variant.control.value.trim() };
    return value;
  }

  function body(dryRun) {
    const request = { target: target(), reason: reason.control.value.trim() || undefined, scope: scope.control.value.trim() || undefined };
    if (collapse.control.value.trim()) request.collapse = collapse.control.value.trim();
    if (spread.control.value.trim()) request.spread = spread.control.value.trim();
    if (ttl.control.value.trim()) request.ttl = ttl.control.value.trim();
    if (hint.control.value.trim()) {
      try {
        request.hint = JSON.parse(hint.control.value);
      } catch (error) {
        throw Object.assign(new Error(`hint: not JSON (${error.message})`), { code: "bad_hint", status: 0 });
      }
    }
    if (mandatory.checked) request.mandatory = true;
    if (push.control.value !== "none") request.push = push.control.value;
    if (dryRun) request.dry_run = true;
    return request;
  }

  const all = [kind, who, userInput, usersInput, platform, appVersion, experiment, variant, reason, scope, collapse, spread, ttl, push, hint];
  function showError(error) {
    // The hub names the field ("target.platfrom", "\"spread\" must be…"): show it there.
    const named = /"?(target\.)?(user|users|cohort|platform|app_version|variant|reason|scope|collapse|spread|ttl|push|hint)\b/.exec(error.message)?.[2];
    const at = { cohort: who, user: userInput, users: usersInput, platform, app_version: appVersion, variant, reason, scope, collapse, spread, ttl, push, hint }[named]
      ?? (error.code === "unknown_cohort" ? who : kind);
    at.message.textContent = error.message;
    at.control.setAttribute("aria-invalid", "true");
  }
  function clearErrors() {
    for (const f of all) { f.message.textContent = ""; f.control.removeAttribute("aria-invalid"); }
  }

  let latest = 0;  // the newest live dry run: an older answer arriving late is not shown
  async function dryRun() {
    const mine = ++latest;
    if (!can("sync")) {
      count.textContent = "a dry run needs the sync scope";
      return null;
    }
    count.textContent = "counting…";
    try {
      const answer = await call("POST", "/v1/syncs", body(true));
      if (mine !== latest) return null;
      clearErrors();
      count.textContent = `${number(answer.targeted_online)} connection${answer.targeted_online === 1 ? "" : "s"} (${number(answer.users)} signed-in user${answer.users === 1 ? "" : "s"})`
        + (answer.push_devices === undefined ? "" : `; ${number(answer.push_devices)} registered device${answer.push_devices === 1 ? "" : "s"} to push`);
      count.dataset.connections = String(answer.targeted_online);
      count.dataset.users = String(answer.users);
      return answer;
    } catch (error) {
      if (mine !== latest) return null;
      clearErrors();
      delete count.dataset.connections;
      count.textContent = "–";
      showError(error);
      return null;
    }
  }
  const later = debounce(250, dryRun);

  function showKind() {
    for (const [k, f] of Object.entries(targetFields)) if (f) f.hidden = k !== kind.control.value;
  }
  kind.control.addEventListener("change", () => { showKind(); later(); });
  for (const f of all) if (f !== kind) f.control.addEventListener("input", later);
  mandatory.addEventListener("change", later);

  async function submit() {
    // The count in the confirmation is a dry run of exactly the body that is then sent.
    let request, counted;
    try {
      request = body(false);
      counted = await call("POST", "/v1/syncs", { ...request, dry_run: true });
    } catch (error) {
      clearErrors();
      showError(error);
      status.show(`${error.status ? error.status + " " : ""}${error.code}: ${error.message}`, "error");
      return;
    }
    const ok = await confirmAction({
      title: "Send this sync?",
      body: [`It reaches ${number(counted.targeted_online)} connection(s) of ${number(counted.users)} signed-in user(s) now`
        + ` (and, until its TTL, every matching client that connects later).`,
        `${request.reason ?? "sync"} → ${request.scope ?? "bundle"}` + (request.mandatory ? ", mandatory" : "") + (request.spread ? `, spread over ${request.spread}` : "")],
      confirm: `Send to ${number(counted.targeted_online)}`,
    });
    if (!ok) return;
    try {
      const answer = await call("POST", "/v1/syncs", request);
      navigate("#syncs/" + encodeURIComponent(answer.id));
    } catch (error) {
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
      showError(error);
    }
  }

  (async () => {
    try {
      const { cohorts } = await get("/v1/cohorts");
      who.control.replaceChildren(...cohorts.map((c) => el("option", { value: c.name }, `${c.name} (${number(c.users)} listed${c.rule ? ", rule" : ""})`)));
      if (!cohorts.length) {
        kind.control.value = "all";
        who.control.append(el("option", { value: "" }, "no cohorts defined"));
      }
    } catch {}
    showKind();
    dryRun();
  })();
  return () => { latest++; stopList(); };
}

/** "counted since HH:MM — receipts restart when a hub restarts" (local time; the date in UTC as its title). */
function countedSince(seconds) {
  if (typeof seconds !== "number") return [];
  const date = new Date(seconds * 1000);
  const hhmm = String(date.getHours()).padStart(2, "0") + ":" + String(date.getMinutes()).padStart(2, "0");
  return [el("span", { title: when(seconds * 1000) }, `counted since ${hhmm}`), " — receipts restart when a hub restarts"];
}

function funnel({ root, argument: id }) {
  const chart = el("div", { className: "funnel" });
  // One live region, updated in place, so a screen reader hears each change of the receipts.
  const counts = { targeted: el("span", { id: "targeted" }, "–"), delivered: el("span", { id: "delivered" }, "–"), acked: el("span", { id: "acked" }, "–") };
  const numbers = el("p", { className: "numbers", role: "status" }, counts.targeted, " targeted → ", counts.delivered, " delivered → ", counts.acked, " acked");
  // Receipts are counted in memory by the hubs: a hub's restart starts them again (counted_since).
  const since = el("p", { className: "hint", id: "counted-since" });
  const details = el("dl", { className: "facts" });
  root.append(el("p", { className: "crumbs" }, el("a", { href: "#syncs" }, "Syncs"), " / ", id), el("h2", {}, `Sync ${id}`),
    el("div", { className: "columns" }, section("Receipts", chart, numbers, since), section("Sync", details)));
  return every(500, async () => {
    try {
      const sync = await get("/v1/syncs/" + encodeURIComponent(id));
      const r = sync.receipts;
      const pct = (n) => (r.targeted_online ? ` (${Math.round((100 * n) / r.targeted_online)} %)` : "");
      showIfChanged(chart, r, () => barList([
        { label: "targeted online", value: r.targeted_online },
        { label: "delivered", value: r.delivered, note: `${r.delivered}${pct(r.delivered)}`, kind: "delivered" },
        { label: "acked", value: r.acked, note: `${r.acked}${pct(r.acked)}`, kind: "confirmed" },
        // Silent pushes to devices that were offline (docs/push.md), when the sync asked for them.
        ...(sync.push ? [
          { label: "pushed", value: r.pushed, kind: "delivered" },
          { label: "push failed", value: r.push_failed },
        ] : []),
      ], { label: "Receipts", max: Math.max(1, r.targeted_online, r.delivered, r.acked, r.pushed, r.push_failed) }));
      for (const [name, value] of [["targeted", r.targeted_online], ["delivered", r.delivered], ["acked", r.acked]]) {
        if (counts[name].textContent !== String(value)) counts[name].textContent = String(value);
      }
      showIfChanged(since, { since: sync.counted_since }, () => countedSince(sync.counted_since));
      const { receipts: _, counted_since: __, ...rest } = sync;
      showIfChanged(details, rest, () => Object.entries(rest).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, k.endsWith("_at") ? when(v) : typeof v === "object" ? JSON.stringify(v) : String(v))]));
    } catch (error) {
      showIfChanged(chart, { error: error.message }, () => el("p", { className: "error" }, error.message));
    }
  });
}
