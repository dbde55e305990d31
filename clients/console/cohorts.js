// Cohorts: the list with sizes, a cohort's rule editor, and the import of a users file in
// batches with a progress bar (as `hubctl cohort set --users-file` does: a PUT, then POST adds).

import { get, call } from "./api.js";
import { el, field, input, select, section, table, number, statusLine, actionButton, confirmAction, every, showIfChanged } from "./ui.js";

/** Ids per request: far under the 4 MiB body limit, small enough that the bar moves. */
export const BATCH = 10000;

export default function cohorts({ root, argument, can, navigate }) {
  const list = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  const editor = el("div");
  root.append(el("h2", {}, "Cohorts"), el("div", { className: "columns" }, section("Cohorts", list,
    el("p", {}, el("a", { href: "#cohorts/" + encodeURIComponent("+new"), className: "button-link" }, "New cohort"))), editor));
  if (argument) cohortEditor({ container: editor, name: argument === "+new" ? null : argument, can, navigate });
  return every(3000, async () => {
    const { cohorts } = await get("/v1/cohorts");
    showIfChanged(list, cohorts, () => cohorts.length
      ? table(["Cohort", "Listed users", "Rule"], cohorts.map((c) => [
        el("a", { href: "#cohorts/" + encodeURIComponent(c.name) }, c.name), number(c.users), c.rule ? "yes" : "no",
      ]), { className: "cohorts" })
      : el("p", { className: "empty" }, "No cohorts yet."));
  });
}

/** Reads ids from a file's text: one per line (or separated by commas or spaces). */
export function idsOf(text) {
  return text.split(/[\s,]+/).map((id) => id.trim()).filter(Boolean);
}

async function cohortEditor({ container, name, can, navigate }) {
  const nameField = field("Name", input({ name: "name", value: name ?? "", readOnly: Boolean(name), pattern: "[a-z0-9._\\-]{1,100}" }), { hint: "a-z 0-9 . _ -" });
  const platform = field("Platform", input({ name: "platform" }), { name: "platform", hint: "comma-separated; empty: any" });
  const appVersion = field("App version", input({ name: "app_version", placeholder: ">=5.0.0" }), { name: "app_version" });
  const claims = field("Token claims (JSON object)", el("textarea", { name: "claims", rows: 3, placeholder: '{"plan": "pro"}' }), { name: "claims" });
  const save = actionButton(name ? "Save rule" : "Create cohort", { scope: "sync", can, className: "primary", onclick: () => saveRule() });
  const remove = name ? actionButton("Delete…", { scope: "sync", can, className: "danger", onclick: () => deleteCohort() }) : null;
  const status = statusLine();
  const size = el("p", { className: "size" });
  const online = el("p", { className: "online", id: "cohort-online", "aria-live": "polite" });
  const sample = el("p", { className: "sample" });

  const file = el("input", { type: "file", id: "users-file", accept: ".txt,.csv,text/plain" });
  const mode = field("Import mode", select([["add", "add to the list"], ["replace", "replace the list"]], { name: "mode" }));
  const progress = el("progress", { id: "import-progress", max: 1, value: 0, "aria-label": "Import progress" });
  const progressText = el("p", { className: "progress-text", role: "status", "aria-live": "polite" });
  const importButton = actionButton("Import", { scope: "sync", can, onclick: () => importFile() });
  importButton.id = "import";

  let loaded = null;
  if (name) {
    try {
      loaded = await get("/v1/cohorts/" + encodeURIComponent(name));
    } catch (error) {
      container.replaceChildren(section(name, el("p", { className: "error" }, error.message)));
      return;
    }
  }
  const rule = loaded?.rule ?? {};
  platform.control.value = (rule.platform ?? []).join(", ");
  appVersion.control.value = rule.app_version ?? "";
  claims.control.value = rule.claims ? JSON.stringify(rule.claims) : "";
  function showSize(count, sampleIds) {
    size.textContent = `${number(count)} listed user${count === 1 ? "" : "s"}` + (count > 100 ? " (first 100 shown)" : "");
    sample.textContent = sampleIds?.length ? sampleIds.join(", ") : "";
  }
  if (loaded) showSize(loaded.users, loaded.sample);
  // Who is in it right now (listed users, rule matches and token claims alike): a sync's dry run.
  if (loaded && can("sync")) {
    call("POST", "/v1/syncs", { target: { cohort: name }, dry_run: true }).then((reach) => {
      online.textContent = `Online now: ${number(reach.targeted_online)} connection${reach.targeted_online === 1 ? "" : "s"} of ${number(reach.users)} signed-in user${reach.users === 1 ? "" : "s"}`;
      online.dataset.connections = String(reach.targeted_online);
    }, (error) => { online.textContent = error.message; });
  } else if (loaded) {
    online.textContent = "Online members are counted with a sync's dry run, which needs the sync scope.";
  }
  container.replaceChildren(section(name ? `Cohort ${name}` : "New cohort",
    nameField, size, online, sample,
    el("fieldset", {}, el("legend", {}, "Rule (a client matching it is in the cohort)"), platform, appVersion, claims),
    el("div", { className: "actions" }, save, remove), status,
    name ? el("fieldset", { className: "import" }, el("legend", {}, "Import users from a file"),
      el("div", { className: "field" }, el("label", { for: file.id }, "Users file (one id per line)"), file),
      mode, importButton, progress, progressText) : null));

  function ruleValue() {
    const value = {};
    const platforms = platform.control.value.split(",").map((p) => p.trim()).filter(Boolean);
    if (platforms.length) value.platform = platforms;
    if (appVersion.control.value.trim()) value.app_version = appVersion.control.value.trim();
    if (claims.control.value.trim()) {
      try {
        value.claims = JSON.parse(claims.control.value);
      } catch (error) {
        throw Object.assign(new Error("claims: not JSON (" + error.message + ")"), { field: claims });
      }
    }
    if (rule.variant !== undefined) value.variant = rule.variant;
    return Object.keys(value).length ? value : null;
  }

  async function saveRule() {
    for (const f of [platform, appVersion, claims, nameField]) f.message.textContent = "";
    const cohort = name ?? nameField.control.value.trim();
    try {
      // An existing cohort's rule alone (its listed users stay, however many); a new cohort
      // starts with no listed users.
      const answer = name
        ? await call("PUT", "/v1/cohorts/" + encodeURIComponent(cohort) + "/rule", { rule: ruleValue() })
        : await call("PUT", "/v1/cohorts/" + encodeURIComponent(cohort), { users: [], rule: ruleValue() });
      status.show(`Saved ${answer.name}: ${number(answer.users)} listed users` + (answer.rule ? ", with a rule" : ", no rule"), "ok");
      if (!name) navigate("#cohorts/" + encodeURIComponent(cohort));
    } catch (error) {
      const at = error.field ?? ({ platform, app_version: appVersion, claims }[/rule\.(platform|app_version|claims)|"(platform|app_version|claims)"/.exec(error.message)?.slice(1).find(Boolean)]) ?? (error.code === "invalid_cohort_name" ? nameField : null);
      if (at) at.message.textContent = error.message;
      status.show(error.status ? `${error.status} ${error.code}: ${error.message}` : error.message, "error");
    }
  }

  async function deleteCohort() {
    if (!(await confirmAction({ title: `Delete cohort ${name}?`, body: `${number(loaded.users)} listed users and its rule are removed; syncs to it are then refused (404).`, confirm: "Delete", danger: true }))) return;
    try {
      await call("DELETE", "/v1/cohorts/" + encodeURIComponent(name));
      navigate("#cohorts");
    } catch (error) {
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }

  async function importFile() {
    const chosen = file.files?.[0];
    if (!chosen) {
      progressText.textContent = "Choose a file first.";
      return;
    }
    const ids = idsOf(await chosen.text());
    const batches = [];
    for (let i = 0; i < ids.length; i += BATCH) batches.push(ids.slice(i, i + BATCH));
    const replace = mode.control.value === "replace";
    if (replace && !(await confirmAction({ title: `Replace ${name}'s list?`, body: `The ${number(loaded.users)} listed users are replaced by the ${number(ids.length)} in ${chosen.name}.`, confirm: "Replace", danger: true }))) return;
    progress.max = Math.max(1, ids.length);
    progress.value = 0;
    importButton.disabled = true;
    let done = 0, total = null;
    try {
      for (const [i, batch] of batches.entries()) {
        const answer = replace && i === 0
          ? await call("PUT", "/v1/cohorts/" + encodeURIComponent(name), { users: batch, rule: loaded?.rule ?? null })
          : await call("POST", "/v1/cohorts/" + encodeURIComponent(name) + "/users", { add: batch });
        done += batch.length;
        total = answer.users;
        progress.value = done;
        progressText.textContent = `batch ${i + 1} of ${batches.length}: ${number(done)} of ${number(ids.length)} ids sent; the cohort lists ${number(total)}`;
      }
      if (!batches.length) progressText.textContent = "The file has no ids.";
      progressText.dataset.done = "true";
      if (total !== null) showSize(total, null);
    } catch (error) {
      progressText.textContent = `stopped after ${number(done)} of ${number(ids.length)} ids: ${error.status} ${error.code}: ${error.message}`;
    } finally {
      importButton.disabled = !can("sync");
    }
  }
}
