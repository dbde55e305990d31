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

/**
 * The 95 % Wilson score interval of a proportion `successes / trials` (z = 1.96): unlike the
 * normal approximation it stays inside [0, 1] and is sensible for small counts. [0, 0] for no
 * trials.
 */
export function wilson(successes, trials, z = 1.959963984540054) {
  if (!trials) return [0, 0];
  const p = successes / trials;
  const z2 = z * z;
  const centre = (p + z2 / (2 * trials)) / (1 + z2 / trials);
  const half = (z / (1 + z2 / trials)) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

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
 * Per variant: bars for units served and confirmed, and the confirmation rate with its 95 %
 * Wilson interval as a whisker on a 0–100 % scale.
 */
export function resultsChart(variants) {
  const rowHeight = 58, left = 110, barWidth = 280, rateLeft = left + barWidth + 120, rateWidth = 240;
  const height = variants.length * rowHeight + 34;
  const maxServed = Math.max(1, ...variants.map((v) => v.served));
  const chart = svg("svg", {
    viewBox: `0 0 ${rateLeft + rateWidth + 20} ${height}`, width: rateLeft + rateWidth + 20, height, role: "img", class: "results-chart",
    "aria-label": "Exposures per variant: " + variants.map((v) => `${v.variant} served ${v.served}, confirmed ${v.confirmed}`).join("; "),
  });
  chart.append(text(left, 14, "units served / confirmed", { class: "chart-note" }));
  chart.append(text(rateLeft, 14, "confirmation rate, 95 % CI", { class: "chart-note" }));
  for (const tick of [0, 0.5, 1]) {
    const x = rateLeft + tick * rateWidth;
    chart.append(svg("line", { x1: x, y1: 20, x2: x, y2: height - 14, class: "grid" }));
    chart.append(text(x, height - 2, `${tick * 100}%`, { class: "chart-note", "text-anchor": "middle" }));
  }
  variants.forEach((variant, i) => {
    const y = 24 + i * rowHeight;
    const served = (variant.served / maxServed) * barWidth, confirmed = (variant.confirmed / maxServed) * barWidth;
    const group = svg("g", { class: "variant", "data-variant": variant.variant });
    group.append(text(0, y + 22, variant.variant, { class: "chart-label" }));
    group.append(svg("rect", { x: left, y, width: Math.max(served, 1), height: 16, class: "bar served" }));
    group.append(text(left + served + 6, y + 13, `${variant.served} served`, { class: "chart-value" }));
    group.append(svg("rect", { x: left, y: y + 20, width: Math.max(confirmed, 1), height: 16, class: "bar confirmed" }));
    group.append(text(left + confirmed + 6, y + 33, `${variant.confirmed} confirmed`, { class: "chart-value" }));
    if (variant.served) {
      const [low, high] = wilson(variant.confirmed, variant.served);
      const rate = variant.confirmed / variant.served;
      const cy = y + 18;
      group.append(svg("line", { x1: rateLeft + low * rateWidth, x2: rateLeft + high * rateWidth, y1: cy, y2: cy, class: "whisker" }));
      for (const end of [low, high]) group.append(svg("line", { x1: rateLeft + end * rateWidth, x2: rateLeft + end * rateWidth, y1: cy - 6, y2: cy + 6, class: "whisker" }));
      group.append(svg("circle", { cx: rateLeft + rate * rateWidth, cy, r: 4.5, class: "rate" }));
    } else {
      group.append(text(rateLeft, y + 22, "no exposures yet", { class: "chart-note" }));
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
