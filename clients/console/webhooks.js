// Webhooks (docs/integrations.md): the list with each webhook's queue and counters; a webhook's
// definition (URL, events, secret) to create, replace or delete; its recent deliveries (state,
// attempts, last status, next retry), read again every 3 s; and "Send test", which sends one
// webhook.test event at once and shows what the receiver answered. The hub checks every value
// (a 400 names the field, shown at that field); every call, reads too, needs the admin scope.

import { get, call } from "./api.js";
import { el, field, input, section, table, number, when, statusLine, actionButton, confirmAction, every, showIfChanged, setFieldMessage, uid } from "./ui.js";

/** The types a webhook can subscribe to, with what each means (the hub checks the list). */
export const EVENT_TYPES = [
  ["screen.published", "a screen has a new version"],
  ["screen.deleted", "a screen was deleted"],
  ["release.started", "a staged release began"],
  ["release.percent", "a release's percent was raised"],
  ["release.halted", "a release was halted"],
  ["release.promoted", "a release went to everyone"],
  ["sync.created", "a sync was sent"],
  ["client.render_error", "clients reported render errors (a summary a minute)"],
  ["experiment.changed", "an experiment was defined, changed or deleted"],
];

const path = (name) => "/v1/webhooks/" + encodeURIComponent(name);

/** The secret a create just made, shown once by the view it navigates to (never stored). */
let madeSecret = null;

export default function webhooks({ root, argument, can, navigate }) {
  // The hub answers every webhook call, reads too, only for the admin scope: a webhook's URL
  // and deliveries say where the hub's events go.
  if (!can("admin")) {
    root.append(el("h2", {}, "Webhooks"), section("Webhooks", el("p", { className: "empty", id: "webhooks-need-admin" },
      "Webhooks need a token with the admin scope, to read them too: a webhook's URL and deliveries say where the hub's events go.")));
    return null;
  }
  const list = el("div", {}, el("p", { className: "empty" }, "Loading…"));
  const detail = el("div");
  const below = el("div");  // a webhook's deliveries: the page's width, for their nine columns
  root.append(el("h2", {}, "Webhooks"), el("div", { className: "columns" },
    el("div", {}, section("Webhooks", list,
      el("p", {}, el("a", { href: "#webhooks/" + encodeURIComponent("+new"), className: "button-link" }, "New webhook")))),
    detail), below);
  const stopDetail = argument ? webhookDetail({ container: detail, below, name: argument === "+new" ? null : argument, can, navigate }) : null;
  const stopList = every(3000, async () => {
    const { webhooks: hooks } = await get("/v1/webhooks");
    showIfChanged(list, hooks, () => hooks.length
      ? table(["Webhook", "Events", "Queued", "Delivered / failed / dropped", "Last status"], hooks.map((w) => [
        el("a", { href: "#webhooks/" + encodeURIComponent(w.name) }, w.name), eventsText(w.events), number(w.queued),
        `${number(w.delivered)} / ${number(w.failed)} / ${number(w.dropped)}`, w.last_status ?? "–",
      ]), { className: "webhooks" })
      : el("p", { className: "empty" }, "No webhooks yet."));
  });
  return () => { stopList(); stopDetail?.(); };
}

/** A webhook's form and, for an existing one, its counters and recent deliveries. Returns stop. */
function webhookDetail({ container, below, name, can, navigate }) {
  let stopped = false, stopPolling = null;
  const nameField = field("Name", input({ name: "webhook_name", value: name ?? "", readOnly: Boolean(name), pattern: "[a-z0-9._\\-]{1,100}" }), { hint: "a-z 0-9 . _ -" });
  const url = field("URL", input({ name: "webhook_url", inputMode: "url", placeholder: "https://ops.example.com/pushhub" }), { hint: "https://, or http:// to a loopback host" });
  const secret = field("Secret", input({ name: "webhook_secret", placeholder: name ? "empty: keep the current one" : "empty: the hub makes one" }),
    { hint: "16 to 256 visible ASCII characters; the hub never shows it again" });
  const events = eventChoices();
  const status = statusLine();
  const save = actionButton(name ? "Save" : "Create webhook", { scope: "admin", can, className: "primary", onclick: () => submit() });
  save.id = "webhook-save";
  const remove = name ? actionButton("Delete…", { scope: "admin", can, className: "danger", onclick: () => deleteWebhook() }) : null;
  if (remove) remove.id = "webhook-delete";
  const test = name ? actionButton("Send test", { scope: "admin", can, onclick: () => sendTest() }) : null;
  if (test) test.id = "webhook-test";
  const facts = el("dl", { className: "facts", id: "webhook-facts" });
  const recent = el("div", { id: "webhook-deliveries" }, el("p", { className: "empty" }, "Loading…"));
  const revealed = madeSecret && madeSecret.name === name ? madeSecret.secret : null;
  madeSecret = null;

  const form = section(name ? `Webhook ${name}` : "New webhook",
    revealed ? el("div", { className: "made-secret", role: "status" },
      el("p", {}, "The hub made this secret; it is shown only now. Copy it into the receiver's configuration:"),
      el("code", { id: "webhook-secret" }, revealed)) : null,
    el("form", { onsubmit: (event) => { event.preventDefault(); submit(); } }, nameField, url, events.fieldset, secret,
      el("div", { className: "actions" }, save, test, remove), status));
  container.replaceChildren(form, ...(name ? [section("Queue and counters", facts)] : []));
  if (name) below.replaceChildren(section("Recent deliveries", recent));

  let loaded = null;
  if (name) {
    get(path(name)).then((webhook) => {
      if (stopped) return;
      loaded = webhook;
      url.control.value = webhook.url;
      events.set(webhook.events);
      stopPolling = every(3000, () => refresh());
    }, (error) => {
      container.replaceChildren(section(name, el("p", { className: "error" }, error.message)));
    });
  }

  async function refresh() {
    const [webhook, { deliveries }] = await Promise.all([get(path(name)), get(path(name) + "/deliveries?limit=50")]);
    showIfChanged(facts, webhook, () => [
      ["URL", webhook.url], ["Events", eventsText(webhook.events)], ["Queued", number(webhook.queued)],
      ["Delivered", number(webhook.delivered)], ["Failed", number(webhook.failed)], ["Dropped", number(webhook.dropped)],
      ["Last status", webhook.last_status ?? "–"], ["Last error", webhook.last_error ?? "–"],
      ["Last attempt", when(webhook.last_attempt_at)], ["Created", when(webhook.created_at)], ["Updated", when(webhook.updated_at)],
    ].flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, String(value))]));
    showIfChanged(recent, deliveries, () => deliveries.length
      ? el("div", { className: "table-scroll" }, table(["Event", "Type", "Subject", "State", "Attempts", "Last status", "Next retry", "Finished", "Last error"],
        deliveries.map((d) => [
          el("code", {}, d.id), d.type, d.subject, el("span", { className: "badge", dataset: { status: d.state } }, d.state),
          String(d.attempts), d.last_status ?? "–", when(d.next_attempt_at), when(d.finished_at), d.last_error ?? "–",
        ]), { className: "deliveries", caption: "Pending events first, in the order they are sent; then the most recent finished." }))
      : el("p", { className: "empty" }, "No deliveries yet."));
  }

  async function submit() {
    for (const f of [nameField, url, secret]) setFieldMessage(f, null);
    events.message(null);
    const webhook = name ?? nameField.control.value.trim();
    const body = { url: url.control.value.trim(), events: events.chosen() };
    if (secret.control.value) body.secret = secret.control.value;
    try {
      const answer = await call("PUT", path(webhook), body);
      secret.control.value = "";
      if (answer.secret) madeSecret = { name: webhook, secret: answer.secret };
      status.show(`Saved ${answer.name}: ${answer.events.join(", ")} → ${answer.url}`, "ok");
      if (!name) navigate("#webhooks/" + encodeURIComponent(webhook));
    } catch (error) {
      const text = error.status ? `${error.status} ${error.code}: ${error.message}` : error.message;
      // The field the hub's message names first ("url: …", "events: unknown type …").
      const named = [[/\burl\b/i, url], [/\bevents?\b/i, events], [/\bsecret\b/i, secret], [/\bname\b/i, nameField]]
        .map(([word, at]) => [error.message.search(word), at]).filter(([index]) => index >= 0).sort((a, b) => a[0] - b[0]);
      const at = named[0]?.[1];
      if (at === events) events.message(text);
      else if (at) setFieldMessage(at, text);
      status.show(text, "error");
    }
  }

  async function deleteWebhook() {
    const queued = loaded?.queued ?? 0;
    if (!(await confirmAction({ title: `Delete webhook ${name}?`, body: `Nothing more is sent to ${loaded?.url ?? "its URL"}; its ${number(queued)} queued event${queued === 1 ? "" : "s"} are dropped.`, confirm: "Delete", danger: true }))) return;
    try {
      await call("DELETE", path(name));
      navigate("#webhooks");
    } catch (error) {
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
    }
  }

  async function sendTest() {
    test.disabled = true;
    status.show("Sending a webhook.test event…");
    try {
      const answer = await call("POST", path(name) + "/test");
      const took = `in ${number(answer.duration_ms)} ms`;
      if (answer.status !== null && answer.status >= 200 && answer.status < 300) status.show(`Test event ${answer.id}: the receiver answered ${answer.status} ${took}.`, "ok");
      else if (answer.status !== null) status.show(`Test event ${answer.id}: the receiver answered ${answer.status} ${took}; a real event would be retried.`, "error");
      else status.show(`Test event ${answer.id} was not delivered: ${answer.error} (${took}).`, "error");
    } catch (error) {
      status.show(`${error.status} ${error.code}: ${error.message}`, "error");
    } finally {
      test.disabled = !can("admin");
    }
  }

  return () => { stopped = true; stopPolling?.(); };
}

/** Whether `types` is every type this page knows: what the hub stores for `"*"`. */
const isEveryType = (types) => EVENT_TYPES.every(([type]) => types.includes(type));

/** A webhook's events for people: "all" when it has every type, else the list. */
const eventsText = (types) => (isEveryType(types) ? `all (${types.length})` : types.join(", "));

/**
 * The events fieldset: "All events (*)" and one checkbox per type (with any type the webhook
 * has that this page does not know, so a save keeps it). `chosen()` is the `events` to send.
 */
function eventChoices() {
  const all = el("input", { type: "checkbox", id: uid("ev"), name: "events_all", value: "*" });
  const boxes = new Map();
  const list = el("div", { className: "event-types" });
  const message = el("p", { className: "field-message", id: uid("m"), "aria-live": "polite" });
  const add = (type, meaning) => {
    const box = el("input", { type: "checkbox", id: uid("ev"), name: "events", value: type });
    boxes.set(type, box);
    list.append(el("div", { className: "check" }, box, el("label", { for: box.id }, el("code", {}, type), meaning ? " — " + meaning : "")));
  };
  for (const [type, meaning] of EVENT_TYPES) add(type, meaning);
  const sync = () => { for (const box of boxes.values()) box.disabled = all.checked; };
  all.addEventListener("change", sync);
  const fieldset = el("fieldset", { className: "events", "aria-describedby": message.id }, el("legend", {}, "Events"),
    el("div", { className: "check" }, all, el("label", { for: all.id }, "All events (", el("code", {}, "*"), ")")),
    list, message);
  return {
    fieldset,
    set(types) {
      all.checked = types.includes("*") || isEveryType(types);
      for (const type of types) if (type !== "*" && !boxes.has(type)) add(type, null);
      for (const [type, box] of boxes) box.checked = types.includes(type);
      sync();
    },
    chosen: () => (all.checked ? ["*"] : [...boxes].filter(([, box]) => box.checked).map(([type]) => type)),
    message(text) {
      message.textContent = text ?? "";
      if (text) fieldset.setAttribute("aria-invalid", "true");
      else fieldset.removeAttribute("aria-invalid");
    },
  };
}
