"""hubctl's webhook commands (issue 31, DESIGN §18) against a real hub and a local receiver
(webhook_receiver.py): `webhook put | list | get | delete | deliveries | test`. What hubctl prints
is checked against the admin API's own answers and against what the receiver got; usage errors
are exit 2 before anything is sent, the hub's refusals exit 1 with its message."""
import json
import os
import re
import subprocess

import pytest

from admin import call, publish
from conftest import BIN
from release_clients import wait
from webhook_receiver import EVENT_TYPES, WebhookReceiver

SECRET = "whsec_hubctl_test_secret_012345"


def hubctl(hub, *args):
    url = "http://127.0.0.1:%d" % hub.admin_port if hub else "http://127.0.0.1:9"  # port 9: nothing may be sent
    return subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=30, cwd="/",
                          env={**os.environ, "HUBCTL_URL": url, "HUBCTL_TOKEN": hub.token if hub else "unused"})


def ok(hub, *args):
    result = hubctl(hub, *args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def fields(text):
    """The `key: value` rows of hubctl's human output."""
    rows = {}
    for line in text.splitlines():
        if ": " not in line:
            break
        key, value = line.split(":", 1)
        rows[key.strip()] = value.strip()
    return rows


def columns(text):
    """The rows of an aligned table (two or more spaces between cells), heading first."""
    return [re.split(r" {2,}", line.strip()) for line in text.splitlines()]


@pytest.fixture
def hub(hub_factory):
    return hub_factory("--dev")


@pytest.fixture
def receiver():
    receiver = WebhookReceiver(SECRET)
    yield receiver
    receiver.close()
    assert receiver.unverified() == []  # the request's other rules: test_webhooks.py


@pytest.mark.parametrize("args, message", [
    (("webhook", "put", "w", "--urll", "http://x"), "Unknown option '--urll' for 'hubctl webhook'. Did you mean '--url'?"),
    (("webhook", "put", "w", "--event", "*"), "Did you mean '--events'?"),
    (("webhook", "put", "w", "--events", "*"), "'webhook put' needs --url URL and --events LIST."),
    (("webhook", "put", "w", "--url", "http://127.0.0.1:1/x", "--events", " , "), "--events wants at least one"),
    (("webhook", "put", "--url", "http://127.0.0.1:1/x", "--events", "*"), "'webhook put' takes NAME --url URL"),
    (("webhook", "list", "--url", "http://127.0.0.1:8081"), "The hub's address goes first: hubctl --url URL webhook list."),
    (("webhook", "get", "w", "--limit", "3"), "'webhook get' takes no --limit; it is for 'webhook deliveries'."),
    (("webhook", "deliveries", "w", "--limit", "0"), "--limit wants a whole number from 1 to 1000, not '0'."),
    (("webhook", "deliveries", "w", "--limit", "1001"), "--limit wants a whole number from 1 to 1000"),
    (("webhook", "deliveries", "w", "--limit", "ten"), "--limit wants a whole number from 1 to 1000"),
    (("webhook", "test", "w", "--secret", "s" * 16), "'webhook test' takes no --secret"),
    (("webhook", "delivries", "w"), "Unknown command 'webhook delivries'. Did you mean 'webhook deliveries'?"),
    (("webhook",), "Missing a webhook subcommand."),
    (("webhook", "get"), "'webhook get' takes NAME."),
    (("webhook", "list", "extra"), "'webhook list' takes nothing."),
])
def test_a_usage_error_is_exit_2_naming_what_is_wrong_and_sends_nothing(args, message):
    result = hubctl(None, *args)
    assert result.returncode == 2, (args, result.stdout, result.stderr)
    assert message in result.stderr.splitlines()[0], (args, result.stderr)
    assert "Usage: hubctl" in result.stderr


def test_help_lists_the_subcommands_and_the_options():
    result = hubctl(None, "webhook", "--help")
    assert result.returncode == 0 and result.stdout.startswith("OVERVIEW:")
    for word in ("put", "list", "get", "delete", "deliveries", "test", "--events LIST", "--secret S", "--limit N"):
        assert word in result.stdout, word
    assert "webhook" in hubctl(None, "--help").stdout
    assert "deliveries" in hubctl(None, "completion", "bash").stdout


def test_put_list_get_deliveries_test_and_delete(hub, receiver):
    created = ok(hub, "webhook", "put", "ops", "--url", receiver.url, "--events", "screen.published, sync.created")
    shown = fields(created.stdout)
    assert shown["webhook"] == "ops" and shown["url"] == receiver.url
    assert shown["events"] == "screen.published,sync.created"
    assert shown["secret"].startswith("whsec_") and "only in this answer" in created.stderr
    assert call(hub, "GET", "/v1/webhooks/ops")[1]["events"] == ["screen.published", "sync.created"]

    # Replace with our secret (and see the receiver verify with it), as JSON for a script.
    answer = json.loads(ok(hub, "--json", "webhook", "put", "ops", "--url", receiver.url, "--events", "*",
                           "--secret", SECRET).stdout)
    assert answer["name"] == "ops" and answer["events"] == EVENT_TYPES and "secret" not in answer
    receiver.script(500)
    published = publish(hub, "home", {"type": "screen", "children": []})
    receiver.wait_for(lambda r: r.delivered(), what="the published event, after one 500")

    state = wait("the delivery journaled", lambda: (lambda w: w if w["queued"] == 0 else None)(
        call(hub, "GET", "/v1/webhooks/ops")[1]))
    got = fields(ok(hub, "webhook", "get", "ops").stdout)
    assert (got["webhook"], got["events"], got["delivered"], got["failed"], got["dropped"]) == (
        "ops", ",".join(EVENT_TYPES), str(state["delivered"]), "0", "0")
    assert got["last status"] == "200" and "secret" not in got

    rows = columns(ok(hub, "webhook", "list").stdout)
    assert rows[0] == ["webhook", "events", "url", "queued", "delivered", "failed", "dropped", "last status"]
    assert rows[1][:3] == ["ops", ",".join(EVENT_TYPES), receiver.url] and rows[1][4] == str(state["delivered"])
    assert json.loads(ok(hub, "--json", "webhook", "list").stdout) == call(hub, "GET", "/v1/webhooks")[1]

    listed = call(hub, "GET", "/v1/webhooks/ops/deliveries")[1]["deliveries"]
    rows = columns(ok(hub, "webhook", "deliveries", "ops").stdout)
    assert rows[0] == ["id", "type", "subject", "state", "attempts", "last status", "when", "last error"]
    event = receiver.delivered()[0]
    [row] = [r for r in rows[1:] if r[0] == event.id]
    assert row[1:6] == ["screen.published", "screen:home", "delivered", "2", "200"], row
    assert row[6].startswith("delivered 20")
    assert len(rows) - 1 == len(listed)
    one = json.loads(ok(hub, "--json", "webhook", "deliveries", "ops", "--limit", "1").stdout)
    assert one["deliveries"] == listed[:1]
    assert event.data["version"] == published["version"]

    tested = ok(hub, "webhook", "test", "ops")
    sent = receiver.recorded(type="webhook.test")
    assert len(sent) == 1 and fields(tested.stdout)["event"] == sent[0].id and fields(tested.stdout)["status"] == "200"

    receiver.script(503)
    failed = hubctl(hub, "webhook", "test", "ops")
    assert failed.returncode == 1 and fields(failed.stdout)["status"] == "503", failed
    assert "the test event was not delivered: the receiver answered 503" in failed.stderr, failed.stderr

    deleted = ok(hub, "webhook", "delete", "ops")
    assert deleted.stdout.strip() == "deleted ops"
    assert call(hub, "GET", "/v1/webhooks/ops")[0] == 404
    assert ok(hub, "webhook", "list").stdout.strip() == "no webhooks"


def test_the_hubs_refusals_are_exit_1_with_its_message(hub):
    refused = hubctl(hub, "webhook", "put", "w", "--url", "http://example.com/hooks", "--events", "*")
    assert refused.returncode == 1 and "url" in refused.stderr and "(400)" in refused.stderr, refused.stderr
    unknown = hubctl(hub, "webhook", "put", "w", "--url", "http://127.0.0.1:9/x", "--events", "screen.publishd")
    assert unknown.returncode == 1 and "screen.publishd" in unknown.stderr, unknown.stderr
    for args in (("get", "nope"), ("delete", "nope"), ("deliveries", "nope"), ("test", "nope")):
        missing = hubctl(hub, "webhook", *args)
        assert missing.returncode == 1 and "(404)" in missing.stderr, (args, missing.stderr)
    status, reader = call(hub, "POST", "/v1/tokens", {"name": "reader", "scopes": ["read"]})
    assert status == 200
    for args in (("put", "w", "--url", "http://127.0.0.1:9/x", "--events", "*"), ("list",)):
        result = subprocess.run([os.path.join(BIN, "hubctl"), "--url", "http://127.0.0.1:%d" % hub.admin_port,
                                 "--token", reader["token"], "webhook", *args], capture_output=True, text=True, timeout=30)
        assert result.returncode == 1 and "(403)" in result.stderr, (args, result.stderr)
