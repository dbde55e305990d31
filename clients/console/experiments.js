// Experiments: the list; a definition editor whose refusals (422, "variants[1].weight: …") are
// shown at the field they name; start and stop; a traffic ramp with a preview of how many units
// move (none change variant, by design: DESIGN §6); results per variant as a chart with the
// confirmation rate's 95 % Wilson interval.

import { get, call, withQuery } from "./api.js";
import { el, field, input, select, section, table, number, statusLine, actionButton, confirmAction, every, debounce, showIfChanged } from "./ui.js";
import { resultsChart, wilson } from "./charts.js";
import { sha256, utf8 } from "./pushhub-client.js";

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

function experimentDetail({ container, key, can, navigate, changed }) {
  const stops = [];
  const editor = el("div");
  const ramp = el("div");
  const results = el("div", { className: "results" });
  // What an experimenter looks at first: the results, then the ramp, then the definition.
  container.replaceChildren();
  if (key) container.append(section(`Results of ${key}`, results), section("Ramp traffic", ramp));
  container.append(section(key ? `Definition of ${key}` : "New experiment", editor));

  (async () => {
    let definition = { variants: [{ key: "control", weight: 1 }, { key: "treatment", weight: 1 }], traffic: 1 };
    if (key) {
      try {
        definition = await get("/v1/experiments/" + encodeURIComponent(key));
      } catch (error) {
        editor.replaceChildren(el("p", { className: "error" }, error.message));
        return;
      }
    }
    buildEditor(editor, key, definition, can, navigate, changed);
    if (key) {
      buildRamp(ramp, key, definition, can);
      stops.push(every(2000, () => loadResults(results, key)));
    }
  })();
  return () => stops.forEach((stop) => stop());
}

function buildEditor(container, key, definition, can, navigate, changed) {
  const status = definition.status ?? "draft";
  const fields = {
    key: field("Key", input({ name: "key", value: key ?? "", readOnly: Boolean(key) }), { name: "key", hint: "a-z 0-9 . _ -" }),
    salt: field("Salt", input({ name: "salt", value: definition.salt ?? "", placeholder: key ?? "the key" }), { name: "salt", hint: "changing it reshuffles every unit" }),
    traffic: field("Traffic (0 to 1)", input({ name: "traffic", inputMode: "decimal", value: definition.layer ? "" : String(definition.traffic ?? 1) }), { name: "traffic" }),
    variants: field("Variants", el("textarea", { name: "variants", rows: 3, value: (definition.variants ?? []).map((v) => `${v.key} ${v.weight ?? 1}`).join("\n") }), { name: "variants", hint: "one per line: key weight" }),
    platform: field("Audience platform", input({ name: "audience.platform", value: [].concat(definition.audience?.platform ?? []).join(", ") }), { name: "audience", hint: "comma-separated; empty: any" }),
    appVersion: field("Audience app version", input({ name: "audience.app_version", value: definition.audience?.app_version ?? "" }), { name: "audience.app_version" }),
    cohort: field("Audience cohort", input({ name: "audience.cohort", value: definition.audience?.cohort ?? "" }), { name: "audience.cohort" }),
    layer: field("Layer", input({ name: "layer", value: definition.layer ?? "" }), { name: "layer", hint: "instead of traffic: a share of a layer" }),
    layerRange: field("Layer range", input({ name: "layer_range", value: definition.layer_range ? definition.layer_range.join(", ") : "", placeholder: "0, 5000" }), { name: "layer_range" }),
    overrides: field("Overrides (JSON: unit → variant)", el("textarea", { name: "overrides", rows: 2, value: definition.overrides ? JSON.stringify(definition.overrides) : "" }), { name: "overrides" }),
    screens: field("Screens (JSON: screen → variant → merge patch)", el("textarea", { name: "screens", rows: 6, value: definition.screens ? JSON.stringify(definition.screens, null, 2) : "" }), { name: "screens" }),
  };
  const sticky = el("input", { type: "checkbox", id: "experiment-sticky", checked: definition.sticky === true });
  const message = statusLine();
  const save = actionButton(key ? "Save definition" : "Create (as a draft)", { scope: "experiment", can, className: "primary", onclick: () => submit() });
  save.id = "save-experiment";
  const start = actionButton("Start", { scope: "experiment", can, onclick: () => setStatus("running") });
  start.id = "start-experiment";
  const stop = actionButton("Stop", { scope: "experiment", can, className: "danger", onclick: () => setStatus("stopped") });
  stop.id = "stop-experiment";
  if (status === "running") start.disabled = true;
  if (status !== "running") stop.disabled = true;
  const remove = actionButton("Delete…", { scope: "experiment", can, className: "danger", onclick: () => deleteExperiment() });
  remove.id = "delete-experiment";
  if (!key) { start.hidden = true; stop.hidden = true; remove.hidden = true; }

  container.replaceChildren(
    el("p", {}, "Status: ", el("span", { className: "badge", id: "experiment-status", dataset: { status } }, status), " ", start, " ", stop),
    el("form", { className: "definition", onsubmit: (event) => { event.preventDefault(); submit(); } },
      el("div", { className: "grid2" }, fields.key, fields.salt, fields.traffic, fields.variants, fields.platform, fields.appVersion, fields.cohort, fields.layer, fields.layerRange),
      el("div", { className: "check" }, sticky, el("label", { for: sticky.id }, "Sticky: a unit keeps its first variant")),
      fields.overrides, fields.screens,
      el("div", { className: "actions" }, save, remove), message));

  const json = (wrapper, what) => {
    const text = wrapper.control.value.trim();
    if (!text) return undefined;
    try { return JSON.parse(text); } catch (error) { throw Object.assign(new Error(`${what}: not JSON (${error.message})`), { at: wrapper }); }
  };

  function collect() {
    const value = { status };
    if (fields.salt.control.value.trim()) value.salt = fields.salt.control.value.trim();
    if (fields.layer.control.value.trim()) {
      value.layer = fields.layer.control.value.trim();
      value.layer_range = fields.layerRange.control.value.split(/[\s,\[\]()]+/).filter(Boolean).map(Number);
    } else if (fields.traffic.control.value.trim()) {
      value.traffic = Number(fields.traffic.control.value.trim());
    }
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
    const overrides = json(fields.overrides, "overrides"), screens = json(fields.screens, "screens");
    if (overrides !== undefined) value.overrides = overrides;
    if (screens !== undefined) value.screens = screens;
    if (sticky.checked) value.sticky = true;
    return value;
  }

  /** The field a refusal names: "variants[1].weight: …", "audience.cohort: …", "\"stauts\" is not…". */
  function fieldFor(text) {
    const path = /^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+)?)/.exec(text)?.[1] ?? /"([a-z_.]+)"/.exec(text)?.[1] ?? "";
    const head = path.split(/[.\[]/)[0];
    return {
      key: fields.key, salt: fields.salt, traffic: fields.traffic, variants: fields.variants, layer: fields.layer,
      layer_range: fields.layerRange, overrides: fields.overrides, screens: fields.screens,
      audience: path.startsWith("audience.app_version") ? fields.appVersion : path.startsWith("audience.cohort") ? fields.cohort : fields.platform,
    }[head] ?? null;
  }

  function clear() {
    for (const wrapper of Object.values(fields)) { wrapper.message.textContent = ""; wrapper.control.removeAttribute("aria-invalid"); }
    message.show("");
  }

  function refusal(error) {
    const at = error.at ?? fieldFor(error.message);
    if (at) {
      at.message.textContent = error.message;
      at.control.setAttribute("aria-invalid", "true");
      at.control.focus();
    }
    message.show(error.status ? `${error.status} ${error.code}: ${error.message}` : error.message, "error");
  }

  async function submit() {
    clear();
    const name = key ?? fields.key.control.value.trim();
    try {
      const answer = await call("PUT", "/v1/experiments/" + encodeURIComponent(name), collect());
      message.show(`Saved ${answer.key} (${answer.status}); screens: ${answer.screens.join(", ") || "none"}.`, "ok");
      changed();
      if (!key) navigate("#experiments/" + encodeURIComponent(name));
    } catch (error) {
      refusal(error);
    }
  }

  async function deleteExperiment() {
    const ok = await confirmAction({
      title: `Delete ${key}?`,
      body: ["Its definition is removed and every client sees the base screens again; its exposure log stays in the data dir."],
      confirm: "Delete", danger: true,
    });
    if (!ok) return;
    try {
      await call("DELETE", "/v1/experiments/" + encodeURIComponent(key));
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
    clear();
    try {
      await call("POST", `/v1/experiments/${encodeURIComponent(key)}/status`, { status: next });
      buildEditor(container, key, await get("/v1/experiments/" + encodeURIComponent(key)), can, navigate, changed);
      changed();
    } catch (error) {
      refusal(error);
    }
  }
}

function buildRamp(container, key, definition, can) {
  if (definition.layer) {
    container.replaceChildren(el("p", {}, `${key} takes a share of layer ${definition.layer} (${definition.layer_range.join("–")}): change its layer range in the definition; traffic does not apply.`));
    return;
  }
  const now = Math.round((definition.traffic ?? 1) * 100);
  const slider = el("input", { type: "range", id: "ramp", min: 0, max: 100, step: 1, value: now });
  const shown = el("output", { for: slider.id, id: "ramp-value" }, `${now} %`);
  const preview = el("div", { className: "ramp-preview", "aria-live": "polite", id: "ramp-preview" });
  const message = statusLine();
  message.id = "ramp-status";
  const apply = actionButton("Apply ramp…", { scope: "experiment", can, className: "primary", onclick: () => applyRamp() });
  apply.id = "apply-ramp";
  container.replaceChildren(
    el("div", { className: "field" }, el("label", { for: slider.id }, "Traffic"), el("div", { className: "slider" }, slider, shown)),
    preview, el("div", { className: "actions" }, apply), message);

  const salt = definition.salt ?? key;
  let units = null; // connected units with their current assignment

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
      const answer = await get(withQuery(`/v1/experiments/${encodeURIComponent(key)}/assignment`, { unit: list, platform: group.platform, app_version: group.app_version }));
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
      // One step on the hub (not a read-modify-write here: an edit made meanwhile is kept).
      await call("POST", "/v1/experiments/" + encodeURIComponent(key) + "/traffic", { traffic: next / 100 });
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
  render();
  refresh();
}

async function loadResults(container, key) {
  const answer = await get(`/v1/experiments/${encodeURIComponent(key)}/results`);
  const percent = (x) => (100 * x).toFixed(1) + " %";
  showIfChanged(container, answer, () => [
    resultsChart(answer.variants),
    table(["Variant", "Served", "Confirmed", "Confirmation rate", "95 % CI (Wilson)"], answer.variants.map((v) => {
      const [low, high] = wilson(v.confirmed, v.served);
      return [v.variant, String(v.served), String(v.confirmed), v.served ? percent(v.confirmed / v.served) : "–", v.served ? `${percent(low)} – ${percent(high)}` : "–"];
    }), { className: "results-table", caption: `Distinct units per variant (status: ${answer.status})` })]);
}
