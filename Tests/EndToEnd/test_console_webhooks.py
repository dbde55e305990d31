"""The console's Webhooks view (issue 31, DESIGN §13, §18): headless Chromium against a real hub
and a local receiver (webhook_receiver.py) that verifies every request with the documented recipe.
Creates a webhook from the form (the secret the hub made is shown once, and the receiver verifies
with it), follows its recent deliveries live — a retried event pending with its attempts, last
status and next retry, then delivered — and checks them against the admin API's listing; edits
it (all events, a new secret the receiver then verifies with); sends a test event and shows what
the receiver answered, 200 or 500; shows the hub's refusal of a bad URL at the URL field; deletes
it after a confirmation naming it. A token without the admin scope is told the view needs it
(the hub refuses it every webhook call, reads too).
Screenshots go to the test's tmp dir and /tmp/console-webhooks*.png."""
import re

import pytest

from admin import call, publish
from test_console import browser, hub  # noqa: F401 (module fixtures: a --dev hub, headless Chromium)
from test_console import click, confirm, go, js, screenshot, set_value, sign_in, text
from test_console_components import rows
from test_console_releases import field_message
from webhook_receiver import EVENT_TYPES, WebhookReceiver

NEW_SECRET = "whsec_console_new_secret_0123"


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("console-webhooks-screenshots")


@pytest.fixture
def receiver(hub):
    receiver = WebhookReceiver("not known yet")
    yield receiver
    for name in ("ops", "viewer-sees"):
        call(hub, "DELETE", "/v1/webhooks/" + name)
    receiver.close()
    assert receiver.unverified() == []  # the request's other rules: test_webhooks.py


def check(browser, selector, checked=True):
    """Ticks (or clears) a checkbox the way a click does: its change event fires."""
    browser.evaluate("(() => { const box = document.querySelector(%s); if (box.checked !== %s) box.click(); return true; })()"
                     % (js(selector), js(checked)))


def test_a_webhook_created_followed_edited_tested_and_deleted_in_the_console(hub, browser, shots, receiver):
    sign_in(browser, hub, hub.token)
    go(browser, "#webhooks", "!!document.querySelector('#view .empty') || !!document.querySelector('table.webhooks')")
    assert browser.evaluate("document.querySelector('#nav a[aria-current=page]').dataset.view") == "webhooks"
    click(browser, "a[href='#webhooks/%2Bnew']")
    browser.wait_for("!!document.querySelector('input[name=webhook_name]')", what="the new webhook form")
    set_value(browser, "input[name=webhook_name]", "ops")
    set_value(browser, "input[name=webhook_url]", receiver.url)
    check(browser, "input[name=events][value='screen.published']")
    check(browser, "input[name=events][value='sync.created']")
    assert browser.evaluate("a11yProblems()") == []
    click(browser, "#webhook-save")
    made = browser.wait_for("location.hash === '#webhooks/ops' && document.getElementById('webhook-secret')?.textContent",
                            what="the made secret, shown once")
    assert re.fullmatch(r"whsec_[0-9A-Za-z]{32}", made), made
    stored = call(hub, "GET", "/v1/webhooks/ops")[1]
    assert (stored["url"], stored["events"]) == (receiver.url, ["screen.published", "sync.created"])
    browser.wait_for("document.querySelector('input[name=webhook_url]').value === %s" % js(receiver.url),
                     what="the form filled from the hub")
    assert browser.evaluate("[...document.querySelectorAll('input[name=events]:checked')].map(b => b.value)") == [
        "screen.published", "sync.created"]

    # A delivery that fails twice: pending with its attempts and next retry, then delivered.
    receiver.secret = made
    receiver.default = 500
    published = publish(hub, "home", {"type": "screen", "children": []})
    receiver.wait_for(lambda r: len(r.recorded(subject="screen:home")) >= 1, what="a first attempt")
    pending = browser.wait_for("[...document.querySelectorAll('table.deliveries tbody tr')].map(r => [...r.cells]"
                               ".map(c => c.textContent)).find(r => r[3] === 'pending' && r[5] === '500')",
                               what="the pending delivery with its last status", timeout=15)
    event = receiver.recorded(subject="screen:home")[0]
    assert pending[0] == event.id and pending[1:3] == ["screen.published", "screen:home"], pending
    assert int(pending[4]) >= 1 and pending[6].endswith("UTC") and pending[7] == "–", pending
    screenshot(browser, shots, "webhooks-pending")
    receiver.default = 200
    delivered = browser.wait_for("[...document.querySelectorAll('table.deliveries tbody tr')].map(r => [...r.cells]"
                                 ".map(c => c.textContent)).find(r => r[0] === %s && r[3] === 'delivered')" % js(event.id),
                                 what="the delivery delivered", timeout=30)
    listed = next(d for d in call(hub, "GET", "/v1/webhooks/ops/deliveries")[1]["deliveries"] if d["id"] == event.id)
    assert delivered[4:6] == [str(listed["attempts"]), "200"] and delivered[6] == "–" and delivered[7].endswith("UTC")
    assert receiver.delivered()[0].data["version"] == published["version"] and receiver.delivered()[0].verified
    browser.wait_for("document.querySelector('#webhook-facts')?.textContent.includes('Delivered1')", what="the counters")

    # Edit: every event, and a secret of our own (the receiver then verifies with it).
    check(browser, "input[name=events_all]")
    assert browser.evaluate("[...document.querySelectorAll('input[name=events]')].every(b => b.disabled)")
    set_value(browser, "input[name=webhook_secret]", NEW_SECRET)
    click(browser, "#webhook-save")
    browser.wait_for("document.querySelector('#view .status')?.dataset.kind === 'ok'", what="saved")
    assert call(hub, "GET", "/v1/webhooks/ops")[1]["events"] == EVENT_TYPES
    assert browser.evaluate("document.querySelector('input[name=webhook_secret]').value") == ""
    receiver.secret = NEW_SECRET

    # Send test: what the receiver answered, each time.
    click(browser, "#webhook-test")
    shown = browser.wait_for("(t => t.includes('answered') && t)(document.querySelector('#view .status').textContent)",
                             what="the test's answer")
    [sent] = receiver.recorded(type="webhook.test")
    assert sent.verified and sent.id in shown and "answered 200" in shown, shown
    receiver.script(500)
    click(browser, "#webhook-test")
    shown = browser.wait_for("(t => t.includes('answered 500') && t)(document.querySelector('#view .status').textContent)",
                             what="the failed test's answer")
    assert browser.evaluate("document.querySelector('#view .status').dataset.kind") == "error"
    assert browser.evaluate("a11yProblems()") == []
    screenshot(browser, shots, "webhooks", height=1800)

    # The hub's refusal is shown at the field it names.
    set_value(browser, "input[name=webhook_url]", "http://example.com/hooks")
    click(browser, "#webhook-save")
    browser.wait_for("document.querySelector('input[name=webhook_url]').getAttribute('aria-invalid') === 'true'",
                     what="the refusal at the URL field")
    assert "400" in field_message(browser, "input[name=webhook_url]")
    assert call(hub, "GET", "/v1/webhooks/ops")[1]["url"] == receiver.url

    # The list, then delete after a confirmation that names it.
    every = "all (%d)" % len(EVENT_TYPES)  # what the hub stores for "*": every type
    browser.wait_for("document.querySelector('table.webhooks tbody tr td:nth-child(2)')?.textContent === %s"
                     % js(every), what="the list read again with the saved events")
    assert rows(browser, "table.webhooks")[0][:2] == ["ops", every]
    assert browser.evaluate("document.querySelector('input[name=events_all]').checked")
    click(browser, "#webhook-delete")
    assert "Delete webhook ops?" in confirm(browser, "queued")
    browser.wait_for("location.hash === '#webhooks'", what="back to the list")
    assert call(hub, "GET", "/v1/webhooks/ops")[0] == 404
    browser.wait_for("document.querySelector('#view .empty')?.textContent === 'No webhooks yet.'", what="an empty list")


def test_a_token_without_the_admin_scope_is_told_webhooks_need_it(hub, browser, receiver):
    assert call(hub, "PUT", "/v1/webhooks/viewer-sees", {"url": receiver.url, "events": ["sync.created"]})[0] == 201
    status, created = call(hub, "POST", "/v1/tokens", {"name": "webhook-viewer", "scopes": ["read", "publish"]})
    assert status == 200, created
    sign_in(browser, hub, created["token"])
    go(browser, "#webhooks/viewer-sees", "!!document.getElementById('webhooks-need-admin')")
    assert "admin scope" in text(browser, "#webhooks-need-admin")
    assert browser.evaluate("!document.querySelector('#webhook-save, table.webhooks, #webhook-deliveries')")
    assert browser.evaluate("a11yProblems()") == []
    # The hub refuses as well: the page is not the only guard.
    for method, path in (("GET", "/v1/webhooks"), ("POST", "/v1/webhooks/viewer-sees/test")):
        assert call(hub, method, path, token=created["token"])[0] == 403
