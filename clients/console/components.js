// Components (DESIGN §16, issue 28): what each app build can render. The registered components
// with, per version, how many connected clients can render it (GET /v1/components); one
// component's versions and schemas; the app profiles (platform and version → components,
// GET /v1/apps); and a screen as a given build sees it (platform, app version and, optionally,
// the components it declares: GET /v1/screens/{name}?platform=&app_version=&components=).
// Read only: components are registered with hubctl component put, profiles by the app's CI.

import { get, withQuery, screenPath, ApiError } from "./api.js";
import { el, field, input, section, table, number, when, every, showIfChanged, setFieldMessage } from "./ui.js";
import { renderScreen, treeView } from "./render.js";

export default function components(context) {
  return context.argument ? componentDetail(context) : componentsOverview(context);
}

/** `Carousel:2, Text:1` for a `{Carousel: 2, Text: 1}` map; "none" when it is empty. */
export function componentsText(map) {
  const entries = Object.entries(map ?? {});
  return entries.length ? entries.map(([name, version]) => `${name}:${version}`).join(", ") : "none";
}

/** `3 of 7 (43 %)`: how many of the connected clients can render a version. */
export function shareText(clients, total) {
  if (typeof clients !== "number") return "–";
  return total ? `${number(clients)} of ${number(total)} (${Math.round((clients / total) * 100)} %)` : `${number(clients)} of 0`;
}

const componentPath = (name) => "/v1/components/" + encodeURIComponent(name);
const profilePath = (platform, version) => `/v1/apps/${encodeURIComponent(platform)}/${encodeURIComponent(version)}/components`;

function componentsOverview({ root }) {
  const list = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  const profiles = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  const build = buildView();
  root.append(el("h2", {}, "Components"),
    el("div", { className: "columns" },
      section("Registered components: who can render each version", list),
      section("App profiles: what each build renders", profiles)),
    build.element);

  const stopList = every(3000, async () => {
    const answer = await get("/v1/components");
    showIfChanged(list, answer, () => componentsTable(answer));
  });
  const stopProfiles = every(3000, async () => {
    const answer = await get("/v1/apps");
    showIfChanged(profiles, answer.profiles, () => answer.profiles.length
      ? table(["Platform", "From app version", "Components", "Updated"], answer.profiles.map((p) => [
        p.platform, p.app_version, componentsText(p.components), when(p.updated_at),
      ]), { className: "app-profiles" })
      : el("p", { className: "empty" }, "No app profiles: clients that declare no components are sent every node (hubctl app components set PLATFORM VERSION LIST)."));
  });
  return () => { stopList(); stopProfiles(); };
}

function componentsTable({ components: registered, clients: total }) {
  const connected = el("p", { id: "components-connected", dataset: { clients: String(total ?? 0) } },
    `${number(total ?? 0)} connected signed-in client${total === 1 ? "" : "s"}.`);
  if (!registered.length) {
    return [connected, el("p", { className: "empty" }, "No components are registered: every node passes through as published (hubctl component put NAME FILE).")];
  }
  const rows = registered.flatMap((component) => component.versions.map((version, i) => [
    i === 0 ? el("a", { href: "#components/" + encodeURIComponent(component.name) }, component.name) : "",
    `v${version.version}`, shareText(version.clients, total),
  ]));
  return [connected, table(["Component", "Version", "Connected clients that can render it"], rows,
    { className: "components", caption: "A client renders a version when it declared (or its app profile lists) that version or a higher one." })];
}

/** One component: its versions, how many connected clients can render each, and each schema. */
function componentDetail({ root, argument: name }) {
  const body = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  root.append(el("p", { className: "crumbs" }, el("a", { href: "#components" }, "Components"), " / ", name),
    el("h2", {}, name), body);
  return every(3000, async () => {
    let component, total;
    try {
      [component, { clients: total }] = await Promise.all([get(componentPath(name)), get("/v1/components")]);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        showIfChanged(body, "404", () => el("p", { className: "error" }, `${name} is not registered (${error.message}).`));
        return;
      }
      throw error;
    }
    showIfChanged(body, [component, total], () => {
      const numbers = Object.keys(component.versions).map(Number).sort((a, b) => a - b);
      return [
        section("Versions",
          el("dl", { className: "facts" }, el("dt", {}, "updated"), el("dd", {}, when(component.updated_at)),
            el("dt", {}, "connected"), el("dd", {}, `${number(total)} signed-in client${total === 1 ? "" : "s"}`)),
          table(["Version", "Connected clients that can render it", "Schema"], numbers.map((n) => {
            const version = component.versions[String(n)];
            return [`v${n}`, shareText(version.clients, total), version.schema ? "shown below" : "none: any node is accepted"];
          }), { className: "component-versions" })),
        ...numbers.map((n) => {
          const schema = component.versions[String(n)].schema;
          const shown = section(`Version ${n}: schema`, schema
            ? [el("div", { className: "tree" }, treeView(schema)),
              el("details", {}, el("summary", {}, "As JSON"), el("pre", { className: "schema-json", tabIndex: 0, "aria-label": `Version ${n} schema as JSON` }, JSON.stringify(schema, null, 2)))]
            : el("p", { className: "empty" }, "No schema: nodes of this version are not checked."));
          shown.dataset.version = String(n);
          shown.classList.add("component-schema");
          return shown;
        }),
      ];
    });
  });
}

/**
 * The form that shows a screen as a build sees it: a screen, the build's platform and app
 * version, and optionally the components it declares (`Carousel:2,Text:1`, as a hello's
 * `components`). Says which profile applies, and whether the tree differs from the one a
 * client that renders everything gets.
 */
function buildView() {
  const screenNames = el("datalist", { id: "component-screens" });
  const screen = field("Screen", input({ name: "build_screen", list: "component-screens", placeholder: "home" }));
  const platform = field("Platform", input({ name: "build_platform", placeholder: "ios" }));
  const appVersion = field("App version", input({ name: "build_app_version", placeholder: "5.1.0" }));
  const declared = field("Components it declares (optional)", input({ name: "build_components", placeholder: "Carousel:2,Text:1" }),
    { hint: "empty: the profile of its platform and version applies" });
  const facts = el("dl", { className: "facts", id: "build-facts" });
  const preview = el("div", { className: "preview", id: "build-preview" });
  const tree = el("div", { className: "tree", id: "build-tree" });
  const form = el("form", { className: "inline-form", onsubmit: (event) => { event.preventDefault(); show(); } },
    screen, platform, appVersion, declared, el("button", { type: "submit", className: "primary", id: "show-build" }, "Show as this build"));
  const result = el("div", { hidden: true }, facts,
    el("div", { className: "two" }, el("div", {}, el("h3", {}, "Drawn as the demo page draws it"), preview), el("div", {}, el("h3", {}, "Tree"), tree)));
  const element = section("A screen as a build sees it", screenNames, form, result);
  element.id = "build-view";

  get("/v1/screens").then(({ screens }) => {
    screenNames.replaceChildren(...screens.map((s) => el("option", { value: s.name })));
    if (!screen.control.value && screens.length) screen.control.value = screens[0].name;
  }, () => {});

  /** Which components the build renders, and why: declared, its profile, or everything. */
  async function profileOf(components, platformText, versionText) {
    if (components) return `declared: ${components.split(",").join(", ")}`;
    if (!platformText || !versionText) return "everything (no platform and app version: no profile applies)";
    try {
      const profile = await get(profilePath(platformText, versionText));
      const newest = profile.profile_version === profile.app_version ? "" : ` (the newest at or below ${profile.app_version})`;
      return `the ${profile.platform} ${profile.profile_version} profile${newest}: ${componentsText(profile.components)}`;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return `everything: no ${platformText} profile at or below ${versionText}`;
      throw error;
    }
  }

  async function show() {
    for (const f of [screen, platform, appVersion, declared]) setFieldMessage(f, null);
    const name = screen.control.value.trim();
    if (!name) { setFieldMessage(screen, "Name a screen."); return; }
    const parameters = {
      platform: platform.control.value.trim(), app_version: appVersion.control.value.trim(),
      components: declared.control.value.replace(/\s+/g, ""),
    };
    let seen, full, rendersWhat;
    try {
      [seen, full, rendersWhat] = await Promise.all([
        get(withQuery(screenPath(name), parameters)), get(screenPath(name)),
        profileOf(parameters.components, parameters.platform, parameters.app_version)]);
    } catch (error) {
      const at = { platform, app_version: appVersion, components: declared }[/\b(platform|app_version|components)\b/.exec(error.message)?.[1]]
        ?? (error.status === 404 ? screen : declared);
      setFieldMessage(at, error.status ? `${error.status} ${error.code}: ${error.message}` : error.message);
      result.hidden = true;
      return;
    }
    const same = seen.hash === full.hash;
    facts.replaceChildren(
      el("dt", {}, "renders"), el("dd", { id: "build-renders" }, rendersWhat),
      el("dt", {}, "version"), el("dd", {}, String(seen.version)),
      el("dt", {}, "hash"), el("dd", {}, el("code", { id: "build-hash" }, seen.hash)),
      el("dt", {}, "compared"), el("dd", { id: "build-compared", dataset: { same: String(same) } }, same
        ? "the same tree a client that renders everything gets"
        : "differs from what a client that renders everything gets: nodes this build cannot render became their fallback, or were removed"));
    preview.replaceChildren(renderScreen(seen.tree));
    tree.replaceChildren(treeView(seen.tree));
    preview.dataset.hash = seen.hash;
    result.hidden = false;
  }

  return { element };
}
