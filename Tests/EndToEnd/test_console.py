"""The console (issue 14, DESIGN §13): headless Chromium against a real hub with real clients
connected. Signs in; publishes with hubctl and sees the new version and its diff; composes a sync
to a cohort, compares the count shown with the admin API's dry run and follows the funnel to the
acks of real clients; runs an experiment with real clients and checks the chart against
/v1/experiments/{key}/results; ramps to 30 %, adds an override and saves the definition form and the
traffic is still 30 % (issue 26), while a stale form is refused (412) and says so; previews each
variant's tree; shows goals with the hub's intervals and the sample-ratio warning on a skewed
override set; imports a users file in batches; a `read` token cannot roll back;
keyboard navigation; an accessibility check (labels, contrast) run in the page — and shown to fail
on a broken page. Screenshots of every view go to the test's tmp dir and /tmp/console-*.png."""
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request

import jwt
import pytest
from websockets.sync.client import connect

from admin import call, publish
from assignment_reference import assign, bucket
from chromium import browser_or_skip
from conftest import BIN, Hub

# In-page checks. `a11yProblems()` lists every form control without an accessible name and every
# visible text whose contrast with its background is under 4.5:1 (WCAG 2 relative luminance;
# the background is the nearest ancestor's opaque background colour).
A11Y = r"""
window.a11yProblems = () => {
  const problems = [];
  const visible = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  for (const c of document.querySelectorAll('input, select, textarea')) {
    if (c.type === 'hidden' || !visible(c)) continue;
    const named = (c.labels && [...c.labels].some(l => l.textContent.trim())) || c.getAttribute('aria-label')
      || (c.getAttribute('aria-labelledby') || '').split(' ').some(id => document.getElementById(id)?.textContent.trim());
    if (!named) problems.push('unlabelled ' + c.tagName.toLowerCase() + (c.name ? '[name=' + c.name + ']' : '') + (c.id ? '#' + c.id : ''));
  }
  const rgb = (t) => (t.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (e) => { for (let n = e; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const e = t.parentElement;
    if (!t.textContent.trim() || !e || seen.has(e) || !visible(e) || e.closest('option, script, style')) continue;
    seen.add(e);
    const s = getComputedStyle(e);
    const fg = rgb(e instanceof SVGElement ? s.fill : s.color).slice(0, 3);
    const bg = e instanceof SVGElement ? background(e.ownerSVGElement.parentElement) : background(e);
    const [a, b] = [lum(fg) + 0.05, lum(bg) + 0.05];
    const ratio = Math.max(a, b) / Math.min(a, b);
    if (ratio < 4.5) problems.push('contrast ' + ratio.toFixed(2) + ' for "' + t.textContent.trim().slice(0, 30) + '" in ' + e.tagName.toLowerCase() + '.' + e.className);
  }
  return problems;
};
true
"""

VIEWS = ["screens", "syncs", "cohorts", "experiments", "hub"]


@pytest.fixture(scope="module")
def hub():
    hub = Hub("--dev", "--hello-timeout", "5s")
    yield hub
    hub.stop()


@pytest.fixture(scope="module")
def browser():
    chromium = browser_or_skip("the console tests")
    chromium.screenshot(1280, 900)  # the viewport, before any page lays out
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("console-screenshots")


def console_url(hub, view=""):
    return "http://127.0.0.1:%d/console%s" % (hub.admin_port, "#" + view if view else "")


def js(value):
    return json.dumps(value)


def set_value(browser, selector, value):
    """Types `value` into a field the way a person does: the value, then an input event."""
    browser.evaluate("(() => { const f = document.querySelector(%s); f.value = %s;"
                     " f.dispatchEvent(new Event('input', { bubbles: true })); return true; })()" % (js(selector), js(value)))


def key(browser, name):
    """A real key press (keyDown/keyUp through the DevTools Input domain)."""
    codes = {"Tab": 9, "Enter": 13, "Escape": 27}
    down = {"type": "keyDown", "key": name, "code": name, "windowsVirtualKeyCode": codes[name]}
    if name == "Enter":
        down["text"] = "\r"
    browser.call("Input.dispatchKeyEvent", **down)
    browser.call("Input.dispatchKeyEvent", type="keyUp", key=name, code=name, windowsVirtualKeyCode=codes[name])


def sign_in(browser, hub, token):
    """Opens the console signed out, types the token and presses Enter (the keyboard path)."""
    browser.call("Page.navigate", url="about:blank")
    browser.wait_for("location.href === 'about:blank'", what="a blank page")
    browser.call("Page.navigate", url=console_url(hub))
    browser.wait_for("window.consoleReady === true", what="the console")
    browser.evaluate("sessionStorage.clear(), document.getElementById('sign-out').click(), true")
    browser.evaluate(A11Y)
    browser.evaluate("document.getElementById('token').focus(), true")
    browser.call("Input.insertText", text=token)
    key(browser, "Enter")
    browser.wait_for("!!window.consoleState.who", what="signed in")
    browser.evaluate(A11Y)


def go(browser, view, ready):
    browser.evaluate("location.hash = %s, true" % js(view))
    browser.wait_for(ready, what=view)


def screenshot(browser, shots, name, height=1100):
    png = browser.screenshot(1280, height)
    browser.screenshot(1280, 900)
    path = shots / ("console-%s.png" % name)
    path.write_bytes(png)
    shutil.copy(path, "/tmp/console-%s.png" % name)
    assert len(png) > 20000, "the %s screenshot is (nearly) empty" % name


def click(browser, selector):
    browser.evaluate("document.querySelector(%s).click(), true" % js(selector))


def confirm(browser, expect_text):
    """Checks the open confirmation dialog says `expect_text`, then confirms."""
    text = browser.wait_for("document.querySelector('dialog[open]')?.innerText", what="the confirmation")
    assert expect_text in text, text
    click(browser, "dialog[open] [data-confirm=yes]")
    return text


def text(browser, selector):
    return browser.evaluate("document.querySelector(%s)?.textContent" % js(selector))


def hubctl(hub, *args):
    result = subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=20,
                            env={**os.environ, "HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token})
    assert result.returncode == 0, result.stderr
    return result.stdout


class Client:
    """A real client: hello (signed in as `user` with a token signed by the hub's secret),
    optionally a subscription (`first` is the hub's first screen message), then a thread that
    reads every message (acking syncs) so that closing never waits for unread input."""

    def __init__(self, hub, device, user=None, screen=None):
        self.ws = connect(hub.url + "/v1/connect")
        hello = {"type": "hello", "protocol": 1, "device": device, "app": {"platform": "ios", "version": "5.2.0"}}
        if user:
            secret = open(os.path.join(hub.data, "data", "jwt.secret")).read().strip()
            hello["token"] = jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, secret, algorithm="HS256")
        self.ws.send(json.dumps(hello))
        assert json.loads(self.ws.recv(timeout=5))["type"] == "welcome"
        self.first = None
        if screen is not None:
            self.ws.send(json.dumps({"type": "subscribe", "screen": screen}))
            self.first = json.loads(self.ws.recv(timeout=5))
        self.acked = []
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for text in self.ws:
                message = json.loads(text)
                if message["type"] == "sync":
                    self.ws.send(json.dumps({"type": "ack", "sync": message["id"]}))
                    self.acked.append(message["id"])
        except Exception:
            pass

    def send(self, message):
        self.ws.send(json.dumps(message))

    def close(self):
        self.ws.close()
        self.thread.join(timeout=5)


def ensure_state(hub):
    """What the later tests look at, when they run alone (-k): a screen with two versions, a
    cohort and an experiment (the earlier tests make them through the console)."""
    if call(hub, "GET", "/v1/screens/home")[0] == 404:
        publish(hub, "home", {"type": "screen", "children": []})
        publish(hub, "home", {"type": "screen", "children": [{"id": "t", "type": "text", "text": "Hi"}]})
    if call(hub, "GET", "/v1/cohorts/beta")[0] == 404:
        assert call(hub, "PUT", "/v1/cohorts/beta", {"users": ["u0"]})[0] == 200
    if call(hub, "GET", "/v1/experiments/layout")[0] == 404:
        assert call(hub, "PUT", "/v1/experiments/layout", {"status": "running", "variants": [{"key": "control"}, {"key": "compact"}]})[0] == 200


def test_the_page_is_served_without_a_token_and_the_data_is_not(hub):
    with urllib.request.urlopen(console_url(hub), timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        page = response.read().decode()
    assert 'id="token"' in page and "admin.token" in page
    with urllib.request.urlopen(console_url(hub).replace("/console", "/console/console.js"), timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/javascript")
    assert call(hub, "GET", "/v1/whoami", token="wrong")[0] == 401
    status, who = call(hub, "GET", "/v1/whoami")
    assert status == 200 and who["name"] == "root" and "publish" in who["allows"]


def test_publish_with_hubctl_shows_the_new_version_and_its_diff(hub, browser, shots, tmp_path):
    tree = {"type": "screen", "title": "Match day", "children": [
        {"id": "headline", "type": "text", "style": "title", "text": "Kick-off at 15:00"},
        {"id": "scores", "type": "section", "title": "Live scores", "children": [
            {"id": "s1", "type": "text", "text": "Lions 2 – 1 Tigers"}]},
        {"id": "cta", "type": "button", "label": "Buy tickets"}]}
    publish(hub, "home", tree)
    sign_in(browser, hub, hub.token)
    go(browser, "#screens", "!!document.querySelector('table.screens')")
    assert text(browser, "table.screens tbody tr td") == "home"
    go(browser, "#screens/home", "document.getElementById('current-version')?.textContent === '1'")
    browser.wait_for("document.querySelector('.preview')?.innerText.includes('Kick-off at 15:00')", what="the preview")
    assert text(browser, ".preview .c-section h4") == "Live scores"
    assert "button #cta" in text(browser, ".tree")

    changed = json.loads(json.dumps(tree))
    changed["children"][0]["text"] = "Kick-off delayed to 15:30"
    changed["children"][1]["children"].append({"id": "s2", "type": "text", "text": "Owls 0 – 0 Hawks"})
    path = tmp_path / "home.json"
    path.write_text(json.dumps(changed))
    hubctl(hub, "screen", "publish", "home", str(path))
    browser.wait_for("document.getElementById('current-version')?.textContent === '2'", what="v2 in the console")
    browser.wait_for("document.querySelector('.diff')?.dataset.to === '2'", what="the diff to v2")
    status, diff = call(hub, "GET", "/v1/screens/home/diff?from=1&to=2")
    assert status == 200
    shown = browser.evaluate("[...document.querySelectorAll('.diff ol.ops code')].map(c => JSON.parse(c.textContent))")
    assert shown == diff["ops"] and len(shown) == 2
    # Side by side: v1 on the left with the replaced text marked, v2 on the right with both changes.
    marked = browser.evaluate("[...document.querySelectorAll('.side-by-side .pane')].map(p => [...p.querySelectorAll('.line.removed, .line.added')].map(l => l.textContent.trim()))")
    assert marked[0] == ['"text": "Kick-off at 15:00",'], marked
    assert '"text": "Kick-off delayed to 15:30",' in marked[1] and '"text": "Owls 0 – 0 Hawks",' in marked[1], marked
    browser.wait_for("document.querySelector('.preview')?.innerText.includes('delayed')", what="the new preview")
    screenshot(browser, shots, "screens", height=1500)

    # What a given client sees: the form asks the hub with its parameters.
    browser.evaluate("document.querySelector('input[name=app_version]').value = 'five', true")
    click(browser, ".inline-form button[type=submit]")
    browser.wait_for("document.querySelector('input[name=app_version]').closest('.field').querySelector('.field-message').textContent.includes('five')",
                     what="the hub's refusal at the app version field")

    # Rollback with a confirmation: v3 has v1's tree.
    browser.evaluate("document.querySelector('select[name=rollback]').value = '1', true")
    click(browser, "#rollback")
    confirm(browser, "Roll home back to v1?")
    browser.wait_for("document.getElementById('current-version')?.textContent === '3'", what="v3 after the rollback")
    assert call(hub, "GET", "/v1/screens/home")[1]["tree"] == tree
    # The history names who published each version and marks the rollback (issue 26).
    newest = browser.evaluate("[...document.querySelectorAll('table.history tbody tr')[0].cells].map(c => c.textContent)")
    assert newest[0] == "v3 (current)" and newest[3:] == ["root", "(rollback of v1)"], newest
    assert browser.evaluate("a11yProblems()") == []


def test_a_sync_to_a_cohort_counts_like_the_dry_run_and_its_funnel_reaches_the_acks(hub, browser, shots):
    assert call(hub, "PUT", "/v1/cohorts/beta", {"users": ["u0", "u1", "u2"]})[0] == 200
    clients = [Client(hub, "phone-%d" % n, user="u%d" % (n % 5)) for n in range(8)]  # u0, u1, u2: 6 connections
    try:
        sign_in(browser, hub, hub.token)
        go(browser, "#syncs", "!!document.querySelector('select[name=cohort] option[value=beta]')")
        browser.evaluate("""(() => { const k = document.querySelector('select[name=kind]'); k.value = 'cohort';
            k.dispatchEvent(new Event('change')); document.querySelector('select[name=cohort]').value = 'beta';
            document.querySelector('select[name=cohort]').dispatchEvent(new Event('input')); return true; })()""")
        browser.wait_for("document.getElementById('dry-run').dataset.connections === '6'", what="the dry-run count")
        status, dry = call(hub, "POST", "/v1/syncs", {"target": {"cohort": "beta"}, "dry_run": True})
        assert status == 200 and dry == {"dry_run": True, "targeted_online": 6, "users": 3}
        assert text(browser, "#dry-run") == "6 connections (3 signed-in users)"
        # Narrowing the target updates the count as it is edited.
        browser.evaluate("""(() => { const p = document.querySelector('input[name=platform]'); p.value = 'android';
            p.dispatchEvent(new Event('input')); return true; })()""")
        browser.wait_for("document.getElementById('dry-run').dataset.connections === '0'", what="the narrowed count")
        browser.evaluate("""(() => { const p = document.querySelector('input[name=platform]'); p.value = 'platfrom';
            p.value = ''; p.dispatchEvent(new Event('input')); return true; })()""")
        browser.wait_for("document.getElementById('dry-run').dataset.connections === '6'", what="the count again")
        screenshot(browser, shots, "syncs")
        click(browser, "#send-sync")
        confirm(browser, "It reaches 6 connection(s) of 3 signed-in user(s) now")
        browser.wait_for("location.hash.startsWith('#syncs/s')", what="the funnel")
        sync_id = browser.evaluate("decodeURIComponent(location.hash.slice(7))")
        browser.wait_for("document.getElementById('acked')?.textContent === '6'", timeout=15, what="6 acks in the funnel")
        status, receipts = call(hub, "GET", "/v1/syncs/" + sync_id)
        assert receipts["receipts"] == {"targeted_online": 6, "delivered": 6, "acked": 6, "pushed": 0, "push_failed": 0}
        assert sorted(sum((c.acked for c in clients), [])) == [sync_id] * 6
        assert (text(browser, "#targeted"), text(browser, "#delivered")) == ("6", "6")
        # Receipts are counted in memory: the funnel says since when (issue 24 item 14).
        since = time.localtime(receipts["counted_since"])
        assert text(browser, "#counted-since") == \
            "counted since %02d:%02d — receipts restart when a hub restarts" % (since.tm_hour, since.tm_min)
        # The composer's dry runs changed nothing and are not audited; the sync is, once.
        entries = call(hub, "GET", "/v1/audit?limit=500")[1]["entries"]
        assert [(e["method"], e["status"]) for e in entries if e["path"] == "/v1/syncs"] == [("POST", 200)], entries
        screenshot(browser, shots, "funnel", height=700)
        # The cohort's page counts its members online the same way.
        go(browser, "#cohorts/beta", "document.getElementById('cohort-online')?.dataset.connections === '6'")
        assert text(browser, "#cohort-online") == "Online now: 6 connections of 3 signed-in users"
        # The live syncs list (GET /v1/syncs) shows it with its receipts.
        go(browser, "#syncs", "document.querySelector('table.syncs')?.innerText.includes('6 → 6 → 6')")
        assert text(browser, "table.syncs tbody tr td") == sync_id
        screenshot(browser, shots, "syncs-live", height=800)
        assert call(hub, "GET", "/v1/syncs")[1]["syncs"][0]["receipts"] == receipts["receipts"]
        assert browser.evaluate("a11yProblems()") == []
    finally:
        for c in clients:
            c.close()


def test_an_experiment_with_real_clients_matches_the_results_api(hub, browser, shots):
    base = {"type": "screen", "title": "Breakdown", "children": [{"id": "r1", "type": "text", "text": "row"}]}
    publish(hub, "match/breakdown", base)
    definition = {"key": "layout", "status": "draft", "traffic": 0.5,
                  "variants": [{"key": "control", "weight": 1}, {"key": "compact", "weight": 1}],
                  "screens": {"match/breakdown": {"compact": {"+layout": "compact"}}}}
    sign_in(browser, hub, hub.token)
    # Defined in the console's editor: what it sends is the definition above.
    go(browser, "#experiments/+new", "!!document.getElementById('save-experiment')")
    browser.evaluate("""(() => { const set = (name, value) => document.querySelector(`[name="${name}"]`).value = value;
        set('key', 'layout'); set('traffic', '0.5'); set('variants', 'control 1\\ncompact 1');
        set('screens', %s); return true; })()""" % js(json.dumps(definition["screens"])))
    click(browser, "#save-experiment")
    # The editor of the stored experiment: its key can no longer be edited.
    browser.wait_for("location.hash === '#experiments/layout' && document.querySelector('input[name=key]')?.readOnly === true"
                     " && document.getElementById('experiment-status')?.textContent === 'draft'", what="the new experiment")
    assert call(hub, "GET", "/v1/experiments/layout")[1] == {k: v for k, v in definition.items() if k != "key"}
    # A refusal is shown at the field it names.
    browser.evaluate("document.querySelector('textarea[name=variants]').value = 'control 1\\ncompact -2', true")
    click(browser, "#save-experiment")
    message = browser.wait_for("document.querySelector('textarea[name=variants]').closest('.field').querySelector('.field-message').textContent",
                               what="the refusal at the variants field")
    assert message.startswith("variants[1].weight:"), message
    assert call(hub, "GET", "/v1/experiments/layout")[1]["variants"][1]["weight"] == 1  # nothing changed
    click(browser, "#start-experiment")
    confirm(browser, "Start layout?")
    browser.wait_for("document.getElementById('experiment-status')?.textContent === 'running'", what="running")
    definition["status"] = "running"

    devices = ["dev-%d" % n for n in range(16)]
    clients = []
    try:
        for device in devices:
            clients.append(Client(hub, device, screen="match/breakdown"))
            if device in devices[::2]:  # half confirm what they rendered
                clients[-1].send({"type": "rendered", "screen": "match/breakdown", "version": clients[-1].first["version"]})
        expected = {"control": [0, 0], "compact": [0, 0]}
        for device in devices:
            variant = assign(definition, device)
            if variant:
                expected[variant][0] += 1
                expected[variant][1] += device in devices[::2]
        assert sum(served for served, _ in expected.values()) > 0
        deadline = time.time() + 5
        while True:
            results = call(hub, "GET", "/v1/experiments/layout/results")[1]
            counts = {v["variant"]: [v["served"], v["confirmed"]] for v in results["variants"]}
            if counts == expected or time.time() > deadline:
                break
            time.sleep(0.1)
        assert counts == expected
        wanted = [[v["variant"], str(v["served"]), str(v["confirmed"])] for v in results["variants"]]
        shown = browser.wait_for(
            "(() => { const rows = [...document.querySelectorAll('.results-table tbody tr')].map(r => [...r.children].map(c => c.textContent));"
            " return JSON.stringify(rows.map(r => r.slice(0, 3))) === %s && rows; })()" % js(json.dumps(wanted, separators=(",", ":"))),
            what="the results table")
        total = sum(v["served"] for v in results["variants"])
        for row, variant in zip(shown, results["variants"]):
            served, confirmed = variant["served"], variant["confirmed"]
            if served:
                assert row[3] == "%.1f %%" % (100 * confirmed / served), row
            assert row[4:] == [str(variant["weight"]), "50.0 %", "%.1f %%" % (100 * served / total)], row
        chart = browser.evaluate("document.querySelector('.exposure-chart').getAttribute('aria-label')")
        assert chart == "Exposures per variant: " + "; ".join(
            "%s served %d, confirmed %d" % (v["variant"], v["served"], v["confirmed"]) for v in results["variants"])

        # The screen as one of these devices sees it: its variant, and the tree the hub sends it.
        device = next(d for d in devices if assign(definition, d) == "compact")
        go(browser, "#screens/" + "match%2Fbreakdown", "!!document.querySelector('input[name=device]')")
        browser.evaluate("document.querySelector('input[name=device]').value = %s, true" % js(device))
        click(browser, ".inline-form button[type=submit]")
        browser.wait_for("document.querySelector('table.variants')?.innerText.includes('compact')", what="the device's variant")
        assert browser.evaluate("[...document.querySelectorAll('table.variants td')].map(c => c.textContent)") == ["layout", "compact", "bucket"]
        tree = call(hub, "GET", "/v1/screens/match/breakdown?device=" + device)[1]
        assert tree["tree"]["layout"] == "compact"
        assert browser.evaluate("document.querySelector('.preview').dataset.hash") == tree["hash"]
        go(browser, "#experiments/layout", "!!document.getElementById('ramp')")
        # The ramp preview: raising traffic moves no one to another variant; who joins is the
        # reference's count over the connected units.
        browser.wait_for("document.getElementById('ramp-preview').dataset.join !== undefined", what="the ramp preview")
        browser.evaluate("(() => { const s = document.getElementById('ramp'); s.value = '80'; s.dispatchEvent(new Event('input')); return true; })()")
        joins = sum(1 for d in devices if 5000 <= bucket("layout/layout/" + d) < 8000)
        browser.wait_for("document.getElementById('ramp-preview').dataset.join === %s" % js(str(joins)), what="the joins")
        assert browser.evaluate("document.getElementById('ramp-preview').dataset.move") == "0"
        assert browser.evaluate("document.getElementById('ramp-preview').dataset.leave") == "0"
        assert "0 units change variant" in text(browser, "#ramp-preview")
        screenshot(browser, shots, "experiments", height=1900)
        click(browser, "#apply-ramp")
        confirm(browser, "Ramp layout to 80 %?")
        browser.wait_for("document.getElementById('ramp-status')?.textContent === 'Traffic is 80 %.'", what="ramped")
        assert call(hub, "GET", "/v1/experiments/layout")[1]["traffic"] == 0.8
        assert browser.evaluate("a11yProblems()") == []
        # The compact units that joined get the compact tree, and are counted as served; the chart
        # follows. (Control units that joined get no new tree, and are not counted until they
        # are served one: see the report of issue 14.)
        ramped = dict(definition, traffic=0.8)
        compact = sum(1 for d in devices if assign(ramped, d) == "compact")
        deadline = time.time() + 5
        while results["variants"][1]["served"] != compact:
            assert time.time() < deadline, (results, compact)
            time.sleep(0.05)
            results = call(hub, "GET", "/v1/experiments/layout/results")[1]
        browser.wait_for("document.querySelector('.exposure-chart').getAttribute('aria-label').includes(%s)"
                         % js("compact served %d" % compact), what="the chart after the ramp")
        # Stop: every client sees the base screen again; the results stay.
        click(browser, "#stop-experiment")
        confirm(browser, "Every client sees the base screens again")
        browser.wait_for("document.getElementById('experiment-status')?.textContent === 'stopped'", what="stopped")
        assert call(hub, "GET", "/v1/experiments/layout")[1]["status"] == "stopped"
        assert call(hub, "GET", "/v1/experiments/layout/results")[1]["variants"] == results["variants"]
    finally:
        for c in clients:
            c.close()


def experiment_and_etag(hub, key):
    """The stored definition of experiment `key` and its ETag header (admin.call gives no headers)."""
    request = urllib.request.Request("http://127.0.0.1:%d/v1/experiments/%s" % (hub.admin_port, key),
                                     headers={"Authorization": "Bearer " + hub.token})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read()), response.headers["ETag"]


def put_if_match(hub, key, definition, etag):
    """PUT a definition with If-Match: (status, answer)."""
    request = urllib.request.Request("http://127.0.0.1:%d/v1/experiments/%s" % (hub.admin_port, key), method="PUT",
                                     data=json.dumps(definition).encode(),
                                     headers={"Authorization": "Bearer " + hub.token, "If-Match": etag})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def type_into(browser, name, value):
    """Sets the control named `name` as typing would: its value, then an input event."""
    browser.evaluate("(() => { const c = document.querySelector(%s); c.value = %s;"
                     " c.dispatchEvent(new Event('input', { bubbles: true })); c.dispatchEvent(new Event('change', { bubbles: true })); return true; })()"
                     % (js('[name="%s"]' % name), js(value)))


def editor_says(browser, kind):
    """Waits for the definition form's status line to be of `kind` ("ok", "error"); its text."""
    return browser.wait_for("document.getElementById('editor-status')?.dataset.kind === %s && document.getElementById('editor-status').textContent"
                            % js(kind), what="the form's %s message" % kind)


def test_a_ramp_and_an_override_survive_saving_the_definition_and_a_stale_form_is_refused(hub, browser, shots):
    """Issue 26's console bug: after ramping to 30 %, Save definition (to add an override) put
    traffic back to 100 % while the ramp panel said 30 %. Now the ramp and each override are
    changes of their own, and the form saves with If-Match: a form older than the stored
    definition's own members is refused (412), says so, and shows what was not saved."""
    publish(hub, "ramp-home", {"type": "screen", "title": "Home", "children": [{"id": "cta", "type": "button", "label": "Buy"}]})
    sign_in(browser, hub, hub.token)
    go(browser, "#experiments/+new", "!!document.getElementById('save-experiment')")
    type_into(browser, "key", "ramped")
    type_into(browser, "traffic", "1")
    type_into(browser, "variants", "a 1\nb 1")
    type_into(browser, "screens", json.dumps({"ramp-home": {"b": {"title": "B"}}}))
    click(browser, "#save-experiment")
    browser.wait_for("location.hash === '#experiments/ramped' && document.getElementById('ramp-current')?.dataset.traffic === '100'",
                     what="the stored experiment's page")
    # Ramp to 30 %: the traffic alone changes on the hub, and every panel says so.
    browser.evaluate("(() => { const s = document.getElementById('ramp'); s.value = '30'; s.dispatchEvent(new Event('input')); return true; })()")
    click(browser, "#apply-ramp")
    confirm(browser, "Ramp ramped to 30 %?")
    browser.wait_for("document.getElementById('ramp-status')?.textContent === 'Traffic is 30 %.'", what="ramped")
    assert call(hub, "GET", "/v1/experiments/ramped")[1]["traffic"] == 0.3
    browser.wait_for("document.getElementById('ramp-current').dataset.traffic === '30'"
                     " && document.getElementById('definition-traffic').textContent.startsWith('Traffic: 30 %')", what="30 % everywhere")
    # An override: one unit, one call; the form is not involved.
    type_into(browser, "override-unit", "u1")
    type_into(browser, "override-variant", "b")
    click(browser, "#add-override")
    browser.wait_for("[...document.querySelectorAll('table.overrides td')].map(c => c.textContent).slice(0, 2).join() === 'u1,b'", what="the override")
    assert call(hub, "GET", "/v1/experiments/ramped")[1]["overrides"] == {"u1": "b"}
    assert browser.evaluate("document.getElementById('definition-traffic').textContent").endswith(
        "Overrides: 1 (change them under Overrides). Saving keeps both as they are on the hub.")
    # Save the definition form with an edit: the ramp and the override stay.
    type_into(browser, "variants", "a 1\nb 2")
    click(browser, "#save-experiment")
    editor_says(browser, "ok")
    stored = call(hub, "GET", "/v1/experiments/ramped")[1]
    assert (stored["traffic"], stored["overrides"], stored["variants"][1]["weight"]) == (0.3, {"u1": "b"}, 2), stored
    assert browser.evaluate("[document.getElementById('ramp-current').dataset.traffic, document.getElementById('ramp-value').textContent]") == ["30", "30 %"]
    # A ramp made elsewhere (hubctl, the API) while the form has unsaved edits: both are kept.
    type_into(browser, "salt", "salt-2")
    assert call(hub, "POST", "/v1/experiments/ramped/traffic", {"traffic": 0.6})[0] == 200
    click(browser, "#save-experiment")
    editor_says(browser, "ok")
    stored = call(hub, "GET", "/v1/experiments/ramped")[1]
    assert (stored["traffic"], stored["salt"], stored["overrides"]) == (0.6, "salt-2", {"u1": "b"}), stored
    browser.wait_for("document.getElementById('ramp-current').dataset.traffic === '60'", what="the ramp panel at 60 %")
    # Removing the override is one call too.
    click(browser, '[data-remove-override="u1"]')
    browser.wait_for("document.getElementById('overrides').textContent === 'No overrides.'", what="no overrides")
    assert call(hub, "GET", "/v1/experiments/ramped")[1].get("overrides", {}) == {}
    # A stale form: its own members changed elsewhere after it was loaded. Refused, said, shown.
    type_into(browser, "variants", "a 1\nb 5")
    theirs, etag = experiment_and_etag(hub, "ramped")
    theirs["salt"] = "theirs"
    assert put_if_match(hub, "ramped", theirs, etag)[0] == 200
    click(browser, "#save-experiment")
    message = editor_says(browser, "error")
    assert message.startswith("Not saved (412): ramped changed since you read it"), message
    stored = call(hub, "GET", "/v1/experiments/ramped")[1]
    assert (stored["salt"], stored["variants"][1]["weight"], stored["traffic"]) == ("theirs", 2, 0.6), stored
    assert browser.evaluate("[document.querySelector('[name=salt]').value, document.querySelector('[name=variants]').value]") == ["theirs", "a 1\nb 2"]
    unsaved = json.loads(browser.evaluate("document.querySelector('#stale-definition pre.edits').textContent"))
    assert unsaved["variants"] == [{"key": "a", "weight": 1}, {"key": "b", "weight": 5}] and unsaved["salt"] == "salt-2", unsaved
    assert browser.evaluate("a11yProblems()") == []
    screenshot(browser, shots, "experiment-stale", height=2600)
    # The same through the API: a stale If-Match is 412 stale_definition, and changes nothing.
    status, refusal = put_if_match(hub, "ramped", dict(theirs, salt="late"), etag)
    assert status == 412, refusal
    assert call(hub, "GET", "/v1/experiments/ramped")[1]["salt"] == "theirs"


def test_the_preview_shows_each_variants_tree_and_a_bad_patch_is_refused_at_its_field(hub, browser):
    base = {"type": "screen", "title": "Shop", "children": [{"id": "head", "type": "text", "text": "Welcome"},
                                                           {"id": "cta", "type": "button", "label": "Buy"}]}
    publish(hub, "preview-shop", base)
    screens = {"preview-shop": {"b": {"children": {"#cta": {"label": "Buy now"}}}}}
    assert call(hub, "PUT", "/v1/experiments/previewed", {"variants": [{"key": "a"}, {"key": "b"}], "screens": screens})[0] == 200
    sign_in(browser, hub, hub.token)
    go(browser, "#experiments/previewed", "!!document.getElementById('preview-stored') && !!document.querySelector('[name=screens]')")
    click(browser, "#preview-stored")
    browser.wait_for("document.querySelectorAll('#variant-preview figure.variant-tree').length === 2", what="two variants")
    status, answer = call(hub, "GET", "/v1/experiments/previewed/preview")
    assert status == 200, answer
    shown = browser.evaluate("[...document.querySelectorAll('#variant-preview figure.variant-tree')]"
                             ".map(f => [f.dataset.variant, f.dataset.hash, f.querySelector('.preview').innerText])")
    [screen] = answer["screens"]
    assert [[v, h] for v, h, _ in shown] == [[v["variant"], v["hash"]] for v in screen["variants"]]
    (_, _, a_text), (_, _, b_text) = shown
    assert "Buy now" in b_text and "Welcome" in b_text, b_text  # one keyed child changed, the other kept
    assert "Buy now" not in a_text and "Buy" in a_text, a_text
    # The form's patches, unsaved: a child the base does not have is refused with its path.
    type_into(browser, "screens", json.dumps({"preview-shop": {"b": {"children": {"#nope": {"label": "x"}}}}}))
    click(browser, "#preview-form")
    status_text = browser.wait_for("document.getElementById('preview-status').dataset.kind === 'error' && document.getElementById('preview-status').textContent",
                                   what="the refusal")
    assert status_text.startswith("422 invalid_variant_patch"), status_text
    at_field = text(browser, "textarea[name=screens] ~ .field-message")
    assert "#nope" in at_field, at_field
    click(browser, "#save-experiment")
    assert "422 invalid_variant_patch" in editor_says(browser, "error")
    assert call(hub, "GET", "/v1/experiments/previewed")[1]["screens"] == screens
    assert browser.evaluate("a11yProblems()") == []


def test_results_show_goals_and_the_srm_warning_as_the_hub_computes_them(hub, browser, shots):
    publish(hub, "goal-home", {"type": "screen", "title": "Home", "children": []})
    definition = {"key": "goals", "status": "running", "variants": [{"key": "a"}, {"key": "b"}],
                  "screens": {"goal-home": {"b": {"title": "B"}}}}
    assert call(hub, "PUT", "/v1/experiments/goals", {k: v for k, v in definition.items() if k != "key"})[0] == 200
    clients = []
    try:
        # Every unit of b buys (value 10), every third of a's buys (value 4).
        for n in range(24):
            device = "goal-%d" % n
            clients.append(Client(hub, device, screen="goal-home"))
            variant = assign(definition, device)
            if variant == "b" or n % 3 == 0:
                clients[-1].send({"type": "track", "event": "purchase", "value": 10 if variant == "b" else 4})
        deadline = time.time() + 10
        while True:
            results = call(hub, "GET", "/v1/experiments/goals/results")[1]
            buyers = {v["variant"]: v["units"] for goal in results.get("goals", []) for v in goal["variants"]}
            expected = {"a": sum(1 for n in range(24) if assign(definition, "goal-%d" % n) == "a" and n % 3 == 0),
                        "b": sum(1 for n in range(24) if assign(definition, "goal-%d" % n) == "b")}
            if buyers == expected:
                break
            assert time.time() < deadline, (results, expected)
            time.sleep(0.1)
        sign_in(browser, hub, hub.token)
        go(browser, "#experiments/goals", "!!document.querySelector('.goal[data-goal=purchase] .goal-table')")
        # The table says what the hub computed, formatted.
        [goal] = results["goals"]
        rows = browser.evaluate("[...document.querySelectorAll('.goal[data-goal=purchase] .goal-table tbody tr')].map(r => [...r.children].map(c => c.textContent))")
        percent = lambda x: "%.1f %%" % (100 * x)
        for row, v in zip(rows, goal["variants"]):
            assert row[:2] == [v["variant"], str(v["units"])], row
            assert row[2] == "%s (%s to %s)" % (percent(v["rate"]), percent(v["rate_ci"][0]), percent(v["rate_ci"][1])), row
            if v["variant"] == results["control"]:
                assert row[3] == row[5] == "control", row
            else:
                low, high = v["diff_rate_ci"]
                assert row[3].startswith("+%.1f pp (" % (100 * v["diff_rate"])), row
                assert row[3].endswith(" · excludes 0" if low > 0 or high < 0 else " · includes 0"), row
        labels = browser.evaluate("[...document.querySelectorAll('.goal[data-goal=purchase] .interval-chart')].map(c => c.getAttribute('aria-label'))")
        assert len(labels) == 4 and labels[0].startswith("Conversion rate, 95 % CI: a "), labels
        assert browser.evaluate("document.querySelectorAll('.goal[data-goal=purchase] .interval-chart.difference line.zero').length") == 2
        assert text(browser, "#results-kept") and browser.evaluate("document.getElementById('results-kept').dataset.kept") == results["kept"]
        assert text(browser, "#results-since") != "nothing counted yet"
        assert "Looking again and again inflates false positives" in text(browser, "#results-limits")
        assert results["srm"] is not None and not results["srm"]["mismatch"], results["srm"]
        assert browser.evaluate("document.getElementById('srm-warning')") is None
        assert text(browser, "#srm-line").startswith("Sample-ratio check: the served counts fit the weights")
        # A skewed set of overrides (30 more units, all into b): the sample-ratio check fires.
        for n in range(30):
            assert call(hub, "POST", "/v1/experiments/goals/overrides", {"unit": "skew-%d" % n, "variant": "b"})[0] == 200
        for n in range(30):
            clients.append(Client(hub, "skew-%d" % n, screen="goal-home"))
        deadline = time.time() + 10
        while not (call(hub, "GET", "/v1/experiments/goals/results")[1]["srm"] or {}).get("mismatch"):
            assert time.time() < deadline, "the SRM check did not fire"
            time.sleep(0.1)
        warning = browser.wait_for("document.getElementById('srm-warning')?.innerText", what="the SRM warning")
        assert warning.startswith("Sample ratio mismatch — do not trust these results yet."), warning
        assert browser.evaluate("document.getElementById('srm-warning').getAttribute('role')") == "alert"
        assert browser.evaluate("a11yProblems()") == []
        screenshot(browser, shots, "experiment-results", height=2400)
    finally:
        for c in clients:
            c.close()


#: The demo page's test tree (test_demo_page.py): every kind of node its renderer knows, and one it does not.
DEMO_TREE = {"type": "screen", "title": "Home", "children": [
    {"id": "headline", "type": "text", "style": "title", "text": "Welcome"},
    {"id": "hero", "type": "image", "url": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnLz4=", "alt": "a banner"},
    {"id": "scores", "type": "section", "title": "Live scores", "children": [
        {"id": "s1", "type": "text", "text": "Lions 2 – 1 Tigers"},
        {"id": "fixtures", "type": "list", "items": ["Sat 15:00 Bears v Wolves", {"id": "f2", "label": "Sun 18:30 Owls v Hawks"}]}]},
    {"id": "cta", "type": "button", "label": "Buy tickets", "action": {"open": "/tickets"}},
    {"id": "chart", "type": "chart", "series": [3, 1, 4, 1, 5]}]}

#: Each element of a rendered tree as (class, its own text), in document order: the structure
#: both renderers must agree on (heading levels may differ: the console's sit inside its page).
SIGNATURE = """(root) => [root, ...root.querySelectorAll('*')].map(e => [e.className.replace(/\\bchanged\\b/, '').trim(),
    [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('')])"""


def test_the_console_draws_a_tree_as_the_demo_page_does(hub, browser):
    """render.js is a copy of the demo page's renderer (clients/demo/index.html): kept equal here."""
    publish(hub, "demo-equivalence", DEMO_TREE)
    browser.call("Page.navigate", url="http://127.0.0.1:%d/?screen=demo-equivalence" % hub.port)
    browser.wait_for("!!document.querySelector('#screen .c-screen')", what="the demo page's drawing")
    demo = browser.evaluate("(%s)(document.querySelector('#screen .c-screen'))" % SIGNATURE)
    browser.evaluate("demo.hub.close(), true")  # the page's client says goodbye before the page goes
    sign_in(browser, hub, hub.token)
    # The demo page's client is gone once the hub has seen its socket close.
    deadline = time.time() + 5
    while call(hub, "GET", "/v1/clients")[1]["count"]:
        assert time.time() < deadline, "the demo page's client is still connected"
        time.sleep(0.05)
    console = browser.evaluate("import('/console/render.js').then(m => (%s)(m.renderScreen(%s)))" % (SIGNATURE, js(DEMO_TREE)))
    assert console == demo
    assert ["c-unknown", ""] in demo and ["c-list", ""] in demo and ["", "Sun 18:30 Owls v Hawks"] in demo


def test_a_cohort_made_in_the_console_and_a_users_file_imported_in_batches_with_progress(hub, browser, shots):
    sign_in(browser, hub, hub.token)
    go(browser, "#cohorts/+new", "!!document.querySelector('[name=claims]')")
    browser.evaluate("""(() => { const set = (name, value) => document.querySelector(`[name="${name}"]`).value = value;
        set('name', 'importers'); set('platform', 'ios, android'); set('app_version', '>=5.0.0'); set('claims', '{"plan": "pro"}');
        return true; })()""")
    click(browser, ".panel .actions button.primary")
    browser.wait_for("location.hash === '#cohorts/importers' && !!document.getElementById('users-file')", what="the new cohort")
    rule = {"platform": ["ios", "android"], "app_version": ">=5.0.0", "claims": {"plan": "pro"}}
    assert call(hub, "GET", "/v1/cohorts/importers")[1] == {"name": "importers", "users": 0, "sample": [], "rule": rule}
    users = os.path.join(hub.data, "users.txt")
    with open(users, "w") as file:
        file.write("\n".join("user-%d" % n for n in range(25000)) + "\n")
    document = browser.call("DOM.getDocument")
    node = browser.call("DOM.querySelector", nodeId=document["root"]["nodeId"], selector="#users-file")
    browser.call("DOM.setFileInputFiles", files=[users], nodeId=node["nodeId"])
    click(browser, "#import")
    browser.wait_for("document.querySelector('.progress-text')?.dataset.done === 'true'", timeout=20, what="the import")
    assert text(browser, ".progress-text") == "batch 3 of 3: 25,000 of 25,000 ids sent; the cohort lists 25,000"
    assert browser.evaluate("[document.getElementById('import-progress').value, document.getElementById('import-progress').max]") == [25000, 25000]
    answer = call(hub, "GET", "/v1/cohorts/importers")[1]
    assert answer["users"] == 25000 and answer["rule"] == rule
    browser.wait_for("document.querySelector('table.cohorts')?.innerText.includes('25,000')", what="the size in the list")
    screenshot(browser, shots, "cohorts")
    assert browser.evaluate("a11yProblems()") == []


def test_the_hub_view_shows_connections_vitals_and_the_audit_log(hub, browser, shots):
    ensure_state(hub)
    publish(hub, "vitals", {"type": "screen", "children": []})
    clients = [Client(hub, "web-%d" % n) for n in range(3)]
    try:
        sign_in(browser, hub, hub.token)
        go(browser, "#hub", "document.getElementById('tile-loops')?.textContent === %s" % js(str(hub.stats()["loops"])))
        browser.wait_for("document.querySelector('table.by-version')?.innerText.includes('ios\\t5.2.0\\t3')", what="clients by version")
        summary = call(hub, "GET", "/v1/clients/summary")[1]
        assert summary == {"count": 3, "by_platform": [{"platform": "ios", "clients": 3}],
                           "by_app_version": [{"platform": "ios", "app_version": "5.2.0", "clients": 3}]}, summary
        browser.wait_for("document.querySelectorAll('.spark path.series').length >= 3", what="the charts")
        assert browser.evaluate("document.getElementById('tile-memory').textContent").endswith("MiB")
        audit = browser.wait_for("document.querySelector('table.audit')?.innerText", what="the audit log")
        assert "PUT /v1/screens/vitals" in audit, audit
        screenshot(browser, shots, "hub")
        assert browser.evaluate("a11yProblems()") == []
    finally:
        for c in clients:
            c.close()


def test_a_read_token_sees_everything_and_cannot_roll_back(hub, browser, shots):
    ensure_state(hub)
    status, created = call(hub, "POST", "/v1/tokens", {"name": "viewer", "scopes": ["read"]})
    assert status == 200, created
    sign_in(browser, hub, created["token"])
    assert browser.evaluate("document.getElementById('read-only').hidden") is False
    go(browser, "#screens/home", "!!document.getElementById('current-version')?.textContent.match(/\\d/)")
    assert browser.evaluate("document.getElementById('rollback').disabled") is True
    assert browser.evaluate("document.getElementById('rollback').title") == "needs the publish scope"
    status, refusal = call(hub, "POST", "/v1/screens/home/rollback", {}, token=created["token"])
    assert status == 403 and refusal["error"]["code"] == "forbidden"
    screenshot(browser, shots, "read-only", height=800)
    go(browser, "#syncs", "!!document.getElementById('send-sync')")
    assert browser.evaluate("document.getElementById('send-sync').disabled") is True
    assert text(browser, "#dry-run") == "a dry run needs the sync scope"
    go(browser, "#experiments/layout", "!!document.getElementById('apply-ramp')")
    assert browser.evaluate("['save-experiment', 'start-experiment', 'stop-experiment', 'apply-ramp', 'delete-experiment', 'add-override']"
                            ".map(id => document.getElementById(id).disabled)") == [True] * 6
    # What the page shows is not the only guard: the hub refuses (403) and audits the refusal.
    assert call(hub, "POST", "/v1/experiments/layout/status", {"status": "stopped"}, token=created["token"])[0] == 403
    entries = call(hub, "GET", "/v1/audit?limit=1", token=created["token"])[1]["entries"]
    assert entries[0]["token"] == "viewer" and entries[0]["status"] == 403
    assert browser.evaluate("a11yProblems()") == []  # disabled controls keep their contrast too
    # Revoked while the page is open: the next call is refused and the page asks to sign in again.
    assert call(hub, "DELETE", "/v1/tokens/viewer")[0] == 200
    browser.wait_for("!document.getElementById('sign-in').hidden", what="the sign-in form")
    assert "no longer accepts this token" in text(browser, "#sign-in-message")
    assert browser.evaluate("sessionStorage.length") == 0


def test_an_experiment_is_deleted_after_a_confirmation(hub, browser):
    assert call(hub, "PUT", "/v1/experiments/doomed", {"variants": [{"key": "a"}, {"key": "b"}]})[0] == 200
    sign_in(browser, hub, hub.token)
    go(browser, "#experiments/doomed", "!!document.getElementById('delete-experiment')")
    click(browser, "#delete-experiment")
    confirm(browser, "Delete doomed?")
    browser.wait_for("location.hash === '#experiments' && !document.querySelector('table.experiments')?.innerText.includes('doomed')",
                     what="the list without it")
    assert call(hub, "GET", "/v1/experiments/doomed")[0] == 404


def test_the_console_works_over_the_admin_listeners_tls(hub_factory, browser, tmp_path):
    """With --admin-tls-cert the page, its modules and every call go over https (the certificate
    is self-signed here, so this browser is told to accept it)."""
    from test_tls import make_certificate
    cert, key_file = make_certificate(str(tmp_path), "admin")
    secure = hub_factory("--dev", "--admin-tls-cert", cert, "--admin-tls-key", key_file)
    publish_over_tls = {"type": "screen", "children": [{"id": "t", "type": "text", "text": "over TLS"}]}
    browser.call("Security.setIgnoreCertificateErrors", ignore=True)
    try:
        browser.call("Page.navigate", url="https://127.0.0.1:%d/console" % secure.admin_port)
        browser.wait_for("window.consoleReady === true && location.protocol === 'https:'", what="the console over https")
        browser.evaluate("document.getElementById('token').value = %s, document.getElementById('sign-in').requestSubmit(), true" % js(secure.token))
        browser.wait_for("!!window.consoleState.who", what="signed in over https")
        subprocess.run([os.path.join(BIN, "hubctl"), "--url", "https://127.0.0.1:%d" % secure.admin_port, "--token", secure.token,
                        "screen", "publish", "tls-home", "-"], input=json.dumps(publish_over_tls), text=True, check=True,
                       capture_output=True, env={**os.environ, "HUBCTL_CACERT": cert})
        go(browser, "#screens/tls-home", "document.querySelector('.preview')?.innerText.includes('over TLS')")
    finally:
        browser.call("Security.setIgnoreCertificateErrors", ignore=False)
        browser.call("Page.navigate", url="about:blank")


def test_keyboard_alone_signs_in_and_moves_between_views(hub, browser):
    sign_in(browser, hub, hub.token)  # typed and submitted with Enter
    browser.evaluate("document.activeElement.blur(), document.querySelector('.skip').focus(), true")
    reached = []
    for _ in range(8):
        key(browser, "Tab")
        reached.append(browser.evaluate("document.activeElement.textContent.trim()"))
    assert reached[:5] == ["Screens", "Syncs", "Cohorts", "Experiments", "Hub"], reached
    # Tab reaches "Syncs"; Enter opens it; the view's controls are reachable in turn.
    browser.evaluate("document.querySelector('#nav a[data-view=syncs]').focus(), true")
    key(browser, "Enter")
    browser.wait_for("location.hash === '#syncs' && !!document.querySelector('select[name=kind]')", what="the syncs view")
    tags = set()
    browser.evaluate("document.getElementById('main').focus(), true")
    for _ in range(25):
        key(browser, "Tab")
        tags.add(browser.evaluate("document.activeElement.tagName.toLowerCase() + ':' + (document.activeElement.name || document.activeElement.id || '')"))
    for control in ("select:kind", "input:platform", "input:app_version", "input:reason", "input:mandatory", "button:send-sync"):
        assert control in tags, (control, sorted(tags))
    # Polling does not take the focus away: a link in a list keeps it across refreshes.
    ensure_state(hub)
    go(browser, "#screens", "!!document.querySelector('table.screens a')")
    browser.evaluate("window.focused = document.querySelector('table.screens a'), window.focused.focus(), true")
    browser.evaluate("new Promise(r => setTimeout(r, 2500))")
    assert browser.evaluate("document.activeElement === window.focused && window.focused.isConnected") is True
    go(browser, "#syncs", "document.getElementById('dry-run')?.dataset.connections !== undefined")
    # The confirmation is a modal dialog: Escape cancels it and nothing is sent.
    sync_seq = hub.stats()["sync_seq"]
    browser.evaluate("document.getElementById('send-sync').focus(), true")
    key(browser, "Enter")
    browser.wait_for("!!document.querySelector('dialog[open]')", what="the dialog")
    assert browser.evaluate("document.activeElement.dataset.confirm") == "no"
    key(browser, "Escape")
    browser.wait_for("!document.querySelector('dialog[open]')", what="the dialog to close")
    assert hub.stats()["sync_seq"] == sync_seq


def test_every_view_passes_the_accessibility_check_which_can_fail(hub, browser):
    ensure_state(hub)
    sign_in(browser, hub, hub.token)
    for view, ready in [("#screens", "table.screens"), ("#syncs", "#dry-run"), ("#cohorts/beta", "#users-file"),
                        ("#experiments/layout", ".exposure-chart"), ("#hub", ".spark")]:
        go(browser, view, "!!document.querySelector(%s)" % js(ready))
        assert browser.evaluate("a11yProblems()") == [], view
    # The check finds what it is for: an unlabelled input and pale text.
    browser.evaluate("""(() => { document.getElementById('view').append(Object.assign(document.createElement('input'), { name: 'orphan' }));
        const p = document.createElement('p'); p.textContent = 'barely visible'; p.style.color = '#bbbbbb';
        document.getElementById('view').append(p); return true; })()""")
    problems = browser.evaluate("a11yProblems()")
    assert problems[0] == "unlabelled input[name=orphan]", problems
    assert problems[1].startswith("contrast 1.") and "barely visible" in problems[1], problems
    assert not [line for line in browser.console if "rror" in str(line)], browser.console
