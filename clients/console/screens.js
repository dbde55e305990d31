// Screens: the list (versions, subscribers), and one screen: its tree (as the demo page draws it
// and as a collapsible tree), what a given user or device sees, its history, the diff between
// any two kept versions (ops and a side-by-side highlight), rollback with a confirmation, and its
// release (releases.js).

import { get, call, withQuery, screenPath, ApiError } from "./api.js";
import { el, field, input, select, section, table, number, when, every, statusLine, actionButton, confirmAction, showIfChanged } from "./ui.js";
import { renderScreen, treeView, sideBySide } from "./render.js";
import { applyPatch, screenHash } from "./pushhub-client.js";
import { releasePanel } from "./releases.js";

export default function screens(context) {
  return context.argument ? screenDetail(context) : screenList(context);
}

function screenList({ root }) {
  const body = el("div", { className: "list-body" }, el("p", { className: "empty" }, "Loading…"));
  root.append(el("h2", {}, "Screens"), section("Published screens", body));
  return every(2000, async () => {
    const { screens } = await get("/v1/screens");
    showIfChanged(body, screens, () => !screens.length
      ? el("p", { className: "empty" }, "No screen is published yet: hubctl screen publish NAME FILE.json")
      : table(["Screen", "Version", "Subscribers", "Published", "Hash"], screens.map((screen) => [
        el("a", { href: "#screens/" + encodeURIComponent(screen.name), className: "screen-link" }, screen.name),
        String(screen.version), number(screen.subscribers), when(screen.published_at),
        el("code", { title: screen.hash }, screen.hash.slice(0, 12) + "…"),
      ]), { className: "screens" }));
  });
}

function screenDetail({ root, argument: name, can }) {
  const summary = el("dl", { className: "facts" });
  const preview = el("div", { className: "preview" });
  const tree = el("div", { className: "tree" });
  const variants = el("div", { className: "variants" });
  const historyBody = el("div");
  const diffBody = el("div", { className: "diff" });
  const status = statusLine();

  // What a given client sees.
  const user = field("User", input({ name: "user", placeholder: "u17" }));
  const device = field("Device (anonymous)", input({ name: "device" }));
  const platform = field("Platform", input({ name: "platform", placeholder: "ios" }));
  const appVersion = field("App version", input({ name: "app_version", placeholder: "5.3.0" }));
  const asClient = el("form", { className: "inline-form", onsubmit: (event) => { event.preventDefault(); loadTree(); } },
    user, device, platform, appVersion, el("button", { type: "submit" }, "Show as this client"));

  // Diff and rollback choices.
  const from = field("From version", select([], { name: "from" }));
  const to = field("To version", select([], { name: "to" }));
  const diffForm = el("form", { className: "inline-form", onsubmit: (event) => { event.preventDefault(); chosen = true; loadDiff(); } },
    from, to, el("button", { type: "submit" }, "Show diff"));
  const rollbackTo = field("Roll back to", select([], { name: "rollback" }));
  const rollbackButton = actionButton("Roll back…", { scope: "publish", can, className: "danger", onclick: rollback });
  rollbackButton.id = "rollback";
  const release = releasePanel({ name, can, changed: () => refresh().catch(() => {}) });

  root.append(
    el("p", { className: "crumbs" }, el("a", { href: "#screens" }, "Screens"), " / ", name),
    el("h2", {}, name),
    release.element,
    el("div", { className: "columns" },
      el("div", {},
        section("Current version", summary),
        section("As a client sees it", asClient, variants, el("div", { className: "two" }, el("div", {}, el("h3", {}, "Drawn as the demo page draws it"), preview), el("div", {}, el("h3", {}, "Tree"), tree)))),
      el("div", {},
        section("History", historyBody),
        section("Rollback", el("div", { className: "inline-form" }, rollbackTo, rollbackButton), status))),
    section("Diff", diffForm, diffBody));

  let current = null, versions = [], chosen = false;

  async function loadTree() {
    try {
      const answer = await get(withQuery(screenPath(name), {
        user: user.control.value.trim(), device: device.control.value.trim(),
        platform: platform.control.value.trim(), app_version: appVersion.control.value.trim(),
      }));
      preview.replaceChildren(renderScreen(answer.tree));
      tree.replaceChildren(treeView(answer.tree));
      preview.dataset.hash = answer.hash;
      for (const f of [user, device, platform, appVersion]) f.message.textContent = "";
      await loadVariants();
    } catch (error) {
      const target = { user, device, platform, app_version: appVersion }[/"?(user|device|platform|app_version)"?/.exec(error.message)?.[1]] ?? appVersion;
      target.message.textContent = error.message;
    }
  }

  /** The variant of each running experiment on this screen for the unit asked about (the user, else the device). */
  async function loadVariants() {
    const unit = user.control.value.trim() || device.control.value.trim();
    const { experiments } = await get("/v1/experiments");
    const touching = experiments.filter((e) => e.status === "running" && e.screens.includes(name));
    if (!touching.length) {
      variants.replaceChildren(el("p", { className: "hint" }, "No running experiment changes this screen."));
      return;
    }
    if (!unit) {
      variants.replaceChildren(el("p", { className: "hint" }, `Running here: ${touching.map((e) => e.key).join(", ")}. Give a user or device to see its variants; without one, the base tree is shown.`));
      return;
    }
    const rows = await Promise.all(touching.map(async (e) => {
      const answer = await get(withQuery(`/v1/experiments/${encodeURIComponent(e.key)}/assignment`, {
        unit, platform: platform.control.value.trim(), app_version: appVersion.control.value.trim(),
      }));
      return [el("a", { href: "#experiments/" + encodeURIComponent(e.key) }, e.key), answer.variant ?? "(not in it)", answer.reason];
    }));
    variants.replaceChildren(table(["Experiment", `Variant of ${unit}`, "Why"], rows, { className: "variants" }));
  }

  function fillSelect(wrapper, selected) {
    wrapper.control.replaceChildren(...versions.map((v) => el("option", { value: String(v.version), selected: v.version === selected }, `v${v.version}`)));
  }

  async function refresh() {
    const [{ versions: kept }, list] = await Promise.all([get(screenPath(name) + "/history"), get("/v1/screens")]);
    const entry = list.screens.find((screen) => screen.name === name);
    const latest = kept[0]?.version;
    showIfChanged(summary, [latest, entry], () => [
      el("dt", {}, "version"), el("dd", { id: "current-version" }, String(latest ?? "–")),
      el("dt", {}, "hash"), el("dd", {}, el("code", {}, entry?.hash ?? "–")),
      el("dt", {}, "subscribers"), el("dd", { id: "subscribers" }, number(entry?.subscribers)),
      el("dt", {}, "published"), el("dd", {}, when(entry?.published_at))]);
    if (latest === current) return;
    current = latest;
    versions = kept;
    historyBody.replaceChildren(table(["Version", "Published", "Hash", "By", "Message"], kept.map((v) => [
      `v${v.version}` + (v.version === latest ? " (current)" : ""), when(v.published_at), el("code", { title: v.hash }, v.hash.slice(0, 12) + "…"),
      v.author ?? "–", [v.rollback_of != null ? `(rollback of v${v.rollback_of})` : "", v.message ?? ""].join(" ").trim(),
    ]), { className: "history" }));
    if (!chosen) {
      fillSelect(from, kept[1]?.version ?? latest);
      fillSelect(to, latest);
    } else {
      fillSelect(from, Number(from.control.value));
      fillSelect(to, Number(to.control.value));
    }
    fillSelect(rollbackTo, kept[1]?.version ?? latest);
    rollbackButton.disabled = !can("publish") || kept.length < 2;
    await loadTree();
    if (!chosen) await loadDiff();
  }

  async function loadDiff() {
    const a = Number(from.control.value), b = Number(to.control.value);
    if (!a || !b) return;
    try {
      const diff = await get(withQuery(screenPath(name) + "/diff", { from: a, to: b }));
      // The two trees: the current one, and each version rebuilt from it with the hub's own diff
      // (current → that version), checked against the version's hash.
      const base = await get(screenPath(name));
      const rebuild = async (version, hash) => {
        if (version === base.version) return base.tree;
        const back = await get(withQuery(screenPath(name) + "/diff", { from: base.version, to: version }));
        const rebuilt = applyPatch(base.tree, back.ops);
        if ((await screenHash(rebuilt)) !== hash) throw new Error(`v${version} could not be rebuilt (hash mismatch)`);
        return rebuilt;
      };
      const [fromTree, toTree] = await Promise.all([rebuild(a, diff.from_hash), rebuild(b, diff.to_hash)]);
      diffBody.replaceChildren(
        el("p", { className: "diff-summary" }, diff.ops.length
          ? `${diff.ops.length} operation${diff.ops.length === 1 ? "" : "s"} from v${diff.from} to v${diff.to} (RFC 6902, as a client at the latest app version without variants gets them)`
          : `v${diff.from} and v${diff.to} are the same tree`),
        el("ol", { className: "ops" }, diff.ops.map((op) => el("li", {}, el("code", {}, JSON.stringify(op))))),
        sideBySide(fromTree, toTree, diff.ops, { fromLabel: `v${diff.from}`, toLabel: `v${diff.to}` }));
      diffBody.dataset.from = String(diff.from);
      diffBody.dataset.to = String(diff.to);
    } catch (error) {
      diffBody.replaceChildren(el("p", { className: "error" }, error.message));
    }
  }

  async function rollback() {
    const target = Number(rollbackTo.control.value);
    const ok = await confirmAction({
      title: `Roll ${name} back to v${target}?`,
      body: [`v${target}'s tree is published again as a new version (v${current + 1}); subscribers whose tree changes get the patch at once.`],
      confirm: `Roll back to v${target}`, danger: true,
    });
    if (!ok) return;
    try {
      const answer = await call("POST", screenPath(name) + "/rollback", { to: target });
      status.show(answer.unchanged
        ? `v${answer.version} already has the tree of v${target}; nothing was published.`
        : `Published v${answer.version} (the tree of v${target}); sent to ${answer.sent} subscriber(s).`, "ok");
      chosen = false;
      await refresh();
    } catch (error) {
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }

  const stopRefresh = every(2000, () => refresh().catch((error) => {
    if (error instanceof ApiError && error.status === 404) historyBody.replaceChildren(el("p", { className: "error" }, error.message));
    else throw error;
  }));
  return () => { stopRefresh(); release.stop(); };
}
