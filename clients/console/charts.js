// Small SVG charts drawn with DOM calls (no markup strings, no inline styles: the page's
// Content-Security-Policy allows neither). Each chart has a text alternative; the numbers are
// also in a table beside it.

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) if (child) node.append(child);
  return node;
}

const text = (x, y, content, attributes = {}) => {
  const node = svg("text", { x, y, ...attributes });
  node.textContent = content;
  return node;
};

/** A line chart of the last samples (`values`: numbers or null), with its latest value. */
export function sparkline(values, { label, format = String, width = 260, height = 64, fromZero = true }) {
  const numbers = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  const max = Math.max(1e-9, ...numbers);
  // A rate starts at zero; a level (memory) is drawn between its lowest and highest sample.
  const min = fromZero || !numbers.length ? 0 : Math.min(...numbers);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  let path = "";
  values.forEach((value, i) => {
    if (typeof value !== "number" || !Number.isFinite(value)) return;
    const x = (i * step).toFixed(1), y = (height - 4 - ((value - min) / Math.max(max - min, 1e-9)) * (height - 22)).toFixed(1);
    path += (path ? " L" : "M") + x + " " + y;
  });
  const latest = numbers.length ? format(numbers[numbers.length - 1]) : "–";
  return svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `${label}: ${latest} now, peak ${format(numbers.length ? max : 0)}`, class: "spark" },
    svg("line", { x1: 0, y1: height - 4, x2: width, y2: height - 4, class: "axis" }),
    path ? svg("path", { d: path, class: "series" }) : null,
    text(4, 12, `peak ${format(numbers.length ? max : 0)}` + (fromZero ? "" : `, low ${format(min)}`), { class: "chart-note" }));
}

/**
 * Per variant: bars for the units served (the hub sent the variant's tree) and confirmed (the app
 * reported it drew it). Counts of exposure, not an outcome: goals have their own charts.
 */
export function exposureChart(variants) {
  const rowHeight = 50, left = 110, barWidth = 420;
  const height = variants.length * rowHeight + 24;
  const maxServed = Math.max(1, ...variants.map((v) => v.served));
  const chart = svg("svg", {
    viewBox: `0 0 ${left + barWidth + 140} ${height}`, width: left + barWidth + 140, height, role: "img", class: "exposure-chart",
    "aria-label": "Exposures per variant: " + variants.map((v) => `${v.variant} served ${v.served}, confirmed ${v.confirmed}`).join("; "),
  });
  chart.append(text(left, 14, "units served / confirmed", { class: "chart-note" }));
  variants.forEach((variant, i) => {
    const y = 22 + i * rowHeight;
    const served = (variant.served / maxServed) * barWidth, confirmed = (variant.confirmed / maxServed) * barWidth;
    const group = svg("g", { class: "variant", "data-variant": variant.variant });
    group.append(text(0, y + 22, variant.variant, { class: "chart-label" }));
    group.append(svg("rect", { x: left, y, width: Math.max(served, 1), height: 16, class: "bar served" }));
    group.append(text(left + served + 6, y + 13, `${variant.served} served`, { class: "chart-value" }));
    group.append(svg("rect", { x: left, y: y + 20, width: Math.max(confirmed, 1), height: 16, class: "bar confirmed" }));
    group.append(text(left + confirmed + 6, y + 33, `${variant.confirmed} confirmed`, { class: "chart-value" }));
    chart.append(group);
  });
  return chart;
}

const isNumber = (x) => typeof x === "number" && Number.isFinite(x);

/**
 * Estimates with their 95 % intervals on one horizontal axis, a row each: a dot at the estimate,
 * a whisker from low to high. `rows`: `[{ label, value, low, high, note }]`; a row whose value
 * is null shows its `note` instead (no units yet), one whose interval is null shows the dot only.
 * `zero`: a difference chart: the axis includes 0 and draws it as a line — an interval that
 * crosses it cannot tell the variant from control. `fromZero`: a rate or mean, drawn from 0.
 */
export function intervalChart(rows, { label, format = String, zero = false, fromZero = false }) {
  const rowHeight = 30, left = 110, width = 380, top = 20;
  const height = rows.length * rowHeight + top + 22;
  const ends = rows.flatMap((r) => [r.value, r.low, r.high]).filter(isNumber);
  if (zero || fromZero) ends.push(0);
  let low = ends.length ? Math.min(...ends) : 0, high = ends.length ? Math.max(...ends) : 1;
  if (high - low < 1e-12) { low -= 0.5 * (Math.abs(low) || 1); high += 0.5 * (Math.abs(high) || 1); }
  // Ticks at the ends of the data, and at 0 on a difference chart (once, where an end is 0).
  const ticks = [...new Set([low, ...(zero ? [0] : []), high])].sort((a, b) => a - b);
  const pad = (high - low) * 0.06;
  if (!(fromZero && low >= 0)) low -= pad;
  high += pad;
  const x = (v) => left + ((v - low) / (high - low)) * width;
  const described = rows.map((r) => isNumber(r.value)
    ? `${r.label} ${format(r.value)}` + (isNumber(r.low) && isNumber(r.high) ? ` (95 % CI ${format(r.low)} to ${format(r.high)})` : " (no interval)")
    : `${r.label} ${r.note ?? "no data"}`);
  const chart = svg("svg", {
    viewBox: `0 0 ${left + width + 30} ${height}`, width: left + width + 30, height, role: "img",
    class: "interval-chart" + (zero ? " difference" : ""), "aria-label": `${label}: ${described.join("; ")}`,
  });
  chart.append(text(left, 12, label, { class: "chart-note" }));
  for (const tick of ticks) {
    const at = x(tick);
    chart.append(svg("line", { x1: at, y1: top, x2: at, y2: height - 18, class: tick === 0 && zero ? "zero" : "grid" }));
    chart.append(text(at, height - 4, format(tick), { class: "chart-note", "text-anchor": "middle" }));
  }
  rows.forEach((row, i) => {
    const cy = top + i * rowHeight + rowHeight / 2;
    const group = svg("g", { class: "estimate", "data-variant": row.label });
    group.append(text(0, cy + 4, row.label, { class: "chart-label" }));
    if (!isNumber(row.value)) {
      group.append(text(left, cy + 4, row.note ?? "no data", { class: "chart-note" }));
    } else {
      if (isNumber(row.low) && isNumber(row.high)) {
        group.append(svg("line", { x1: x(row.low), x2: x(row.high), y1: cy, y2: cy, class: "whisker" }));
        for (const end of [row.low, row.high]) group.append(svg("line", { x1: x(end), x2: x(end), y1: cy - 6, y2: cy + 6, class: "whisker" }));
      }
      group.append(svg("circle", { cx: x(row.value), cy, r: 4.5, class: "rate" }));
    }
    chart.append(group);
  });
  return chart;
}

/** Horizontal bars for a few labelled counts (a funnel, connections by platform). */
export function barList(rows, { label, max = Math.max(1, ...rows.map((r) => r.value)) }) {
  const rowHeight = 30, left = 150, width = 320;
  const chart = svg("svg", { viewBox: `0 0 ${left + width + 110} ${rows.length * rowHeight + 4}`, width: left + width + 110, height: rows.length * rowHeight + 4, role: "img", class: "bar-list",
    "aria-label": `${label}: ` + rows.map((r) => `${r.label} ${r.value}`).join(", ") });
  rows.forEach((row, i) => {
    const y = i * rowHeight + 4;
    const w = (row.value / max) * width;
    chart.append(text(0, y + 15, row.label, { class: "chart-label" }));
    chart.append(svg("rect", { x: left, y, width: Math.max(w, 1), height: 20, class: "bar " + (row.kind ?? "served") }));
    chart.append(text(left + w + 6, y + 15, row.note ?? String(row.value), { class: "chart-value" }));
  });
  return chart;
}
