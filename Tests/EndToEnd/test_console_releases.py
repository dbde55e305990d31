"""A screen's release in the console (issue 27, DESIGN §15): headless Chromium against a real hub
with 24 real clients subscribed. Starts a release from the page's tree editor (the count shown
is the hub's dry run, the confirmation says it), raises its percent (the confirmation names how
many connected clients it newly exposes, counted by the reference bucket), follows the clients'
reports live (exposed, rendered, errored, error rate, recent errors), refuses a halt without a
reason, halts (the confirmation names how many exposed clients go back to which version) and
promotes another (all N subscribers get version V). A `read` token sees the release and cannot
act on it. Screenshots go to the test's tmp dir and /tmp/console-release*.png."""
import json
import re

import pytest

from admin import call, publish
from release_clients import Device, exposed, wait
from test_console import browser, hub  # noqa: F401 (module fixtures: a --dev hub, headless Chromium)
from test_console import click, confirm, go, js, screenshot, set_value, sign_in, text

BASE = {"type": "screen", "children": [{"id": "hero", "type": "text", "text": "Welcome"}]}
CANDIDATE = {"type": "screen", "children": [{"id": "hero", "type": "text", "text": "Welcome back"},
                                            {"id": "offers", "type": "section", "title": "Offers", "children": []}]}
RELEASES = "/v1/screens/home/releases"


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("console-release-screenshots")


@pytest.fixture
def devices(hub):
    """24 anonymous devices subscribed to `home` (published first if it is not)."""
    if call(hub, "GET", "/v1/screens/home")[0] == 404:
        publish(hub, "home", BASE)
    held = [Device(hub, "dev-%02d" % n) for n in range(24)]
    wait("24 subscribers", lambda: next(s for s in call(hub, "GET", "/v1/screens")[1]["screens"]
                                        if s["name"] == "home")["subscribers"] == 24)
    yield held
    for device in held:
        device.close()




def field_message(browser, selector):
    return browser.evaluate("document.querySelector(%s).closest('.field').querySelector('.field-message').textContent"
                            % js(selector))


def no_dialog(browser):
    return browser.evaluate("!document.querySelector('dialog[open]')")


def test_a_release_started_raised_followed_and_halted_in_the_console(hub, browser, shots, devices):
    names = [d.device for d in devices]
    assert call(hub, "PUT", "/v1/cohorts/qa", {"users": ["tester"]})[0] == 200
    sign_in(browser, hub, hub.token)
    go(browser, "#screens/home", "!!document.getElementById('release-none')")
    assert not browser.evaluate("document.getElementById('start-release-form').hidden")
    assert browser.evaluate("document.getElementById('release-actions').hidden") is True

    # The tree editor starts as the current tree; the count is the hub's dry run of what is typed.
    browser.evaluate("document.getElementById('start-release-form').open = true, true")
    current = call(hub, "GET", "/v1/screens/home")[1]["tree"]
    browser.wait_for("(() => { try { return JSON.stringify(JSON.parse(document.querySelector('textarea[name=release_tree]').value))"
                     " === %s; } catch { return false; } })()" % js(json.dumps(current, separators=(",", ":"))),
                     what="the current tree in the editor")
    set_value(browser, "input[name=qa_cohort]", "qa")
    set_value(browser, "input[name=release_percent]", "25")
    set_value(browser, "input[name=max_error_rate]", "0.5")
    set_value(browser, "input[name=min_units]", "3")
    set_value(browser, "input[name=release_message]", "offers section")
    set_value(browser, "textarea[name=release_tree]", json.dumps(CANDIDATE, indent=2))
    body = {"tree": CANDIDATE, "qa_cohort": "qa", "percent": 25, "guard": {"max_error_rate": 0.5, "min_units": 3},
            "message": "offers section"}
    status, dry = call(hub, "POST", RELEASES + "?dry_run=true", body)
    assert status == 200 and dry["subscribers"] == 24, dry
    browser.wait_for("document.getElementById('release-dry-run').dataset.expose === %s" % js(str(dry["would_expose"])),
                     what="the dry-run count")
    browser.wait_for("document.querySelector('.release-preview')?.innerText.includes('Offers')", what="the candidate drawn")
    assert call(hub, "GET", RELEASES)[1]["releases"] == []  # counting started nothing
    click(browser, "#start-release")
    confirm(browser, "%d of 24 connected subscribers get it now" % dry["would_expose"])
    browser.wait_for("document.getElementById('release-status')?.textContent === 'rolling'", what="the rolling release")
    release = call(hub, "GET", RELEASES)[1]["releases"][0]
    release_id = release["release"]
    assert (release["percent"], release["qa_cohort"], release["guard"], release["message"]) == \
        (25, "qa", {"max_error_rate": 0.5, "min_units": 3}, "offers section")
    first = exposed(release_id, names, 25)
    wait("the exposed devices on v2", lambda: all(d.version == (2 if d.device in first else 1) for d in devices))
    browser.wait_for("document.getElementById('release-exposed')?.textContent === %s" % js(str(len(first))), what="exposed")
    assert browser.evaluate("document.getElementById('start-release-form').hidden") is True
    assert browser.evaluate("a11yProblems()") == []

    # Raise: the dry run's count is in the confirmation, and nothing changes before it is confirmed.
    wider = exposed(release_id, names, 60)
    set_value(browser, "input[name=raise_to]", "60")
    click(browser, "#raise-percent")
    dialog = browser.wait_for("document.querySelector('dialog[open]')?.innerText", what="the raise confirmation")
    newly = len(wider - first)
    assert re.search(r"newly exposes %d connected clients?:" % newly, dialog), dialog
    assert "%d of 24 connected subscribers will have v2" % len(wider) in dialog, dialog
    assert call(hub, "GET", RELEASES + "/" + release_id)[1]["percent"] == 25
    click(browser, "dialog[open] [data-confirm=yes]")
    browser.wait_for("document.getElementById('release-percent')?.dataset.percent === '60'", what="60 %")
    wait("the newly exposed devices on v2", lambda: all(d.version == (2 if d.device in wider else 1) for d in devices))
    # Down is refused by the hub, at the field, without a confirmation.
    set_value(browser, "input[name=raise_to]", "10")
    click(browser, "#raise-percent")
    browser.wait_for("document.querySelector('input[name=raise_to]').getAttribute('aria-invalid') === 'true'",
                     what="the refusal at the percent field")
    assert field_message(browser, "input[name=raise_to]") and no_dialog(browser)
    assert call(hub, "GET", RELEASES + "/" + release_id)[1]["percent"] == 60

    # The clients' reports show up while it rolls (the panel reads the release every 2 s).
    failing = sorted(wider)[0]
    for device in devices:
        if device.device == failing:
            device.render_error("Carousel", "index out of range")
        elif device.device in wider:
            device.rendered()
    browser.wait_for("document.getElementById('release-errored')?.textContent === '1'", what="the render error")
    browser.wait_for("document.getElementById('release-rendered')?.textContent === %s" % js(str(len(wider) - 1)),
                     what="the renders")
    health = call(hub, "GET", RELEASES + "/" + release_id)[1]["health"]
    assert health["reported"] == len(wider) and health["errored"] == 1
    rate = "%g %%" % (round(health["error_rate"] * 10000) / 100)
    assert text(browser, "#release-error-rate") == "%s of %d reporting units" % (rate, len(wider))
    assert text(browser, "#release-guard").startswith("halts above 50 % once 3 units have reported")
    assert text(browser, "#release-by-component") == "By component: Carousel 1"
    rows = browser.evaluate("[...document.querySelectorAll('table.release-errors tbody tr')].map(r => [...r.cells].slice(1).map(c => c.textContent))")
    assert rows == [[failing, "Carousel", "index out of range"]], rows
    steps = browser.evaluate("[...document.querySelectorAll('table.release-steps tbody tr')].map(r => [...r.cells].slice(1).map(c => c.textContent))")
    assert steps == [["root", "start", "25 %"], ["root", "percent", "60 %"]], steps
    screenshot(browser, shots, "release", height=1400)

    # Halt: no reason, no halt; with one, the confirmation names who goes back to which version.
    click(browser, "#halt-release")
    assert "reason is required" in field_message(browser, "input[name=halt_reason]") and no_dialog(browser)
    assert call(hub, "GET", RELEASES + "/" + release_id)[1]["status"] == "rolling"
    set_value(browser, "input[name=halt_reason]", "carousel crash")
    click(browser, "#halt-release")
    dialog = confirm(browser, "go back to version 1")
    assert re.search(r"\b%d exposed clients? go back to version 1" % len(wider), dialog), dialog
    browser.wait_for("document.getElementById('release-status')?.textContent === 'halted'", what="halted")
    assert text(browser, "#release-halt").endswith("by root: carousel crash")
    wait("the exposed devices back on the base tree",
         lambda: all(d.received == ([2, 3] if d.device in wider else []) for d in devices))
    browser.wait_for("document.getElementById('current-version')?.textContent === '3'", what="v3 on the page")
    assert browser.evaluate("document.getElementById('release-actions').hidden") is True
    assert not browser.evaluate("document.getElementById('start-release-form').hidden")
    assert browser.evaluate("a11yProblems()") == []


def test_promote_names_every_subscriber_and_the_version(hub, browser, devices):
    current = call(hub, "GET", "/v1/screens/home")[1]
    candidate = dict(current["tree"], title="promoted")
    status, started = call(hub, "POST", RELEASES, {"tree": candidate})
    assert status == 201, started
    sign_in(browser, hub, hub.token)
    go(browser, "#screens/home", "document.getElementById('release-status')?.textContent === 'rolling'")
    assert text(browser, "#release-exposed") == "0"
    click(browser, "#promote-release")
    confirm(browser, "All 24 subscribers get version %d" % started["version"])
    browser.wait_for("document.getElementById('release-status')?.textContent === 'promoted'", what="promoted")
    wait("every device on the candidate", lambda: all(d.version == started["version"] for d in devices))
    assert call(hub, "GET", "/v1/screens/home")[1]["version"] == started["version"]


def test_a_read_token_sees_the_release_and_cannot_act(hub, browser):
    if call(hub, "GET", "/v1/screens/home")[0] == 404:
        publish(hub, "home", BASE)
    current = call(hub, "GET", "/v1/screens/home")[1]
    if not any(r["status"] == "rolling" for r in call(hub, "GET", RELEASES)[1]["releases"]):
        assert call(hub, "POST", RELEASES, {"tree": dict(current["tree"], title="read only")})[0] == 201
    status, created = call(hub, "POST", "/v1/tokens", {"name": "release-viewer", "scopes": ["read"]})
    assert status == 200, created
    sign_in(browser, hub, created["token"])
    go(browser, "#screens/home", "document.getElementById('release-status')?.textContent === 'rolling'")
    assert browser.evaluate("['raise-percent', 'promote-release', 'halt-release'].map(id => document.getElementById(id).disabled)") == [True] * 3
    assert browser.evaluate("document.getElementById('halt-release').title") == "needs the publish scope"
    assert browser.evaluate("a11yProblems()") == []
    # The hub refuses as well: the page is not the only guard.
    rolling = next(r for r in call(hub, "GET", RELEASES)[1]["releases"] if r["status"] == "rolling")
    assert call(hub, "POST", RELEASES + "/" + rolling["release"] + "/promote", {}, token=created["token"])[0] == 403
    assert call(hub, "POST", RELEASES + "/" + rolling["release"] + "/halt", {"reason": "cleanup"})[0] == 200
