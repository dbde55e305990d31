"""A local webhook receiver for the end-to-end tests (DESIGN §18): a threaded HTTP/1.1 server on
loopback that checks every request the way docs/integrations.md tells a receiver to — the
signature with the documented Python recipe, executed as the page prints it — records what it
got, and answers what a test scripts.

    receiver = WebhookReceiver(secret)                  # listens on 127.0.0.1 (http)
    call(hub, "PUT", "/v1/webhooks/w", {"url": receiver.url, "events": ["*"], "secret": secret})
    receiver.script(500, 500)                           # the next two requests get 500, then 200s
    receiver.script("hang", subject="screen:home")      # the next one about home is never answered
    receiver.default = 503                              # what a request gets once its scripts are used up
    receiver.wait_for(lambda r: len(r.delivered()) == 3, what="three deliveries")
    receiver.close()

An answer is a status (int), `"hang"` (never answered until `close` or `release_hangs`), or an
`Answer(status, delay=seconds)` (push_provider's, whose `reason` and `retry_after` are unused here). Scripts given a `subject` are used for requests about
that subject first, then the ones for any subject. A request whose signature does not verify is
answered 401, whatever the script says (a real receiver refuses it), and recorded with
`verified` False. Each request is also checked against the contract of the request (method,
headers, the envelope and its key order); what is wrong is listed in its `problems`."""
import hashlib
import hmac
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from push_provider import Answer  # status, delay, hang: what a scripted stand-in answers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INTEGRATIONS = os.path.join(ROOT, "docs", "integrations.md")
ENVELOPE_KEYS = ["id", "type", "time", "subject", "data"]
#: The types a webhook subscribes to, in the hub's order: what `"events": ["*"]` is stored as.
EVENT_TYPES = ["screen.published", "screen.deleted", "release.started", "release.percent", "release.halted",
               "release.promoted", "sync.created", "client.render_error", "experiment.changed"]


def recipe(language):
    """The one code block in `language` (```js, ```python, ```go) of docs/integrations.md's
    "Verifying the signature", as the page prints it."""
    text = open(INTEGRATIONS).read()
    section = text.split("### Verifying the signature", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"^```%s\n(.*?)^```$" % re.escape(language), section, re.S | re.M)
    assert len(blocks) == 1, "docs/integrations.md has %d %s recipes, not one" % (len(blocks), language)
    return blocks[0]


def documented_verifier():
    """`verify_pushhub(secret, header, body, tolerance=300)` from the page's Python block."""
    namespace = {}
    exec(compile(recipe("python"), INTEGRATIONS + " (python recipe)", "exec"), namespace)
    return namespace["verify_pushhub"]


def sign(secret, body, t=None):
    """A `PushHub-Signature` value computed here, independently of the recipes: for tests that
    need a signature the hub did not make (old, future, for a tampered body)."""
    t = int(time.time()) if t is None else t
    digest = hmac.new(secret.encode(), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    return "t=%d,v1=%s" % (t, digest)


class Delivery:
    """One request the receiver got: the event's `id`, `type`, `subject`, `data` (from the body),
    the raw `body`, `headers` (names lower-case), arrival `time`, whether the signature verified,
    the status answered (None while unanswered or hung) and what broke the contract."""

    def __init__(self, method, path, headers, body, verified):
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.time = time.time()
        self.verified = verified
        self.status = None
        self.problems = []
        try:
            self.json = json.loads(body)
        except ValueError:
            self.json = None
            self.problems.append("the body is not JSON")
        envelope = self.json if isinstance(self.json, dict) else {}
        self.id = envelope.get("id")
        self.type = envelope.get("type")
        self.subject = envelope.get("subject")
        self.event_time = envelope.get("time")
        self.data = envelope.get("data")
        signature = dict(f.split("=", 1) for f in headers.get("pushhub-signature", "").split(",") if "=" in f)
        self.signed_at = int(signature["t"]) if signature.get("t", "").isdigit() else None
        self.check(envelope)

    def check(self, envelope):
        """The request as docs/integrations.md describes it."""
        wrong = self.problems.append
        if self.method != "POST":
            wrong("method %s, not POST" % self.method)
        if self.headers.get("content-type") != "application/json":
            wrong("Content-Type %r" % self.headers.get("content-type"))
        if not self.headers.get("user-agent", "").startswith("PushHub/"):
            wrong("User-Agent %r" % self.headers.get("user-agent"))
        if list(envelope) != ENVELOPE_KEYS:
            wrong("envelope keys %r, not %r in that order" % (list(envelope), ENVELOPE_KEYS))
        if self.json is not None and json.dumps(self.json, separators=(",", ":"), ensure_ascii=False).encode() != self.body:
            wrong("the body is not compact JSON")
        if not (isinstance(self.id, str) and self.id.startswith("ev-")):
            wrong("id %r" % self.id)
        if self.headers.get("pushhub-event") != self.type:
            wrong("PushHub-Event %r for an event of type %r" % (self.headers.get("pushhub-event"), self.type))
        if self.headers.get("pushhub-delivery") != self.id:
            wrong("PushHub-Delivery %r for event %r" % (self.headers.get("pushhub-delivery"), self.id))
        if not isinstance(self.event_time, int):
            wrong("time %r is not Unix milliseconds" % self.event_time)
        if not isinstance(self.data, dict):
            wrong("data %r is not an object" % self.data)
        if self.signed_at is None or not re.fullmatch(r"t=\d+,v1=[0-9a-f]{64}", self.headers.get("pushhub-signature", "")):
            wrong("PushHub-Signature %r" % self.headers.get("pushhub-signature"))

    def __repr__(self):
        return "Delivery(%s %s %s verified=%s status=%s)" % (self.id, self.type, self.subject, self.verified, self.status)


class WebhookReceiver:
    def __init__(self, secret, port=0):
        self.secret = secret
        self.verify = documented_verifier()
        self.default = Answer(200)
        self.requests = []
        self.scripts = {}  # subject (None: any) -> [Answer]
        self.changed = threading.Condition()
        self.hangs = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the hub's client expects

            def do_POST(self):
                receiver.handle(self)

            do_GET = do_PUT = do_DELETE = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d/hooks" % self.port

    def script(self, *answers, subject=None):
        with self.changed:
            self.scripts.setdefault(subject, []).extend(Answer.of(a) for a in answers)

    @property
    def default(self):
        return self._default

    @default.setter
    def default(self, value):
        self._default = Answer.of(value)

    def next_answer(self, subject):
        with self.changed:
            for key in (subject, None):
                if self.scripts.get(key):
                    return self.scripts[key].pop(0)
            return self._default

    def handle(self, request):
        length = int(request.headers.get("Content-Length", "0"))
        body = request.rfile.read(length)
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            verified = self.verify(self.secret, headers.get("pushhub-signature", ""), body)
        except Exception as error:  # a recipe that throws on odd input is a recipe bug: record it
            verified = False
            headers["x-recipe-error"] = repr(error)
        delivery = Delivery(request.command, request.path, headers, body, verified)
        answer = self.next_answer(delivery.subject) if verified else Answer(401)
        with self.changed:
            self.requests.append(delivery)
            self.changed.notify_all()
        if answer.hang:
            self.hangs.wait()
            request.close_connection = True
            return
        if answer.delay:
            time.sleep(answer.delay)
        payload = b'{"ok":true}' if 200 <= answer.status < 300 else b'{"error":"scripted"}'
        try:
            request.send_response(answer.status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(payload)))
            request.end_headers()
            request.wfile.write(payload)
        except OSError:
            return  # the hub gave up on this attempt (its 10 s timeout) and closed
        with self.changed:
            delivery.status = answer.status
            self.changed.notify_all()

    def recorded(self, type=None, subject=None):
        with self.changed:
            return [d for d in self.requests if (type is None or d.type == type) and (subject is None or d.subject == subject)]

    def delivered(self, type=None, subject=None):
        """The requests answered 2xx, in the order they came."""
        return [d for d in self.recorded(type, subject) if d.status is not None and 200 <= d.status < 300]

    def unverified(self):
        """The requests whose signature did not verify with the documented recipe."""
        return [d for d in self.recorded() if not d.verified]

    def problems(self):
        """Every request that broke the contract or did not verify, with why."""
        return [(d, d.problems or ["signature did not verify"]) for d in self.recorded() if d.problems or not d.verified]

    def wait_for(self, predicate, timeout=15.0, what="the receiver's condition"):
        """Waits until `predicate(self)` is true (checked at each request and answer); returns its value."""
        deadline = time.time() + timeout
        with self.changed:
            while True:
                value = predicate(self)
                if value:
                    return value
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("timed out waiting for %s; received %r" % (what, self.requests[-20:]))
                self.changed.wait(min(left, 0.5))

    def release_hangs(self):
        self.hangs.set()

    def close(self):
        self.hangs.set()
        self.server.shutdown()
        self.server.server_close()
