"""Tests of the APNs/FCM stand-in (push_provider.py) itself, through a small HTTP/2 client over
TLS written here with the `h2` package: that it answers a correct request, refuses what the real
providers refuse (so it can fail a hub that gets the contract wrong), and answers scripts in
order. The hub's own push tests rely on all of this."""
import json
import socket
import ssl
import time
import urllib.parse

import h2.config
import h2.connection
import h2.events
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from push_provider import FCM_SCOPE, JWT_BEARER, Answer, PushProvider

DEVICE = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
SYNC = {"type": "sync", "id": "s-7", "seq": 7, "reason": "screens", "scope": "home", "hint": {"v": 1},
        "mandatory": True}


class H2Client:
    """One HTTP/2 connection to the stand-in: verifies its certificate against the CA file and
    insists on ALPN h2; requests may overlap (start, then response)."""

    def __init__(self, provider, alpn=("h2",)):
        context = ssl.create_default_context(cafile=provider.credentials.ca_file)
        context.set_alpn_protocols(list(alpn))
        raw = socket.create_connection(("127.0.0.1", provider.port), timeout=5)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.alpn = self.sock.selected_alpn_protocol()
        self.authority = "127.0.0.1:%d" % provider.port
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.sock.sendall(self.h2.data_to_send())
        self.responses = {}  # stream id -> {"status", "headers", "body", "ended"}

    def start(self, method, path, headers=(), body=b""):
        stream_id = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream_id, [(":method", method), (":scheme", "https"), (":authority", self.authority),
                                         (":path", path), *headers], end_stream=not body)
        if body:
            self.h2.send_data(stream_id, body, end_stream=True)
        self.sock.sendall(self.h2.data_to_send())
        self.responses[stream_id] = {"status": None, "headers": {}, "body": b"", "ended": False}
        return stream_id

    def response(self, stream_id, timeout=5.0):
        """(status, headers, body) of the stream; raises TimeoutError when none came in time."""
        deadline = time.time() + timeout
        while not self.responses[stream_id]["ended"]:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise TimeoutError("no response on stream %d" % stream_id)
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLError) as error:
                raise TimeoutError("no response on stream %d" % stream_id) from error
            if not data:
                raise ConnectionError("the stand-in closed the connection")
            for event in self.h2.receive_data(data):
                self.handle(event)
            self.sock.sendall(self.h2.data_to_send())
        response = self.responses[stream_id]
        return response["status"], response["headers"], response["body"]

    def handle(self, event):
        if isinstance(event, h2.events.ResponseReceived):
            headers = dict(event.headers)
            self.responses[event.stream_id]["status"] = int(headers.pop(":status"))
            self.responses[event.stream_id]["headers"] = headers
        elif isinstance(event, h2.events.DataReceived):
            self.responses[event.stream_id]["body"] += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.responses[event.stream_id]["ended"] = True

    def request(self, method, path, headers=(), body=b""):
        return self.response(self.start(method, path, headers, body))

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def provider():
    stand_in = PushProvider()
    yield stand_in
    stand_in.close()


@pytest.fixture
def client(provider):
    connection = H2Client(provider)
    yield connection
    connection.close()


def apns_headers(provider, token=None, **overrides):
    headers = {"authorization": "bearer " + (token or provider.credentials.provider_token()),
               "apns-topic": "com.example.app", "apns-push-type": "background", "apns-priority": "5",
               "apns-expiration": str(int(time.time()) + 3600), "apns-collapse-id": "home",
               "content-type": "application/json"}
    headers.update(overrides)
    return [(name, value) for name, value in headers.items() if value is not None]


def apns_body(sync=SYNC, aps=None):
    return json.dumps({"aps": aps or {"content-available": 1}, "pushhub": sync}).encode()


def push_apns(client, provider, device=DEVICE, headers=None, body=None):
    status, response_headers, data = client.request(
        "POST", "/3/device/" + device, headers if headers is not None else apns_headers(provider),
        body if body is not None else apns_body())
    return status, response_headers, json.loads(data) if data else None


def access_token(client, provider):
    form = urllib.parse.urlencode({"grant_type": JWT_BEARER, "assertion": provider.credentials.assertion()})
    status, _, body = client.request("POST", "/token", [("content-type", "application/x-www-form-urlencoded")],
                                     form.encode())
    assert status == 200, body
    return json.loads(body)["access_token"]


def fcm_body(device="fcm-token-1", sync=SYNC, android=None):
    return json.dumps({"message": {"token": device, "data": {"pushhub": json.dumps(sync)},
                                   "android": android or {"priority": "normal", "ttl": "60s",
                                                          "collapse_key": "home"}}}).encode()


def push_fcm(client, provider, token, body=None, project=None):
    status, headers, data = client.request(
        "POST", "/v1/projects/%s/messages:send" % (project or provider.credentials.project_id),
        [("authorization", "Bearer " + token), ("content-type", "application/json; charset=UTF-8")],
        body if body is not None else fcm_body())
    return status, headers, json.loads(data)


# APNs


def test_the_stand_in_speaks_h2_over_tls_and_answers_a_correct_apns_push(provider, client):
    assert client.alpn == "h2"
    before = len(provider.recorded())
    status, headers, body = push_apns(client, provider)
    assert status == 200 and body is None
    assert len(headers["apns-id"]) == 36
    recorded = provider.recorded()[before]
    assert (recorded.provider, recorded.method, recorded.path) == ("apns", "POST", "/3/device/" + DEVICE)
    assert recorded.token == DEVICE
    assert recorded.headers["apns-push-type"] == "background"
    assert recorded.json == {"aps": {"content-available": 1}, "pushhub": SYNC}
    assert recorded.sync == SYNC
    assert (recorded.status, recorded.reason) == (200, None)
    assert abs(recorded.time - time.time()) < 5


def test_a_client_without_h2_alpn_gets_no_http2(provider):
    with pytest.raises((ConnectionError, OSError, AssertionError)):
        client = H2Client(provider, alpn=("http/1.1",))
        assert client.alpn == "h2"
        client.request("GET", "/")


@pytest.mark.parametrize("case, reason", [
    ("signed with another key", "InvalidProviderToken"),
    ("another key id", "InvalidProviderToken"),
    ("another team", "InvalidProviderToken"),
    ("HS256", "InvalidProviderToken"),
    ("issued over an hour ago", "ExpiredProviderToken"),
    ("issued in the future", "InvalidProviderToken"),
    ("no authorization", "MissingProviderToken"),
    ("not bearer", "InvalidProviderToken"),
])
def test_apns_refuses_a_bad_provider_token(provider, client, case, reason):
    credentials = provider.credentials
    now = int(time.time())
    token = {
        "signed with another key": lambda: credentials.provider_token(key=ec.generate_private_key(ec.SECP256R1())),
        "another key id": lambda: credentials.provider_token(kid="XXXXXXXXXX"),
        "another team": lambda: credentials.provider_token(team="OTHERTEAM1"),
        "HS256": lambda: jwt.encode({"iss": credentials.apns_team, "iat": now}, "secret" * 6, algorithm="HS256",
                                    headers={"kid": credentials.apns_key_id}),
        "issued over an hour ago": lambda: credentials.provider_token(iat=now - 3700),
        "issued in the future": lambda: credentials.provider_token(iat=now + 600),
        "no authorization": lambda: None,
        "not bearer": lambda: "basic",
    }[case]()
    headers = apns_headers(provider)
    headers = [(n, v) for n, v in headers if n != "authorization"]
    if token == "basic":
        headers.append(("authorization", "Basic dXNlcjpwYXNz"))
    elif token:
        headers.append(("authorization", "bearer " + token))
    status, _, body = push_apns(client, provider, headers=headers)
    assert (status, body["reason"]) == (403, reason)
    assert provider.recorded()[-1].status == 403


@pytest.mark.parametrize("overrides, device, body, status, reason", [
    ({"apns-push-type": "alert"}, DEVICE, None, 400, "InvalidPushType"),
    ({"apns-push-type": None}, DEVICE, None, 400, "InvalidPushType"),
    ({"apns-priority": "10"}, DEVICE, None, 400, "BadPriority"),
    ({"apns-topic": None}, DEVICE, None, 400, "MissingTopic"),
    ({"apns-expiration": "soon"}, DEVICE, None, 400, "BadExpirationDate"),
    ({"apns-collapse-id": "k" * 65}, DEVICE, None, 400, "BadCollapseId"),
    ({"content-type": "text/plain"}, DEVICE, None, 400, "BadPayload"),
    ({}, "not-hex", None, 400, "BadDeviceToken"),
    ({}, DEVICE, b"", 400, "PayloadEmpty"),
    ({}, DEVICE, apns_body(sync=dict(SYNC, hint="h" * 4100)), 413, "PayloadTooLarge"),
    ({}, DEVICE, apns_body(aps={"alert": "hi"}), 400, "BadPayload"),
    ({}, DEVICE, apns_body(sync={"type": "sync", "id": "s-1"}), 400, "BadPayload"),
    ({}, DEVICE, apns_body(sync=dict(SYNC, jitter_ms=5)), 400, "BadPayload"),
    ({}, DEVICE, apns_body(sync=dict(SYNC, mandatory=False)), 400, "BadPayload"),
])
def test_apns_refuses_a_push_that_breaks_the_contract(provider, client, overrides, device, body, status, reason):
    answer = push_apns(client, provider, device=device, headers=apns_headers(provider, **overrides), body=body)
    assert (answer[0], answer[2]["reason"]) == (status, reason)


def test_apns_refuses_other_paths_and_methods(provider, client):
    status, _, body = client.request("POST", "/3/devices/" + DEVICE, apns_headers(provider), apns_body())
    assert (status, json.loads(body)["reason"]) == (404, "BadPath")
    status, _, body = client.request("GET", "/3/device/" + DEVICE, apns_headers(provider))
    assert (status, json.loads(body)["reason"]) == (405, "MethodNotAllowed")


def test_scripts_are_answered_in_order_per_token_then_200(provider, client):
    device = "aa" * 32
    provider.script(device, (410, "Unregistered"), (429, "TooManyRequests", 7), 500, Answer(403, "InvalidProviderToken"))
    answers = [push_apns(client, provider, device=device) for _ in range(5)]
    assert [(status, body and body["reason"]) for status, _, body in answers] == [
        (410, "Unregistered"), (429, "TooManyRequests"), (500, "InternalServerError"),
        (403, "InvalidProviderToken"), (200, None)]
    assert isinstance(answers[0][2]["timestamp"], int)
    assert answers[1][1]["retry-after"] == "7"
    assert "retry-after" not in answers[2][1]
    # Another token's pushes are not affected by the script.
    assert push_apns(client, provider)[0] == 200
    assert [r.status for r in provider.recorded(token=device)] == [410, 429, 500, 403, 200]


def test_a_refused_push_does_not_use_up_the_script(provider, client):
    device = "bb" * 32
    provider.script(device, (410, "Unregistered"))
    assert push_apns(client, provider, device=device, headers=apns_headers(provider, **{"apns-priority": "10"}))[0] == 400
    assert push_apns(client, provider, device=device)[0] == 410


def test_a_hanging_answer_never_comes_while_the_connection_serves_others(provider, client):
    device = "cc" * 32
    provider.script(device, "hang", Answer(200, delay=0.3))
    hung = client.start("POST", "/3/device/" + device, apns_headers(provider), apns_body())
    delayed = client.start("POST", "/3/device/" + device, apns_headers(provider), apns_body())
    assert push_apns(client, provider)[0] == 200
    started = time.time()
    assert client.response(delayed)[0] == 200
    assert time.time() - started > 0.1
    with pytest.raises(TimeoutError):
        client.response(hung, timeout=0.5)
    assert provider.recorded(token=device)[0].status is None


def test_expired_provider_tokens_are_refused_until_a_new_one_is_made():
    provider = PushProvider()  # its own: expiring tokens would fail the other tests' pushes for a second
    client = H2Client(provider)
    try:
        old = provider.credentials.provider_token(iat=int(time.time()) - 5)
        assert push_apns(client, provider, headers=apns_headers(provider, token=old))[0] == 200
        provider.expire_provider_tokens()
        status, _, body = push_apns(client, provider, headers=apns_headers(provider, token=old))
        assert (status, body["reason"]) == (403, "ExpiredProviderToken")
        assert provider.recorded()[-1].token == DEVICE
        fresh = provider.credentials.provider_token(iat=provider.provider_tokens_valid_from)
        assert push_apns(client, provider, headers=apns_headers(provider, token=fresh))[0] == 200
    finally:
        client.close()
        provider.close()


def test_connections_are_numbered_in_the_records(provider):
    first, second = H2Client(provider), H2Client(provider)
    try:
        push_apns(second, provider, device="dd" * 32)
        push_apns(first, provider, device="dd" * 32)
        numbers = [r.connection for r in provider.recorded(token="dd" * 32)]
        assert numbers[0] == numbers[1] + 1
        assert provider.connections >= numbers[0]
    finally:
        first.close()
        second.close()


def test_disconnect_all_drops_open_connections(provider):
    client = H2Client(provider)
    assert push_apns(client, provider)[0] == 200
    provider.disconnect_all()
    with pytest.raises((ConnectionError, OSError)):
        push_apns(client, provider)
    client.close()


# OAuth


def test_the_token_endpoint_answers_a_valid_assertion_with_a_bearer_token(provider, client):
    form = urllib.parse.urlencode({"grant_type": JWT_BEARER, "assertion": provider.credentials.assertion()})
    status, _, body = client.request("POST", "/token", [("content-type", "application/x-www-form-urlencoded")],
                                     form.encode())
    answer = json.loads(body)
    assert status == 200
    assert answer["token_type"] == "Bearer" and answer["expires_in"] == 3600
    assert answer["access_token"].startswith("ya29.")
    assert provider.recorded(provider="oauth")[-1].status == 200


@pytest.mark.parametrize("case, error", [
    ("another key", "invalid_grant"),
    ("another audience", "invalid_grant"),
    ("another issuer", "invalid_grant"),
    ("another scope", "invalid_scope"),
    ("longer than an hour", "invalid_grant"),
    ("expired", "invalid_grant"),
    ("another grant", "unsupported_grant_type"),
    ("json body", "invalid_request"),
])
def test_the_token_endpoint_refuses_a_bad_assertion(provider, client, case, error):
    credentials = provider.credentials
    assertion = {
        "another key": lambda: credentials.assertion(key=rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "another audience": lambda: credentials.assertion(audience="https://oauth2.googleapis.com/token"),
        "another issuer": lambda: credentials.assertion(issuer="someone@example.com"),
        "another scope": lambda: credentials.assertion(scope="https://www.googleapis.com/auth/cloud-platform"),
        "longer than an hour": lambda: credentials.assertion(lifetime=7200),
        "expired": lambda: credentials.assertion(iat=int(time.time()) - 4000),
    }.get(case, credentials.assertion)()
    grant = "client_credentials" if case == "another grant" else JWT_BEARER
    form = urllib.parse.urlencode({"grant_type": grant, "assertion": assertion}).encode()
    content_type = "application/json" if case == "json body" else "application/x-www-form-urlencoded"
    status, _, body = client.request("POST", "/token", [("content-type", content_type)], form)
    assert (status, json.loads(body)["error"]) == (400, error)


def test_the_token_endpoint_follows_its_script(provider, client):
    provider.script("oauth", (503, "unavailable", 2))
    form = urllib.parse.urlencode({"grant_type": JWT_BEARER, "assertion": provider.credentials.assertion()})
    status, headers, body = client.request("POST", "/token", [("content-type", "application/x-www-form-urlencoded")],
                                           form.encode())
    assert (status, headers["retry-after"], json.loads(body)["error"]) == (503, "2", "unavailable")


# FCM


def test_fcm_answers_a_correct_data_message_with_its_name(provider, client):
    token = access_token(client, provider)
    status, _, body = push_fcm(client, provider, token)
    assert status == 200
    assert body["name"].startswith("projects/%s/messages/" % provider.credentials.project_id)
    recorded = provider.recorded(provider="fcm")[-1]
    assert recorded.token == "fcm-token-1"
    assert recorded.sync == SYNC
    assert recorded.json["message"]["android"] == {"priority": "normal", "ttl": "60s", "collapse_key": "home"}


def test_fcm_refuses_tokens_it_did_not_issue_and_expired_ones(provider, client):
    assert push_fcm(client, provider, "ya29.made-up")[0] == 401
    token = access_token(client, provider)
    assert push_fcm(client, provider, token)[0] == 200
    provider.expire_access_tokens()
    status, _, body = push_fcm(client, provider, token)
    assert (status, body["error"]["status"]) == (401, "UNAUTHENTICATED")
    assert push_fcm(client, provider, access_token(client, provider))[0] == 200


@pytest.mark.parametrize("body, field", [
    (fcm_body(device=""), "message.token"),
    (json.dumps({"message": {"token": "t", "data": {"pushhub": SYNC}}}).encode(), "message.data"),
    (fcm_body(sync={"type": "sync"}), "message.data"),
    (fcm_body(android={"priority": "high", "ttl": "60s"}), "message.android.priority"),
    (fcm_body(android={"priority": "normal", "ttl": "60"}), "message.android.ttl"),
    (fcm_body(android={"priority": "normal", "ttl": "3000000s"}), "message.android.ttl"),
    (b'{"token": "t"}', "message"),
])
def test_fcm_refuses_a_message_that_breaks_the_contract(provider, client, body, field):
    status, _, answer = push_fcm(client, provider, access_token(client, provider), body=body)
    assert (status, answer["error"]["status"]) == (400, "INVALID_ARGUMENT")
    violations = [v["field"] for d in answer["error"]["details"] for v in d.get("fieldViolations", [])]
    assert violations == [field]


def test_fcm_refuses_another_project(provider, client):
    status, _, body = push_fcm(client, provider, access_token(client, provider), project="someone-else")
    assert (status, body["error"]["status"]) == (403, "PERMISSION_DENIED")


def test_fcm_scripts_give_fcm_error_objects(provider, client):
    token = access_token(client, provider)
    provider.script("fcm-token-1", (404, "UNREGISTERED"), (429, "QUOTA_EXCEEDED", 30), (503, "UNAVAILABLE"))
    answers = [push_fcm(client, provider, token) for _ in range(4)]
    assert answers[0][0] == 404
    assert answers[0][2]["error"]["status"] == "NOT_FOUND"
    assert answers[0][2]["error"]["details"][0]["errorCode"] == "UNREGISTERED"
    assert (answers[1][0], answers[1][1]["retry-after"], answers[1][2]["error"]["status"]) == (
        429, "30", "RESOURCE_EXHAUSTED")
    assert (answers[2][0], answers[2][2]["error"]["status"]) == (503, "UNAVAILABLE")
    assert answers[3][0] == 200


def test_hub_flags_name_the_credentials_and_the_stand_in(provider):
    flags = provider.hub_flags()
    values = dict(zip(flags[::2], flags[1::2]))
    assert values["--apns-url"] == values["--fcm-url"] == "https://127.0.0.1:%d" % provider.port
    account = json.load(open(values["--fcm-credentials"]))
    assert account["token_uri"] == "https://127.0.0.1:%d/token" % provider.port
    assert account["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert open(values["--apns-key"]).read().startswith("-----BEGIN PRIVATE KEY-----")
    assert values["--apns-team"] == provider.credentials.apns_team
    assert provider.credentials.assertion().count(".") == 2
    assert FCM_SCOPE in jwt.decode(provider.credentials.assertion(), options={"verify_signature": False})["scope"]
