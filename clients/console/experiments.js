// Experiments: the list; one experiment's results (served and confirmed per variant, the
// sample-ratio check, per goal the rate and mean value with their differences to control and
// 95 % intervals), its traffic ramp, its overrides, its definition and a preview of each
// variant's screens.
//
// No lost updates (issue 26): each action changes only what it names — the ramp POSTs
// …/traffic, an override POSTs …/overrides, start and stop POST …/status — and the definition
// form, which edits everything else, PUTs with `If-Match` the ETag of the definition it was
// built from (a stale form is refused, 412, and never undoes a ramp). After every action, and
// every few seconds, the view reads the experiment (and its ETag) again.

import { get, call, getWithETag, withQuery } from "./api.js";
import { el, field, input, select, section, table, number, statusLine, actionButton, confirmAction, every, debounce, showIfChanged, when } from "./ui.js";
import { exposureChart, intervalChart } from "./charts.js";
import { renderScreen, treeView } from "./render.js";
import { canonicalize, sha256, utf8 } from "./pushhub-client.js";

export default function experiments({ root, argument, can, navigate }) {
  const list = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  const detail = el("div", { className: "experiment" });
  root.append(el("h2", {}, "Experiments"),
    section("Experiments", list, el("p", {}, el("a", { href: "#experiments/" + encodeURIComponent("+new"), className: "button-link" }, "New experiment"))),
    detail);
  const loadList = async () => {
    const { experiments } = await get("/v1/experiments");
    showIfChanged(list, experiments, () => experiments.length
      ? table(["Experiment", "Status", "Variants", "Screens"], experiments.map((e) => [
        el("a", { href: "#experiments/" + encodeURIComponent(e.key) }, e.key),
        el("span", { className: "badge", dataset: { status: e.status } }, e.status), e.variants.join(", "), e.screens.join(", ") || "–",
      ]), { className: "experiments" })
      : el("p", { className: "empty" }, "No experiments yet."));
  };
  const refreshList = () => loadList().catch(() => {});
  const stops = [every(3000, loadList)];
  if (argument) stops.push(experimentDetail({ container: detail, key: argument === "+new" ? null : argument, can, navigate, changed: refreshList }));
  return () => stops.forEach((stop) => stop?.());
}

/** DESIGN §6: u64 of the first 8 bytes of SHA-256(text), big-endian, modulo 10000. */
export function bucket(text) {
  const digest = sha256(utf8(text));
  let value = 0n;
  for (let i = 0; i < 8; i++) value = (value << 8n) | BigInt(digest[i]);
  return Number(value % 10000n);
}

const experimentPath = (key) => "/v1/experiments/" + encodeURIComponent(key);

/**
 * The members of a definition the form edits. The others — `traffic` (the ramp), `overrides`
 * (the overrides panel), `status` (start, stop) and any the console does not know — are sent as
 * the definition the form was built from has them; `If-Match` makes sure that is the stored one.
 */
const FORM_MEMBERS = ["salt", "layer", "layer_range", "variants", "audience", "screens", "sticky"];

/** The form's members of `definition`, canonical: equal strings mean the form would show the same. */
function formPart(definition) {
  const part = {};
  for (const member of FORM_MEMBERS) if (definition[member] !== undefined) part[member] = definition[member];
  return canonicalize(part);
}

function experimentDetail({ container, key, can, navigate, changed }) {
  const stops = [];
  const editorPanel = el("div");
  const previewPanel = el("div");
  container.replaceChildren();
  if (!key) {
    container.append(section("New experiment", editorPanel), section("Preview", previewPanel));
    const editor = definitionEditor({ container: editorPanel, key: null, can, navigate, changed, afterAction: async () => {} });
    editor.update({ variants: [{ key: "control", weight: 1 }, { key: "treatment", weight: 1 }], traffic: 1 }, null);
    variantPreview({ container: previewPanel, key: null, editor });
    return () => {};
  }
  const results = el("div", { className: "results" });
  const ramp = el("div");
  const overrides = el("div");
  const loadError = el("p", { className: "error", id: "experiment-load-error", hidden: true });
  // What an experimenter looks at first: the results, then the ramp and overrides, then the definition.
  container.append(loadError, section(`Results of ${key}`, results), section("Ramp traffic", ramp), section("Overrides", overrides),
    section(`Definition of ${key}`, editorPanel), section("Preview", previewPanel));

  let views = null;
  let reading = Promise.resolve();
  /**
   * Reads the experiment and its ETag, and shows them in every panel. Reads run one after the
   * other, each starting after the previous one (and so after the action that asked for it) ended.
   */
  const reread = () => {
    reading = reading.then(async () => {
      try {
        const { value, etag } = await getWithETag(experimentPath(key));
        loadError.hidden = true;
        if (!views) {
          const afterAction = async () => { await reread(); changed(); };
          views = [
            definitionEditor({ container: editorPanel, key, can, navigate, changed, afterAction }),
            rampPanel({ container: ramp, key, can, afterAction }),
            overridesPanel({ container: overrides, key, can, afterAction }),
          ];
          variantPreview({ container: previewPanel, key, editor: views[0] });
        }
        for (const view of views) view.update(value, etag);
      } catch (error) {
        loadError.textContent = `Could not read ${key}: ${error.message}`;
        loadError.hidden = false;
      }
    });
    return reading;
  };
  stops.push(every(3000, reread)); // changes made elsewhere (hubctl, another console) show up here too
  stops.push(every(2000, () => loadResults(results, key)));
  return () => stops.forEach((stop) => stop());
}

// MARK: - The definition form

/**
 * The definition form. `update(definition, etag)` is called with every read: an untouched form
 * shows the stored definition; a form with edits keeps them, and takes the new ETag only when
 * what it edits is unchanged (a ramp, an override or a start happened: they are not the form's).
 * Otherwise its save will be refused (412) — it says so at once.
 */
function definitionEditor({ container, key, can, navigate, changed, afterAction }) {
  let base = null; // the definition the form was built from (or last adopted)
  let etag = null; // its ETag: sent as If-Match
  let dirty = false; // edited since built
  let warnedAbout = null; // the ETag of the change elsewhere the form last warned about
  let fields = null, sticky = null, trafficNote = null;

  const statusBadge = el("span", { className: "badge", id: "experiment-status" });
  const start = actionButton("Start", { scope: "experiment", can, onclick: () => setStatus("running") });
  start.id = "start-experiment";
  const stop = actionButton("Stop", { scope: "experiment", can, className: "danger", onclick: () => setStatus("stopped") });
  stop.id = "stop-experiment";
  const save = actionButton(key ? "Save definition" : "Create (as a draft)", { scope: "experiment", can, className: "primary", onclick: () => submit() });
  save.id = "save-experiment";
  const remove = actionButton("Delete…", { scope: "experiment", can, className: "danger", onclick: () => deleteExperiment() });
  remove.id = "delete-experiment";
  if (!key) { start.hidden = true; stop.hidden = true; remove.hidden = true; }
  const form = el("form", { className: "definition", onsubmit: (event) => { event.preventDefault(); submit(); } });
  form.addEventListener("input", () => { dirty = true; });
  form.addEventListener("change", () => { dirty = true; });
  const message = statusLine();
  message.id = "editor-status";
  // Shown when the stored definition changed elsewhere under edits, or a save was refused as stale.
  const stale = el("div", { className: "stale", id: "stale-definition", hidden: true });
  container.replaceChildren(
    el("p", {}, "Status: ", statusBadge, " ", start, " ", stop),
    form, el("div", { className: "actions" }, save, remove), message, stale);

  function build(definition) {
    const layered = Boolean(definition.layer);
    fields = {
      key: field("Key", input({ name: "key", value: key ?? "", readOnly: Boolean(key) }), { name: "key", hint: "a-z 0-9 . _ -" }),
      salt: field("Salt", input({ name: "salt", value: definition.salt ?? "", placeholder: key ?? "the key" }), { name: "salt", hint: "changing it reshuffles every unit" }),
      variants: field("Variants", el("textarea", { name: "variants", rows: 3, value: (definition.variants ?? []).map((v) => `${v.key} ${v.weight ?? 1}`).join("\n") }), { name: "variants", hint: "one per line: key weight; the first is the control" }),
      platform: field("Audience platform", input({ name: "audience.platform", value: [].concat(definition.audience?.platform ?? []).join(", ") }), { name: "audience", hint: "comma-separated; empty: any" }),
      appVersion: field("Audience app version", input({ name: "audience.app_version", value: definition.audience?.app_version ?? "" }), { name: "audience.app_version" }),
      cohort: field("Audience cohort", input({ name: "audience.cohort", value: definition.audience?.cohort ?? "" }), { name: "audience.cohort" }),
      layer: field("Layer", input({ name: "layer", value: definition.layer ?? "" }), { name: "layer", hint: "instead of traffic: a share of a layer" }),
      layerRange: field("Layer range", input({ name: "layer_range", value: definition.layer_range ? definition.layer_range.join(", ") : "", placeholder: "0, 5000" }), { name: "layer_range" }),
      screens: field("Screens (JSON: screen → variant → variant patch)", el("textarea", { name: "screens", rows: 6, value: definition.screens ? JSON.stringify(definition.screens, null, 2) : "" }),
        { name: "screens", hint: "a merge patch; \"#id\" edits one child of an array by its id, \"+name\" / \"+#id\" add (docs/assignment.md)" }),
    };
    if (!key) {
      // A new experiment starts at this traffic; afterwards the ramp changes it (one control).
      fields.traffic = field("Traffic (0 to 1)", input({ name: "traffic", inputMode: "decimal", value: String(definition.traffic ?? 1) }), { name: "traffic" });
    }
    sticky = el("input", { type: "checkbox", id: "experiment-sticky", checked: definition.sticky === true });
    trafficNote = el("p", { className: "hint", id: "definition-traffic" });
    form.replaceChildren(
      el("div", { className: "grid2" }, fields.key, fields.salt, fields.traffic, fields.variants, fields.platform, fields.appVersion, fields.cohort, fields.layer, fields.layerRange),
      key ? trafficNote : null,
      el("div", { className: "check" }, sticky, el("label", { for: sticky.id }, "Sticky: a unit keeps its first variant")),
      fields.screens);
    showBase(definition, layered);
    dirty = false;
  }

  /** What the form shows of the members it does not edit. */
  function showBase(definition, layered = Boolean(definition.layer)) {
    const status = definition.status ?? "draft";
    statusBadge.textContent = status;
    statusBadge.dataset.status = status;
    start.disabled = !can("experiment") || status === "running";
    stop.disabled = !can("experiment") || status !== "running";
    if (!trafficNote) return;
    const overrides = Object.keys(definition.overrides ?? {}).length;
    trafficNote.textContent = (layered ? "Traffic does not apply: a share of its layer." : `Traffic: ${Math.round((definition.traffic ?? 1) * 1000) / 10} % (change it with Ramp traffic).`)
      + ` Overrides: ${overrides} (change them under Overrides). Saving keeps both as they are on the hub.`;
  }

  function update(definition, nextETag) {
    if (base !== null && nextETag !== null && nextETag === etag) return; // nothing changed
    const mine = base !== null && formPart(definition) === formPart(base);
    if (!dirty) {
      if (!mine) build(definition);
      else showBase(definition);
      stale.hidden = true;
    } else if (mine) {
      showBase(definition); // a ramp, an override, a start: not what the form edits
    } else {
      if (warnedAbout !== nextETag) {
        showStale("The stored definition was changed elsewhere since this form was loaded: saving these edits would undo that, so the hub will refuse it (412).", false);
        warnedAbout = nextETag;
      }
      return; // keep the old ETag: a save is refused, never overwrites
    }
    base = definition;
    etag = nextETag;
  }

  /** Explains a conflict; `edits`: the form's unsaved edits as JSON, to copy (after the form was rebuilt). */
  function showStale(text, edits) {
    const reload = el("button", { type: "button", id: "reload-definition", onclick: () => rebuildFromHub() }, "Reload the form (drops these edits)");
    stale.replaceChildren(el("p", { className: "error" }, text),
      edits ? el("details", { open: true }, el("summary", {}, "Your unsaved edits (copy what you need)"),
        el("pre", { className: "edits", tabIndex: 0 }, JSON.stringify(edits, null, 2))) : el("div", { className: "actions" }, reload));
    stale.hidden = false;
  }

  async function rebuildFromHub() {
    const { value, etag: nextETag } = await getWithETag(experimentPath(key));
    dirty = false;
    base = null;
    update(value, nextETag);
  }

  const json = (wrapper, what) => {
    const text = wrapper.control.value.trim();
    if (!text) return undefined;
    try { return JSON.parse(text); } catch (error) { throw Object.assign(new Error(`${what}: not JSON (${error.message})`), { at: wrapper }); }
  };

  /** The form's members, as typed. */
  function collectForm() {
    const value = {};
    if (fields.salt.control.value.trim()) value.salt = fields.salt.control.value.trim();
    if (fields.layer.control.value.trim()) {
      value.layer = fields.layer.control.value.trim();
      value.layer_range = fields.layerRange.control.value.split(/[\s,\[\]()]+/).filter(Boolean).map(Number);
    }
    if (fields.traffic && fields.traffic.control.value.trim() && !value.layer) value.traffic = Number(fields.traffic.control.value.trim());
    value.variants = fields.variants.control.value.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
      const [variant, weight] = line.split(/\s+/);
      return weight === undefined ? { key: variant } : { key: variant, weight: Number(weight) };
    });
    const audience = {};
    const platforms = fields.platform.control.value.split(",").map((p) => p.trim()).filter(Boolean);
    if (platforms.length) audience.platform = platforms;
    if (fields.appVersion.control.value.trim()) audience.app_version = fields.appVersion.control.value.trim();
    if (fields.cohort.control.value.trim()) audience.cohort = fields.cohort.control.value.trim();
    if (Object.keys(audience).length) value.audience = audience;
    const screens = json(fields.screens, "screens");
    if (screens !== undefined) value.screens = screens;
    if (sticky.checked) value.sticky = true;
    return value;
  }

  /** The definition to PUT: the form's members over the rest of the definition it was built from. */
  function collect() {
    const value = {};
    for (const [member, v] of Object.entries(base ?? {})) {
      if (!FORM_MEMBERS.includes(member) && member !== "key" && member !== "etag") value[member] = v;
    }
    if (!key) value.status = "draft";
    const typed = collectForm();
    if (typed.layer) delete value.traffic;
    return { ...value, ...typed };
  }

  /** The field a refusal names: "variants[1].weight: …", "audience.cohort: …", "\"stauts\" is not…", "/screens/home/b/…". */
  function fieldFor(text) {
    if (text.startsWith("/screens") || text.startsWith("screens")) return fields.screens;
    const path = /^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+)?)/.exec(text)?.[1] ?? /"([a-z_.]+)"/.exec(text)?.[1] ?? "";
    const head = path.split(/[.\[]/)[0];
    return {
      key: fields.key, salt: fields.salt, traffic: fields.traffic, variants: fields.variants, layer: fields.layer,
      layer_range: fields.layerRange, screens: fields.screens,
      audience: path.startsWith("audience.app_version") ? fields.appVersion : path.startsWith("audience.cohort") ? fields.cohort : fields.platform,
    }[head] ?? null;
  }

  function clear() {
    for (const wrapper of Object.values(fields)) {
      if (!wrapper) continue;
      wrapper.message.textContent = "";
      wrapper.control.removeAttribute("aria-invalid");
    }
    message.show("");
  }

  function refusal(error) {
    const problems = error.problems ?? [];
    const at = error.at ?? (problems.length ? fields.screens : fieldFor(error.message));
    if (at) {
      // Every problem of a variant patch (422 invalid_variant_patch), each with the place it names.
      at.message.textContent = problems.length ? problems.map((p) => `${p.path}: ${p.message}`).join("\n") : error.message;
      at.control.setAttribute("aria-invalid", "true");
      at.control.focus();
    }
    message.show(error.status ? `${error.status} ${error.code}: ${error.message}` : error.message, "error");
  }

  async function submit(retried = false) {
    clear();
    const name = key ?? fields.key.control.value.trim();
    let body;
    try {
      body = collect();
    } catch (error) {
      return refusal(error);
    }
    try {
      // An edit is based on the ETag it loaded; a new experiment must not replace one made meanwhile.
      const precondition = key ? { ifMatch: etag ?? undefined } : { ifNoneMatch: "*" };
      const answer = await call("PUT", experimentPath(name), body, precondition);
      dirty = false;
      stale.hidden = true;
      message.show(`Saved ${answer.key ?? name} (${answer.status ?? body.status}); screens: ${(answer.screens ?? []).join(", ") || "none"}.`, "ok");
      if (!key) {
        changed();
        navigate("#experiments/" + encodeURIComponent(name));
        return;
      }
      await afterAction();
    } catch (error) {
      if (error.status !== 412) return refusal(error);
      // Stale. If what changed is not the form's (a ramp, an override: made here or by hubctl
      // between two reads), the form's edits still apply to the stored definition: send them
      // once more on top of it. Otherwise say so, show the stored definition, keep the edits to copy.
      const { value, etag: nextETag } = await getWithETag(experimentPath(name));
      if (!retried && formPart(value) === formPart(base)) {
        base = value;
        etag = nextETag;
        showBase(value);
        return submit(true);
      }
      const edits = collectForm();
      dirty = false;
      base = null;
      update(value, nextETag);
      message.show(`Not saved (412): ${error.message}. Someone else (another console, hubctl, the API) changed this definition after the form was loaded, ` +
        "and saving would have undone that change. The form now shows the stored definition; your edits are below to make again.", "error");
      showStale("Your edits were not saved (412 stale_definition).", edits);
    }
  }

  async function deleteExperiment() {
    const ok = await confirmAction({
      title: `Delete ${key}?`,
      body: ["Its definition is removed and every client sees the base screens again; its results are kept where they are."],
      confirm: "Delete", danger: true,
    });
    if (!ok) return;
    try {
      await call("DELETE", experimentPath(key));
      changed();
      navigate("#experiments");
    } catch (error) {
      refusal(error);
    }
  }

  async function setStatus(next) {
    const verb = next === "running" ? "Start" : "Stop";
    const ok = await confirmAction({
      title: `${verb} ${key}?`,
      body: next === "running"
        ? "Clients in its audience are assigned and see their variant's screens now."
        : "Every client sees the base screens again; results stay.",
      confirm: verb, danger: next !== "running",
    });
    if (!ok) return;
    message.show("");
    try {
      await call("POST", `${experimentPath(key)}/status`, { status: next });
      await afterAction();
    } catch (error) {
      refusal(error);
    }
  }

  return {
    update,
    /** The definition the form would save now (throws with the field at fault); for the preview. */
    definition: () => collect(),
    /** The key typed (a new experiment) or edited. */
    key: () => key ?? fields?.key.control.value.trim(),
    /** Shows a refusal (a 422 of the preview) at the field it names. */
    refusal,
  };
}

// MARK: - The ramp

function rampPanel({ container, key, can, afterAction }) {
  let now = null; // the traffic (in %) on the hub as last read
  let layer = undefined;
  let salt = key;
  const slider = el("input", { type: "range", id: "ramp", min: 0, max: 100, step: 1, value: 100 });
  const shown = el("output", { for: slider.id, id: "ramp-value" }, "");
  const current = el("p", { className: "hint", id: "ramp-current" });
  const preview = el("div", { className: "ramp-preview", "aria-live": "polite", id: "ramp-preview" });
  const message = statusLine();
  message.id = "ramp-status";
  const apply = actionButton("Apply ramp…", { scope: "experiment", can, className: "primary", onclick: () => applyRamp() });
  apply.id = "apply-ramp";
  const controls = [
    el("div", { className: "field" }, el("label", { for: slider.id }, "Traffic"), el("div", { className: "slider" }, slider, shown)),
    current, preview, el("div", { className: "actions" }, apply), message];
  let units = null; // connected units with their current assignment

  function update(definition) {
    const saltBefore = salt;
    salt = definition.salt ?? key;
    if (definition.layer) {
      if (layer !== definition.layer) container.replaceChildren(el("p", {}, `${key} takes a share of layer ${definition.layer} (${(definition.layer_range ?? []).join("–")}): change its layer range in the definition; traffic does not apply.`));
      layer = definition.layer;
      return;
    }
    const next = Math.round((definition.traffic ?? 1) * 100);
    const first = now === null || layer;
    layer = undefined;
    if (first) {
      container.replaceChildren(...controls);
      refresh();
    }
    if (!first && next === now && salt === saltBefore) return; // a poll that found the same traffic: the preview (a live region) stays quiet
    if (!first && next !== now) message.show(""); // "Traffic is 30 %." no longer says what is on the hub
    // The slider follows the hub unless the operator has moved it away from what it showed.
    if (first || Number(slider.value) === now) slider.value = String(next);
    now = next;
    current.textContent = `On the hub now: ${now} %.`;
    current.dataset.traffic = String(now);
    render();
  }

  async function loadUnits() {
    const { clients } = await get("/v1/clients");
    const groups = new Map();
    for (const client of clients) {
      const unit = client.user ?? client.device;
      if (!unit) continue;
      const group = `${client.platform ?? ""}|${client.app_version ?? ""}`;
      if (!groups.has(group)) groups.set(group, { platform: client.platform, app_version: client.app_version, units: new Set() });
      groups.get(group).units.add(unit);
    }
    const found = new Map();
    for (const group of groups.values()) {
      const list = [...group.units];
      const answer = await get(withQuery(`${experimentPath(key)}/assignment`, { unit: list, platform: group.platform, app_version: group.app_version }));
      const assignments = answer.assignments ?? [{ unit: list[0], variant: answer.variant, reason: answer.reason }];
      for (const a of assignments) found.set(a.unit, a);
    }
    units = [...found.values()];
  }

  function render() {
    const next = Number(slider.value);
    shown.textContent = `${next} %`;
    if (!units) { preview.textContent = "Looking at the connected units…"; return; }
    const threshold = Math.floor((next / 100) * 10000);
    let join = 0, leave = 0, stay = 0, unaffected = 0;
    for (const unit of units) {
      if (unit.reason !== "bucket" && unit.reason !== "traffic") { unaffected++; continue; }
      const inNow = unit.reason === "bucket";
      const inNext = bucket(`${salt}/${key}/${unit.unit}`) < threshold;
      if (inNow && inNext) stay++;
      else if (!inNow && inNext) join++;
      else if (inNow && !inNext) leave++;
    }
    preview.dataset.join = String(join);
    preview.dataset.leave = String(leave);
    preview.dataset.move = "0";
    preview.replaceChildren(
      el("p", { className: "moves" }, el("strong", {}, "0 units change variant"),
        " — a unit's variant comes from its own hash (salt/key/unit/variant), which traffic does not enter (DESIGN §6)."),
      el("p", {}, `Of ${number(units.length)} connected unit${units.length === 1 ? "" : "s"}: ${join} join, ${leave} leave (back to the base screens), ${stay} stay in their variant` +
        (unaffected ? `, ${unaffected} not affected (override, sticky or outside the audience)` : "") + "."),
      el("p", { className: "hint" }, next >= now
        ? "Raising traffic only adds units: no one assigned now leaves or moves."
        : "Lowering traffic takes units out; raising it again brings the same units back to the same variants."));
  }

  async function applyRamp() {
    const next = Number(slider.value);
    const ok = await confirmAction({
      title: `Ramp ${key} to ${next} %?`,
      body: [preview.querySelector("p:nth-child(2)")?.textContent ?? "", "No unit changes variant."],
      confirm: `Set traffic to ${next} %`,
    });
    if (!ok) return;
    try {
      // One named change on the hub (POST …/traffic), not a read-modify-write of the definition.
      await call("POST", `${experimentPath(key)}/traffic`, { traffic: next / 100 });
      await afterAction();
      message.show(`Traffic is ${next} %.`, "ok");
      await loadUnits();
      render();
    } catch (error) {
      message.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }

  // Who is connected changes: look again whenever the slider moves.
  const refresh = debounce(150, () => loadUnits().then(render, (error) => { preview.textContent = error.message; }));
  slider.addEventListener("input", () => { shown.textContent = `${slider.value} %`; refresh(); });
  return { update };
}

// MARK: - Overrides

/** One unit at a time into a variant (POST …/overrides), or out of its override; nothing else of the definition is sent. */
function overridesPanel({ container, key, can, afterAction }) {
  const listing = el("div", { id: "overrides" });
  const unit = field("Unit", input({ name: "override-unit", id: "override-unit", placeholder: "user id or device id" }), { name: "override-unit" });
  const variant = field("Variant", select([], { name: "override-variant", id: "override-variant" }), { name: "override-variant" });
  const add = actionButton("Add override", { scope: "experiment", can, className: "primary", onclick: () => set(unit.control.value.trim(), variant.control.value) });
  add.id = "add-override";
  const message = statusLine();
  message.id = "override-status";
  container.replaceChildren(
    el("p", { className: "hint" }, "An override puts one unit in a variant whatever its bucket, the traffic or the audience; it is counted in that variant only. For QA and demos: overriding many units skews the results (see the sample-ratio check)."),
    listing,
    el("form", { className: "inline-form", onsubmit: (event) => { event.preventDefault(); add.click(); } }, unit, variant, add),
    message);
  let variants = [];

  function update(definition) {
    const keys = (definition.variants ?? []).map((v) => v.key);
    if (keys.join("\n") !== variants.join("\n")) {
      const chosen = variant.control.value;
      variant.control.replaceChildren(...keys.map((k) => el("option", { value: k }, k)));
      if (keys.includes(chosen)) variant.control.value = chosen;
      variants = keys;
    }
    const entries = Object.entries(definition.overrides ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    showIfChanged(listing, entries, () => entries.length
      ? table(["Unit", "Variant", ""], entries.map(([u, v]) => {
        const remove = actionButton("Remove", { scope: "experiment", can, onclick: () => set(u, null) });
        remove.dataset.removeOverride = u;
        remove.setAttribute("aria-label", `Remove the override of ${u}`);
        return [u, v, remove];
      }), { className: "overrides" })
      : el("p", { className: "empty" }, "No overrides."));
  }

  async function set(who, into) {
    message.show("");
    unit.message.textContent = "";
    if (!who) {
      unit.message.textContent = "Type the unit: a user id (the token's sub) or a device id.";
      unit.control.focus();
      return;
    }
    try {
      await call("POST", `${experimentPath(key)}/overrides`, { unit: who, variant: into });
      message.show(into === null ? `${who} has no override now: assigned like any unit.` : `${who} is in ${into} now.`, "ok");
      if (into !== null) unit.control.value = "";
      await afterAction();
    } catch (error) {
      message.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }
  return { update };
}

// MARK: - Preview

/**
 * Each variant's screens as an up-to-date client in that variant sees them now: of the stored
 * definition (GET …/preview) or of the form before it is saved (PUT …?dry_run=true: checked as
 * a save would be, answered with the same preview, nothing stored).
 */
function variantPreview({ container, key, editor }) {
  const out = el("div", { className: "variant-preview", id: "variant-preview", "aria-live": "polite" });
  const message = statusLine();
  message.id = "preview-status";
  const stored = key ? el("button", { type: "button", id: "preview-stored", onclick: () => show("GET") }, "Preview the stored definition") : null;
  const form = el("button", { type: "button", id: "preview-form", onclick: () => show("POST") }, key ? "Preview the form (unsaved)" : "Preview the form");
  container.replaceChildren(
    el("p", { className: "hint" }, "Each variant's screens as a client in that variant would get them now: the base screen with the variant's patch applied. Nothing is stored or sent to clients."),
    el("div", { className: "actions" }, stored, form), message, out);

  async function show(method) {
    message.show("");
    let answer;
    try {
      const name = method === "GET" ? key : editor.key();
      if (!name) throw new Error("Type the experiment's key first.");
      answer = method === "GET"
        ? await get(`${experimentPath(name)}/preview`)
        : await call("PUT", withQuery(experimentPath(name), { dry_run: "true" }), editor.definition());
    } catch (error) {
      out.replaceChildren();
      if (error.status || error.at) editor.refusal(error);
      const problems = error.problems ?? [];
      message.show(error.status ? `${error.status} ${error.code}: ${error.message}` : error.message, "error");
      if (problems.length) out.append(el("ul", { className: "problems" }, problems.map((p) => el("li", {}, el("code", {}, p.path), ": ", p.message))));
      return;
    }
    const screens = answer.screens ?? [];
    out.dataset.source = method === "GET" ? "stored" : "form";
    out.replaceChildren(...(screens.length ? screens.map(screenPreview) : [el("p", { className: "empty" }, "This definition changes no screen.")]));
    message.show(`${method === "GET" ? "The stored definition" : "The form"}: ${screens.length} screen${screens.length === 1 ? "" : "s"}.`, "ok");
  }
  return { show };
}

function screenPreview(screen) {
  const heading = el("h3", {}, screen.screen, screen.version === null || screen.version === undefined ? "" : ` (version ${screen.version})`);
  if (screen.version === null || screen.version === undefined || !(screen.variants ?? []).length) {
    return el("div", { className: "screen-preview", dataset: { screen: screen.screen } }, heading,
      el("p", { className: "empty" }, "Not published yet: nothing to preview (the variant patches are checked when it is)."));
  }
  const control = screen.variants[0];
  return el("div", { className: "screen-preview", dataset: { screen: screen.screen } }, heading,
    el("div", { className: "variant-columns" }, screen.variants.map((v) => el("figure", { className: "variant-tree", dataset: { variant: v.variant, hash: v.hash } },
      el("figcaption", {}, el("strong", {}, v.variant), ` · hash ${String(v.hash).slice(0, 12)}…`,
        v !== control && v.hash === control.hash ? " · the same tree as " + control.variant : ""),
      el("div", { className: "preview" }, renderScreen(v.tree)),
      el("details", {}, el("summary", {}, "JSON"), el("div", { className: "tree" }, treeView(v.tree)))))));
}

// MARK: - Results

const percent = (x) => (100 * x).toFixed(1) + " %";
const points = (x) => (x > 0 ? "+" : x < 0 ? "−" : "") + (100 * Math.abs(x)).toFixed(1) + " pp";
/** Three significant digits ("1.33", "0.0902", "2.00"); thousands rounded ("12,345"). */
const decimal = (x) => {
  const size = Math.abs(x);
  if (size >= 1000) return Math.round(x).toLocaleString("en-US");
  return size !== 0 && size < 0.001 ? x.toExponential(2) : x.toPrecision(3);
};
const signed = (x) => (x > 0 ? "+" : x < 0 ? "−" : "") + decimal(Math.abs(x));
const isNumber = (x) => typeof x === "number" && Number.isFinite(x);
const pValue = (p) => (p < 0.0001 ? "< 0.0001" : "= " + Number(p.toPrecision(2)));

/** `estimate (low to high)`, or a dash without an estimate. */
function withInterval(value, interval, format) {
  if (!isNumber(value)) return "–";
  if (!Array.isArray(interval) || !isNumber(interval[0])) return `${format(value)} (no interval yet)`;
  return `${format(value)} (${format(interval[0])} to ${format(interval[1])})`;
}

const KEPT = {
  "data-dir": "Kept in the hub's data dir: they survive restarts.",
  redis: "Kept in Redis: the sum over every hub, and they survive restarts.",
  memory: "In this hub's memory only: a restart resets them, and another hub counts its own clients.",
};

async function loadResults(container, key) {
  const answer = await get(`${experimentPath(key)}/results`);
  showIfChanged(container, answer, () => results(answer));
}

/** The results page: exposure, the sample-ratio check, each goal, and what it all does not show. */
function results(answer) {
  const variants = answer.variants ?? [];
  const control = answer.control ?? variants[0]?.variant;
  const totalServed = variants.reduce((sum, v) => sum + v.served, 0);
  const totalWeight = variants.reduce((sum, v) => sum + (v.weight ?? 0), 0);
  const goals = answer.goals ?? [];
  return [
    // The hub could not bring its tally up to date (e.g. Redis unreachable): these numbers may be behind.
    answer.warning ? el("p", { className: "srm-warning", role: "alert", id: "results-warning" }, answer.warning) : null,
    srmBanner(answer.srm),
    el("dl", { className: "facts", id: "results-facts" },
      el("dt", {}, "Status"), el("dd", {}, answer.status ?? "–"),
      el("dt", {}, "Counting since"), el("dd", { id: "results-since" }, answer.since ? when(answer.since) : "nothing counted yet"),
      el("dt", {}, "Kept"), el("dd", { id: "results-kept", dataset: { kept: answer.kept ?? "" } }, KEPT[answer.kept] ?? answer.kept ?? "–"),
      el("dt", {}, "Control"), el("dd", {}, control ?? "–")),
    el("h3", {}, "Who was exposed"),
    el("p", { className: "explain" }, el("strong", {}, "Served"), ": units the hub sent this variant's tree (a unit counts once, in its latest variant). ",
      el("strong", {}, "Confirmed"), ": of those, units whose app reported it drew that tree (the ", el("code", {}, "rendered"),
      " message). Served minus confirmed are units that did not draw it yet, or whose app does not confirm: a large gap in one variant only is a problem of that variant's screens."),
    exposureChart(variants),
    table(["Variant", "Served", "Confirmed", "Confirmed of served", "Weight", "Expected share", "Share of served"], variants.map((v) => [
      v.variant, String(v.served), String(v.confirmed), v.served ? percent(v.confirmed / v.served) : "–",
      String(v.weight ?? "–"), totalWeight && isNumber(v.weight) ? percent(v.weight / totalWeight) : "–", totalServed ? percent(v.served / totalServed) : "–",
    ]), { className: "results-table", caption: "Distinct units per variant" }),
    srmLine(answer.srm),
    ...goals.map((goal) => goalResults(goal, control)),
    goals.length ? null : el("p", { className: "empty", id: "no-goals" },
      "No goal events yet. Apps report them with track(event, value) (docs/clients.md); an event counts for a unit once it was served a variant."),
    limits(),
  ].filter(Boolean);
}

/** The warning when served counts do not fit the weights (SRM): every difference below is suspect. */
function srmBanner(srm) {
  if (!srm || !srm.mismatch) return null;
  return el("div", { className: "srm-warning", role: "alert", id: "srm-warning" },
    el("strong", {}, "Sample ratio mismatch — do not trust these results yet."),
    el("p", {}, `The units served per variant do not fit the weights (chi-square ${decimal(srm.chi_square)}, p ${pValue(srm.p_value)}): ` +
      "a split this uneven happens by chance less than once in 1,000 fair experiments. Something other than the assignment decides who is counted: " +
      "many overrides, weights or traffic changed while running, sticky units kept from an earlier split, or one variant's screens reaching fewer clients. " +
      "Until the cause is found and fixed, a difference between variants may come from it rather than from the variants."));
}

function srmLine(srm) {
  if (!srm) return el("p", { className: "hint", id: "srm-line" }, "Sample-ratio check: not computed (it needs two variants with a weight, and served units).");
  if (srm.mismatch) return null;
  return el("p", { className: "hint", id: "srm-line" }, `Sample-ratio check: the served counts fit the weights (chi-square ${decimal(srm.chi_square)}, p ${pValue(srm.p_value)}; it warns below p = 0.001).`);
}

/** One goal: a table and four interval charts (rate, its difference to control; mean value, its difference). */
function goalResults(goal, control) {
  const rows = goal.variants ?? [];
  const others = rows.filter((r) => r.variant !== control);
  const hasValues = rows.some((r) => isNumber(r.value_mean) && r.value_mean !== 0);
  const rowOf = (r, value, interval, note) => ({ label: r.variant, value, low: interval?.[0], high: interval?.[1], note });
  const charts = [
    figure(intervalChart(rows.map((r) => rowOf(r, r.rate, r.rate_ci, "no units served")), { label: "Conversion rate, 95 % CI", format: percent, fromZero: true })),
    others.length ? figure(intervalChart(others.map((r) => rowOf(r, r.diff_rate, r.diff_rate_ci, "no units yet")), { label: `Rate − ${control}'s (percentage points), 95 % CI`, format: points, zero: true })) : null,
  ];
  if (hasValues) {
    charts.push(figure(intervalChart(rows.map((r) => rowOf(r, r.value_mean, r.value_ci, "no units served")), { label: "Mean value per served unit, 95 % CI", format: decimal, fromZero: true })));
    if (others.length) charts.push(figure(intervalChart(others.map((r) => rowOf(r, r.diff_value, r.diff_value_ci, "no units yet")), { label: `Mean value − ${control}'s, 95 % CI`, format: signed, zero: true })));
  }
  const verdict = (diff, interval) => {
    if (!isNumber(diff) || !Array.isArray(interval) || !isNumber(interval[0])) return "";
    return interval[0] > 0 || interval[1] < 0 ? " · excludes 0" : " · includes 0";
  };
  return el("div", { className: "goal", dataset: { goal: goal.event } },
    el("h3", {}, "Goal: ", el("code", {}, goal.event)),
    el("p", { className: "explain" }, "Rate: served units that sent this event at least once after being served, of all served units. ",
      "Mean value: the total value of this event per served unit (0 for units without it). ",
      `Differences are to ${control} (the control), with 95 % intervals.`),
    el("div", { className: "charts" }, charts),
    table(["Variant", "Units with the event", "Rate (95 % CI)", `Rate − ${control}'s (95 % CI)`, "Mean value (95 % CI)", `Mean − ${control}'s (95 % CI)`], rows.map((r) => [
      r.variant, String(r.units ?? "–"), withInterval(r.rate, r.rate_ci, percent),
      r.variant === control ? "control" : withInterval(r.diff_rate, r.diff_rate_ci, points) + verdict(r.diff_rate, r.diff_rate_ci),
      withInterval(r.value_mean, r.value_ci, decimal),
      r.variant === control ? "control" : withInterval(r.diff_value, r.diff_value_ci, signed) + verdict(r.diff_value, r.diff_value_ci),
    ]), { className: "goal-table", caption: `Goal ${goal.event} per variant` }));
}

const figure = (chart) => el("figure", {}, chart);

/** What the numbers above do not show: said once, plainly, under them. */
function limits() {
  return el("div", { className: "limits", id: "results-limits" },
    el("h3", {}, "What these numbers do not show"),
    el("ul", {},
      el("li", {}, el("strong", {}, "Looking again and again inflates false positives. "),
        "Each interval is right 95 % of the time for one look at a sample size fixed in advance. Checking this page every day and stopping as soon as an interval excludes 0 finds a “winner” far more often than 1 in 20 times when there is no difference. Decide the duration (or the number of units) before you start, and decide then."),
      el("li", {}, el("strong", {}, "Many comparisons: "),
        "with several goals and variants, about 1 in 20 intervals excludes 0 by chance alone."),
      el("li", {}, el("strong", {}, "An interval that includes 0 "),
        "does not show that there is no difference: only that this data cannot tell it from none. A narrow one around 0 says any effect is small."),
      el("li", {}, el("strong", {}, "Units, not events: "),
        "a unit that buys three times converts once; its values add up. A unit counts in its latest variant only; events before a unit was served, and of units never served, are not counted."),
      el("li", {}, el("strong", {}, "Served is not seen: "),
        "a unit can be served a tree its app never drew (confirmed tells you how many did). The comparison is of everyone served, as assigned — not of those who looked."),
      el("li", {}, el("strong", {}, "Not why: "),
        "a difference says the variant changed the goal for these units in this period; not why, nor that it lasts, nor that it holds for users outside the audience.")));
}
