// Runs in Chromium (bench/js-client/run.py): apply a one-leaf patch to a 10,000-node screen and
// verify its hash, the work the client does for each `patch` message (DESIGN §4, §12).
import { applyPatch, canonicalize, deepFreeze, sha256, sha256Hex, utf8 } from "/pushhub-client.js";

// The hub's bench screen (bench/ws-bench/DiffTiming.swift): 100 keyed sections × 99 keyed rows,
// 10,001 nodes, 636 KB canonical.
function screen() {
  const sections = [];
  for (let s = 0; s < 100; s++) {
    const items = [];
    for (let i = 0; i < 99; i++) items.push({ id: `item-${s}-${i}`, type: "row", label: `Item ${i}`, value: s * 99 + i });
    sections.push({ id: `section-${s}`, type: "section", title: `Section ${s}`, children: items });
  }
  return { type: "screen", children: sections };
}

function countNodes(tree) {
  if (tree === null || typeof tree !== "object") return 0;
  const own = tree.type !== undefined ? 1 : 0;
  return own + Object.values(tree).reduce((n, v) => n + countNodes(v), 0);
}

function figures(samples) {
  samples.sort((a, b) => a - b);
  return { median: samples[samples.length >> 1], p95: samples[Math.floor(samples.length * 0.95)], runs: samples.length };
}

// What the client does per patch (PushHub._screenMessage): apply copy-on-write, freeze the new
// containers, canonicalize reusing the cached form of every unchanged subtree, hash.
async function measure(tree, builtIn, runs) {
  const apply = [], total = [];
  const forms = new WeakMap();
  let current = deepFreeze(tree);
  canonicalize(current, forms); // the snapshot's cost, paid once
  for (let n = 0; n < runs + 20; n++) {
    const ops = [{ op: "replace", path: `/children/${n % 100}/children/${n % 99}/label`, value: `edit ${n}` }];
    const started = performance.now();
    const next = deepFreeze(applyPatch(current, ops));
    const applied = performance.now();
    const hash = await sha256Hex(canonicalize(next, forms), { builtIn });
    const done = performance.now();
    if (hash.length !== 64) throw new Error("bad hash");
    current = next;
    if (n >= 20) { apply.push(applied - started); total.push(done - started); } // 20 warm-up rounds
  }
  return { apply: figures(apply), total: figures(total) };
}

window.runBench = async () => {
  const tree = screen();
  const bytes = new TextEncoder().encode(canonicalize(tree)).length;
  const subtle = await measure(tree, false, 200);
  const builtIn = await measure(tree, true, 100);
  const canonical = [], encode = [], encodeInto = [], digestSubtle = [], digestBuiltIn = [];
  let scratch = new Uint8Array(0);
  for (let n = 0; n < 30; n++) {
    let t = performance.now();
    const text = canonicalize(JSON.parse(JSON.stringify(tree)));
    canonical.push(performance.now() - t);
    text.charCodeAt(0); // flat, as the client's cached forms are
    t = performance.now();
    const bytes = utf8(text);
    encode.push(performance.now() - t);
    t = performance.now();
    if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3);
    new TextEncoder().encodeInto(text, scratch);
    encodeInto.push(performance.now() - t);
    t = performance.now();
    await crypto.subtle.digest("SHA-256", bytes);
    digestSubtle.push(performance.now() - t);
    t = performance.now();
    sha256(bytes);
    digestBuiltIn.push(performance.now() - t);
  }
  return {
    nodes: countNodes(tree), bytes,
    timings: {
      "apply one-leaf patch": subtle.apply,
      "full canonicalize (a snapshot)": figures(canonical),
      "UTF-8 encode (a new array)": figures(encode),
      "UTF-8 encodeInto (reused buffer)": figures(encodeInto),
      "SHA-256 SubtleCrypto": figures(digestSubtle),
      "SHA-256 built-in": figures(digestBuiltIn),
      "apply + verify hash (SubtleCrypto)": subtle.total,
      "apply + verify hash (built-in SHA-256)": builtIn.total,
    },
  };
};
window.benchReady = true;
