"""The signature recipes of docs/integrations.md, each run as the page prints it: Node (node), Python
(this interpreter) and Go (`go run`, Debian's golang-go, which `make e2e` installs). Each accepts
what the hub signs — real deliveries from a real hub, retries included — and what this test signs
with its own HMAC, and refuses a tampered body, another secret, a `t` outside 5 minutes, and
malformed headers, without throwing. The worked examples on the page verify with the secrets the
page gives. A recipe is a few lines a reader copies: if one breaks, this fails before a reader's
receiver does."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from admin import call, publish
from webhook_receiver import INTEGRATIONS, WebhookReceiver, documented_verifier, recipe, sign

SECRET = "whsec_recipes_test_0123456789abcdef"
LANGUAGES = ["node", "python", "go"]

#: Reads [{"secret", "header", "body" (hex), "tolerance" (seconds)}] on stdin, prints [bool].
NODE_DRIVER = """
import { verifyPushHub } from "./recipe.mjs";
import { readFileSync } from "node:fs";
const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => verifyPushHub(c.secret, c.header, Buffer.from(c.body, "hex"), c.tolerance))));
"""

GO_DRIVER = """package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	var cases []struct {
		Secret, Header, Body string
		Tolerance           int64
	}
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	results := []bool{}
	for _, c := range cases {
		body, err := hex.DecodeString(c.Body)
		if err != nil {
			panic(err)
		}
		results = append(results, VerifyPushHub(c.Secret, c.Header, body, time.Duration(c.Tolerance)*time.Second))
	}
	out, _ := json.Marshal(results)
	fmt.Println(string(out))
}
"""


def run_recipe(language, cases, directory):
    """Each case through `language`'s recipe, in one process; the verdicts in order."""
    payload = json.dumps([{"secret": s, "header": h, "body": b.hex(), "tolerance": t} for s, h, b, t in cases])
    if language == "python":
        verify = documented_verifier()
        return [verify(s, h, b, tolerance=t) for s, h, b, t in cases]
    directory = directory / language
    directory.mkdir(exist_ok=True)
    if language == "node":
        node = shutil.which("node")
        assert node, "node is not installed: `make e2e` installs it (apt-get install -y nodejs)"
        (directory / "recipe.mjs").write_text(recipe("js"))
        (directory / "driver.mjs").write_text(NODE_DRIVER)
        command = [node, "driver.mjs"]
    else:
        go = shutil.which("go")
        assert go, "go is not installed: `make e2e` installs it (apt-get install -y golang-go)"
        source = recipe("go")
        assert source.startswith("package webhooks\n"), "the Go recipe should open with `package webhooks`"
        (directory / "recipe.go").write_text(source.replace("package webhooks\n", "package main\n", 1))
        (directory / "main.go").write_text(GO_DRIVER)
        (directory / "go.mod").write_text("module recipe\n\ngo 1.19\n")
        command = [go, "run", "."]
    environment = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off",
                   "GOCACHE": str(directory.parent / "go-cache")}
    result = subprocess.run(command, cwd=directory, input=payload, capture_output=True, text=True, timeout=180,
                            env=environment)
    assert result.returncode == 0, "%s recipe:\n%s\n%s" % (language, result.stdout, result.stderr)
    return json.loads(result.stdout)


def body_of(event_type="screen.published"):
    return json.dumps({"id": "ev-recipe", "type": event_type, "time": int(time.time() * 1000), "subject": "screen:home",
                       "data": {"screen": "home", "version": 3, "hash": "abc"}}, separators=(",", ":")).encode()


def signed_cases():
    """(name, (secret, header, body, tolerance), expected): signatures this test computes."""
    now = int(time.time())
    body = body_of()
    good = sign(SECRET, body, now)
    digest = good.split("v1=")[1]
    binary = b"\x00\xff\xfe{not json}\r\n" + "é".encode()
    return [
        ("signed now", (SECRET, good, body, 300), True),
        ("fields in the other order", (SECRET, "v1=%s,t=%d" % (digest, now), body, 300), True),
        ("a field the recipe does not know", (SECRET, good + ",v0=deadbeef", body, 300), True),
        ("any bytes as the body", (SECRET, sign(SECRET, binary, now), binary, 300), True),
        ("an empty body", (SECRET, sign(SECRET, b"", now), b"", 300), True),
        ("signed 4 minutes ago", (SECRET, sign(SECRET, body, now - 240), body, 300), True),
        ("one byte of the body changed", (SECRET, good, body.replace(b"3", b"4", 1), 300), False),
        ("a byte added to the body", (SECRET, good, body + b" ", 300), False),
        ("another secret", ("whsec_some_other_secret_000000", good, body, 300), False),
        ("signed 6 minutes ago", (SECRET, sign(SECRET, body, now - 360), body, 300), False),
        ("signed 6 minutes in the future", (SECRET, sign(SECRET, body, now + 360), body, 300), False),
        ("t changed after signing", (SECRET, "t=%d,v1=%s" % (now + 1, digest), body, 300), False),
        ("no v1", (SECRET, "t=%d" % now, body, 300), False),
        ("no t", (SECRET, "v1=" + digest, body, 300), False),
        ("an empty header", (SECRET, "", body, 300), False),
        ("t not a number", (SECRET, "t=%dx,v1=%s" % (now, digest), body, 300), False),
        ("t negative", (SECRET, "t=-5,v1=" + digest, body, 300), False),
        ("v1 shortened", (SECRET, good[:-2], body, 300), False),
        ("v1 with a stray character after it", (SECRET, good + "z", body, 300), False),
        ("v1 not hexadecimal", (SECRET, "t=%d,v1=%s" % (now, "zz" * 32), body, 300), False),
        ("v1 with a character outside ASCII", (SECRET, "t=%d,v1=%sé" % (now, digest[:-1]), body, 300), False),
        ("v1 empty", (SECRET, "t=%d,v1=" % now, body, 300), False),
    ]


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_recipe_accepts_what_is_signed_and_refuses_the_rest(language, tmp_path):
    cases = signed_cases()
    verdicts = run_recipe(language, [case for _, case, _ in cases], tmp_path)
    wrong = [name for (name, _, expected), verdict in zip(cases, verdicts) if verdict is not expected]
    assert not wrong, "%s recipe is wrong for: %s" % (language, wrong)


def documented_examples():
    """(secret, header, body) of each worked example on the page: a `PushHub-Signature:` line and
    the body that follows it, verified with the secret the page gives for it."""
    text = open(INTEGRATIONS).read()
    secrets = set(re.findall(r"whsec_[A-Za-z0-9_]+", text))
    examples = []
    for match in re.finditer(r"PushHub-Signature: (t=\d+,v1=[0-9a-f]{64})\n(?:\n|body: )(\{.*\})\n", text):
        header, body = match.group(1), match.group(2).encode()
        owners = [s for s in secrets if sign(s, body, int(header[2:].split(",")[0])) == header]
        assert owners, "the example signed %s does not verify with any secret on the page" % header
        examples.append((owners[0], header, body))
    return examples


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_worked_examples_on_the_page_verify(language, tmp_path):
    examples = documented_examples()
    assert len(examples) == 2, examples  # the request under "The request", and the one to check by hand
    ten_years = 10 * 365 * 86400
    assert run_recipe(language, [(s, h, b, ten_years) for s, h, b in examples], tmp_path) == [True, True]
    assert run_recipe(language, [(s, h, b, 300) for s, h, b in examples], tmp_path) == [False, False]


def test_the_page_and_the_tests_agree_on_the_recipes():
    """Each language has exactly one recipe on the page (a second one would go untested)."""
    for language in ("js", "python", "go"):
        assert recipe(language).strip()


@pytest.fixture
def receiver():
    receiver = WebhookReceiver(SECRET)
    yield receiver
    receiver.close()


def test_each_recipe_verifies_real_deliveries_from_a_hub(hub_factory, receiver, tmp_path):
    """A hub's deliveries of several types, a retry (its own `t`), and a test event: the receiver
    verified each with the Python recipe as it came; the Node and Go recipes verify the same
    bytes, and all three refuse them with another secret or with their bodies changed."""
    hub = hub_factory("--dev")
    status, answer = call(hub, "PUT", "/v1/webhooks/recipes", {"url": receiver.url, "events": ["*"], "secret": SECRET})
    assert status == 201, answer
    receiver.script(500, subject="screen:home")
    publish(hub, "home", {"type": "screen", "children": [{"id": "t", "type": "text", "text": "Grüße"}]})
    assert call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "recipes"})[0] == 200
    assert call(hub, "POST", "/v1/webhooks/recipes/test")[1]["status"] == 200
    receiver.wait_for(lambda r: {"screen.published", "sync.created", "webhook.test"} <= {d.type for d in r.delivered()},
                      what="three types delivered")
    requests = receiver.recorded()
    assert receiver.unverified() == []
    retried = receiver.recorded(subject="screen:home")
    assert [d.status for d in retried[:2]] == [500, 200] and retried[0].id == retried[1].id, retried
    assert retried[0].signed_at <= retried[1].signed_at

    real = [(SECRET, d.headers["pushhub-signature"], d.body, 300) for d in requests]
    other_secret = [("whsec_not_the_one_000000000000", h, b, t) for _, h, b, t in real]
    changed = [(s, h, b[:-1] + b" }", t) for s, h, b, t in real]
    for language in LANGUAGES:
        verdicts = run_recipe(language, real + other_secret + changed, tmp_path)
        assert verdicts == [True] * len(real) + [False] * (2 * len(real)), (language, verdicts)
