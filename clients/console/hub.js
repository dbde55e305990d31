// Hub: connections by platform and app version, loops, memory, deliveries/s and loop lag from
// /metrics as small live charts, and the audit log's recent entries (GET /v1/audit).

import { get, parseMetrics } from "./api.js";
import { el, section, table, number, when, bytes, every, showIfChanged } from "./ui.js";
import { sparkline, barList } from "./charts.js";

const SAMPLES = 60;

export default function hub({ root }) {
  const tiles = el("dl", { className: "tiles" });
  const loops = el("div", { id: "loops" });
  const charts = el("div", { className: "charts" });
  const platforms = el("div");
  const audit = el("div");
  root.append(el("h2", {}, "Hub"), section("Now", tiles, loops), section("Last minute (one sample a second)", charts),
    el("div", { className: "columns" }, section("Connections by platform and app version", platforms), section("Audit log (recent changes and refusals)", audit)));

  const series = { deliveries: [], messagesIn: [], lag: [], connections: [], memory: [] };
  let previous = null;
  const push = (name, value) => {
    series[name].push(value);
    if (series[name].length > SAMPLES) series[name].shift();
  };

  const stopMetrics = every(1000, async () => {
    const [text, stats] = await Promise.all([get("/metrics"), get("/v1/stats")]);
    const metrics = parseMetrics(text);
    const at = performance.now();
    if (previous) {
      const seconds = (at - previous.at) / 1000;
      push("deliveries", Math.max(0, (metrics.pushhub_messages_out_total - previous.metrics.pushhub_messages_out_total) / seconds));
      push("messagesIn", Math.max(0, (metrics.pushhub_messages_in_total - previous.metrics.pushhub_messages_in_total) / seconds));
    }
    previous = { at, metrics };
    push("lag", metrics.pushhub_loop_lag_seconds * 1000);
    push("connections", stats.websocket_connections);
    push("memory", stats.memory_bytes);
    const tile = (label, value, id) => [el("div", { className: "tile" }, el("dt", {}, label), el("dd", { id }, value))];
    tiles.replaceChildren(
      ...tile("WebSocket connections", number(stats.websocket_connections), "tile-connections"),
      ...tile("Signed-in sessions", number(stats.sessions), "tile-sessions"),
      ...tile("Subscriptions", number(stats.subscriptions), "tile-subscriptions"),
      ...tile("Loops", number(stats.loops), "tile-loops"),
      ...tile("Memory (resident)", bytes(stats.memory_bytes), "tile-memory"),
      ...tile("Screens", number(stats.screens), "tile-screens"),
      ...tile("Last sync seq", number(stats.sync_seq), "tile-sync-seq"),
      ...tile("Syncs delivered / acked", `${number(metrics.pushhub_syncs_delivered_total)} / ${number(metrics.pushhub_syncs_acked_total)}`, "tile-syncs"));
    // Per loop (pushhub_loop_connections{loop,role}, pushhub_loop_tick_max_seconds{loop,role}).
    const perLoop = new Map();
    for (const [key, value] of Object.entries(metrics)) {
      const match = /^pushhub_loop_(connections|tick_max_seconds)\{loop="(\d+)",role="(\w+)"\}$/.exec(key);
      if (!match) continue;
      const row = perLoop.get(match[2]) ?? { loop: Number(match[2]), role: match[3] };
      row[match[1]] = value;
      perLoop.set(match[2], row);
    }
    loops.replaceChildren(perLoop.size ? table(["Loop", "Role", "Connections", "Longest tick (last 10–20 s)"],
      [...perLoop.values()].sort((a, b) => a.loop - b.loop).map((r) => [
        String(r.loop), r.role, number(r.connections ?? 0), `${((r.tick_max_seconds ?? 0) * 1000).toFixed(1)} ms`,
      ]), { className: "loops" }) : "");
    const rate = (v) => `${v.toFixed(1)}/s`;
    charts.replaceChildren(
      el("figure", {}, el("figcaption", {}, "Deliveries (messages out) per second"), sparkline(series.deliveries, { label: "deliveries per second", format: rate })),
      el("figure", {}, el("figcaption", {}, "Messages in per second"), sparkline(series.messagesIn, { label: "messages in per second", format: rate })),
      el("figure", {}, el("figcaption", {}, "Loop lag (longest tick, ms)"), sparkline(series.lag, { label: "loop lag in milliseconds", format: (v) => `${v.toFixed(1)} ms` })),
      el("figure", {}, el("figcaption", {}, "WebSocket connections"), sparkline(series.connections, { label: "connections", format: (v) => String(Math.round(v)) })),
      el("figure", {}, el("figcaption", {}, "Memory (resident)"), sparkline(series.memory, { label: "resident memory", format: bytes, fromZero: false })));
  });

  const stopClients = every(3000, async () => {
    const summary = await get("/v1/clients/summary");
    const name = (value, none) => value ?? none;
    const byCount = (a, b) => b.clients - a.clients;
    showIfChanged(platforms, summary, () => [
      el("p", {}, `${number(summary.count)} signed-in client${summary.count === 1 ? "" : "s"}`),
      ...(summary.count ? [
        barList([...summary.by_platform].sort(byCount).map((p) => ({ label: name(p.platform, "(no platform)"), value: p.clients })), { label: "Connections by platform" }),
        table(["Platform", "App version", "Clients"], [...summary.by_app_version].sort(byCount).map((v) => [
          name(v.platform, "(no platform)"), name(v.app_version, "(no version)"), number(v.clients),
        ]), { className: "by-version" })] : [])]);
  });

  const stopAudit = every(3000, async () => {
    const { entries } = await get("/v1/audit?limit=50");
    showIfChanged(audit, entries, () => entries.length
      ? table(["When (UTC)", "Token", "Call", "Status"], entries.map((e) => [
        el("time", { dateTime: new Date(e.at).toISOString(), title: when(e.at) }, new Date(e.at).toISOString().slice(11, 19)), e.token, el("code", {}, `${e.method} ${e.path}`), e.error ? `${e.status} ${e.error}` : String(e.status),
      ]), { className: "audit" })
      : el("p", { className: "empty" }, "No changes or refusals since the hub started."));
  });
  return () => { stopMetrics(); stopClients(); stopAudit(); };
}
