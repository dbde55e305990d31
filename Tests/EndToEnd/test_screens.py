"""Screens end to end: Python websocket clients against a real pushhub (--dev), the admin API,
`jsonpatch` applying the hub's patches, and `rfc8785` recomputing its hashes."""
import hashlib
import json
import socket
import time

import jsonpatch
import pytest
import rfc8785
from websockets.sync.client import connect

from admin import call, metric, publish

HOME_V1 = {"type": "screen", "children": [
    {"id": "header", "type": "header", "title": "Match"},
    {"id": "score", "type": "score", "home": 1, "away": 0},
    {"id": "chart", "type": "chart", "min_app_version": "5.3.0", "fallback": {"id": "chart", "type": "image", "url": "chart.png"}},
    {"id": "events", "type": "list", "items": [{"id": "e%d" % i, "minute": i * 7, "text": "event number %d" % i} for i in range(12)]},
]}


def sha(tree):
    return hashlib.sha256(rfc8785.dumps(tree)).hexdigest()


def render(tree, app_version):
    """The capability filter, independently: what a client of `app_version` sees."""
    def version(text):
        return tuple(int(x) for x in text.split("."))

    def walk(node):
        if isinstance(node, dict):
            if "min_app_version" in node:
                if version(app_version) < version(node["min_app_version"]):
                    return walk(node["fallback"]) if "fallback" in node else None
                node = {k: v for k, v in node.items() if k not in ("min_app_version", "fallback")}
            return {k: w for k, w in ((k, walk(v)) for k, v in node.items()) if w is not None}
        if isinstance(node, list):
            return [w for w in (walk(v) for v in node) if w is not None]
        return node
    return walk(tree)


@pytest.fixture
def dev_hub(hub_factory):
    return hub_factory("--dev", "--hello-timeout", "2s")


def client(hub, app_version="5.3.0"):
    ws = connect(hub.url + "/v1/connect", subprotocols=["pushhub.v1"])
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d-1", "app": {"platform": "ios", "version": app_version}}))
    welcome = json.loads(ws.recv(timeout=5))
    assert welcome["type"] == "welcome" and welcome["session"] and welcome["heartbeat_s"] == 25
    return ws


def receive(ws):
    return json.loads(ws.recv(timeout=5))


def test_subscribe_snapshot_then_live_patches_that_jsonpatch_applies(dev_hub):
    publish(dev_hub, "match/breakdown/2019", HOME_V1)
    ws = client(dev_hub)
    ws.send(json.dumps({"type": "subscribe", "screen": "match/breakdown/2019"}))
    snapshot = receive(ws)
    assert snapshot["type"] == "snapshot" and snapshot["version"] == 1
    assert snapshot["tree"] == render(HOME_V1, "5.3.0")
    assert snapshot["hash"] == sha(snapshot["tree"])
    tree = snapshot["tree"]
    v2 = json.loads(json.dumps(HOME_V1))
    v2["children"][1]["home"] = 2
    answer = publish(dev_hub, "match/breakdown/2019", v2)
    assert answer["version"] == 2 and answer["sent"] == 1 and answer["hash"] == sha(render(v2, "99.0.0"))
    patch = receive(ws)
    assert patch["type"] == "patch" and patch["from"] == 1 and patch["version"] == 2
    assert patch["ops"] == [{"op": "replace", "path": "/children/1/home", "value": 2}]
    tree = jsonpatch.apply_patch(tree, patch["ops"])
    assert tree == render(v2, "5.3.0") and sha(tree) == patch["hash"]
    v3 = json.loads(json.dumps(v2))
    v3["children"].insert(1, {"id": "banner", "type": "banner", "text": "Live ✓"})
    v3["children"][:3] = reversed(v3["children"][:3])
    publish(dev_hub, "match/breakdown/2019", v3)
    patch = receive(ws)
    tree = jsonpatch.apply_patch(tree, patch["ops"])
    assert tree == render(v3, "5.3.0") and sha(tree) == patch["hash"]
    assert sorted(op["op"] for op in patch["ops"]) == ["add", "move"]  # one insertion, one reordering


def test_resumption_unchanged_patch_or_snapshot(dev_hub):
    rows = [{"id": "r%d" % i, "type": "row", "text": "row %d" % i} for i in range(20)]
    v1_tree = {"type": "screen", "children": [{"id": "a", "text": "one"}] + rows}
    current = {"type": "screen", "children": [{"id": "a", "text": "two"}] + rows}
    publish(dev_hub, "home", v1_tree)
    publish(dev_hub, "home", current)
    ws = client(dev_hub)
    ws.send(json.dumps({"type": "subscribe", "screen": "home", "have": {"version": 2, "hash": sha(current)}}))
    assert receive(ws) == {"type": "unchanged", "screen": "home", "version": 2, "hash": sha(current)}
    ws.send(json.dumps({"type": "unsubscribe", "screen": "home"}))
    ws.send(json.dumps({"type": "subscribe", "screen": "home", "have": {"version": 1, "hash": sha(v1_tree)}}))
    answer = receive(ws)
    assert answer["type"] == "patch" and answer["from"] == 1
    assert jsonpatch.apply_patch(v1_tree, answer["ops"]) == current
    ws.send(json.dumps({"type": "unsubscribe", "screen": "home"}))
    ws.send(json.dumps({"type": "subscribe", "screen": "home", "have": {"version": 1, "hash": "0" * 64}}))
    answer = receive(ws)
    assert answer["type"] == "snapshot" and answer["tree"] == current


def test_delete_sends_gone(dev_hub):
    publish(dev_hub, "promo", {"type": "screen"})
    ws = client(dev_hub)
    ws.send(json.dumps({"type": "subscribe", "screen": "promo"}))
    assert receive(ws)["type"] == "snapshot"
    status, answer = call(dev_hub, "DELETE", "/v1/screens/promo")
    assert status == 200 and answer["sent"] == 1
    assert receive(ws) == {"type": "gone", "screen": "promo"}
    assert call(dev_hub, "GET", "/v1/screens/promo")[0] == 404


def test_old_app_gets_the_fallback_new_app_the_component(dev_hub):
    publish(dev_hub, "caps", HOME_V1)
    old, new = client(dev_hub, "5.2.9"), client(dev_hub, "5.3.0")
    for ws in (old, new):
        ws.send(json.dumps({"type": "subscribe", "screen": "caps"}))
    old_tree, new_tree = receive(old)["tree"], receive(new)["tree"]
    assert old_tree["children"][2] == {"id": "chart", "type": "image", "url": "chart.png"}
    assert new_tree["children"][2] == {"id": "chart", "type": "chart"}
    assert old_tree == render(HOME_V1, "5.2.9") and new_tree == render(HOME_V1, "5.3.0")
    status, seen = call(dev_hub, "GET", "/v1/screens/caps?app_version=5.2.9")
    assert status == 200 and seen["tree"] == old_tree and seen["hash"] == sha(old_tree)
    v2 = json.loads(json.dumps(HOME_V1))
    v2["children"][2]["fallback"]["url"] = "chart2.png"
    answer = publish(dev_hub, "caps", v2)
    assert answer["sent"] == 1 and answer["renditions"] == 2  # only the old app's rendition changed
    patch = receive(old)
    assert patch["ops"] == [{"op": "replace", "path": "/children/2/url", "value": "chart2.png"}]


def test_protocol_errors_keep_the_client_connected(dev_hub):
    publish(dev_hub, "home", {"type": "screen"})
    ws = connect(dev_hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
    assert receive(ws)["code"] == "hello_first"
    ws.send("{not json")
    error = receive(ws)
    assert error["code"] == "bad_json" and "byte 1" in error["message"]
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d"}))
    assert receive(ws)["type"] == "welcome"
    ws.send(json.dumps({"type": "teleport"}))
    assert receive(ws) == {"type": "error", "code": "unknown_type", "message": "no message type \"teleport\" in protocol v1", "ref": "teleport"}
    ws.send(json.dumps({"type": "subscribe", "screen": "nope"}))
    assert receive(ws) == {"type": "pending", "screen": "nope"}  # not published yet: it waits
    ws.send(json.dumps({"type": "subscribe", "screen": "Bad Name"}))
    assert receive(ws)["code"] == "invalid_screen_name"
    ws.send(json.dumps({"type": "subscribe", "screen": "home", "future_field": [1, 2]}))
    assert receive(ws)["type"] == "snapshot"  # unknown fields are ignored


def test_admin_errors_say_what_to_fix(dev_hub):
    status, answer = call(dev_hub, "PUT", "/v1/screens/home", raw=b'{"type": "screen",}')
    assert status == 400 and "byte 18" in answer["error"]["message"]
    assert call(dev_hub, "PUT", "/v1/screens/home", {"a": 1}, token="wrong")[0] == 401
    assert call(dev_hub, "GET", "/v1/screens/missing")[0] == 404
    status, answer = call(dev_hub, "PUT", "/v1/screens/Home!", {"a": 1})
    assert status == 422 and answer["error"]["code"] == "invalid_screen_name"
    status, answer = call(dev_hub, "PUT", "/v1/screens/big", raw=b'"' + b"x" * (4 << 20) + b'"')
    assert status == 413


def test_history_rollback_and_list(dev_hub):
    for n in range(1, 4):
        publish(dev_hub, "roll", {"n": n})
    status, history = call(dev_hub, "GET", "/v1/screens/roll/history")
    assert status == 200 and [v["version"] for v in history["versions"]] == [3, 2, 1]
    status, answer = call(dev_hub, "POST", "/v1/screens/roll/rollback", {"to": 1})
    assert status == 200 and answer["version"] == 4
    assert call(dev_hub, "GET", "/v1/screens/roll")[1]["tree"] == {"n": 1}
    status, screens = call(dev_hub, "GET", "/v1/screens")
    assert [s["name"] for s in screens["screens"]] == ["roll"] and screens["screens"][0]["version"] == 4
    assert call(dev_hub, "POST", "/v1/screens/roll/rollback", {"to": 99})[0] == 404


def test_a_subscriber_that_stops_reading_gets_one_catch_up_instead_of_every_patch(hub_factory):
    """DESIGN §9 backpressure: above the high watermark the latest state supersedes queued
    updates; when the client reads again it gets one catch-up and ends on the latest tree."""
    import base64
    import os
    import socket
    import struct
    hub = hub_factory("--dev")
    rows = [{"id": "r%d" % i, "text": "x" * 100} for i in range(10)]
    publish(hub, "busy", {"rows": rows})
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", hub.port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /v1/connect HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())

    def frame(text):
        payload = text.encode()
        mask = os.urandom(4)
        head = struct.pack("!BB", 0x81, 0x80 | 126) + struct.pack("!H", len(payload)) if len(payload) >= 126 else struct.pack("!BB", 0x81, 0x80 | len(payload))
        return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

    s.sendall(frame(json.dumps({"type": "hello", "protocol": 1, "device": "slow"})) +
              frame(json.dumps({"type": "subscribe", "screen": "busy"})))
    buffered = b""

    def messages():
        nonlocal buffered
        while True:
            while b"\r\n\r\n" in buffered and buffered.startswith(b"HTTP/1.1"):
                buffered = buffered.split(b"\r\n\r\n", 1)[1]
            if len(buffered) >= 2:
                length, start = buffered[1] & 0x7F, 2
                if length == 126 and len(buffered) >= 4:
                    length, start = struct.unpack("!H", buffered[2:4])[0], 4
                elif length == 127 and len(buffered) >= 10:
                    length, start = struct.unpack("!Q", buffered[2:10])[0], 10
                if length < 126 or start > 2:
                    if len(buffered) >= start + length:
                        payload, buffered = buffered[start:start + length], buffered[start + length:]
                        yield json.loads(payload)
                        continue
            chunk = s.recv(1 << 20)
            assert chunk, "the hub closed the connection"
            buffered += chunk

    stream = messages()
    assert next(stream)["type"] == "welcome"
    tree = next(stream)["tree"]
    last = None
    for n in range(300):  # ~20 KB per patch, ~6 MB in all: far over the 1 MiB high watermark
        rows[n % 10] = {"id": "r%d" % (n % 10), "text": ("%d" % n) * (20000 // len(str(n)))}
        last = {"rows": list(rows)}
        publish(hub, "busy", last)
    ids = [call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "collapse": "config", "mandatory": n == 1})[1]["id"] for n in range(4)]
    received, syncs, latest = 0, [], 0
    while latest < 301 or not syncs:
        message = next(stream)
        if message["type"] == "sync":
            syncs.append(message)
            continue
        received += 1
        if message["type"] == "patch":
            tree = jsonpatch.apply_patch(tree, message["ops"])
        else:
            tree = message["tree"]
        latest = message["version"]
    s.settimeout(0.5)
    try:
        while True:
            extra = next(stream)
            assert extra["type"] != "sync", "a collapsed sync was sent as well"
    except (socket.timeout, TimeoutError):
        pass
    # The four syncs collapsed into the newest, mandatory because one of them was.
    assert [m["id"] for m in syncs] == [ids[-1]] and syncs[0]["mandatory"] is True
    assert tree == last
    assert received < 300, "updates were not coalesced (%d messages)" % received
    assert metric(hub, "pushhub_coalesced_total") > 0, "pushhub_coalesced_total is 0"  # missing: metric() fails
    s.close()


def test_pipelined_admin_requests_are_answered_in_order_after_their_commits(dev_hub):
    """Two publishes and a read sent in one write on one keep-alive connection: each mutation is
    answered after its group commit, the next request waits in the connection meanwhile, and the
    answers come back in request order (the read sees both versions)."""
    hub = dev_hub
    body = b'{"a":1}'
    put = (b"PUT /v1/screens/pipelined HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           b"Content-Length: %d\r\n\r\n" % (hub.token.encode(), len(body))) + body
    get = b"GET /v1/screens/pipelined HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % hub.token.encode()
    s = socket.create_connection(("127.0.0.1", hub.admin_port), timeout=5)
    s.sendall(put + put + get)
    received = b""
    deadline = time.time() + 5
    while received.count(b"HTTP/1.1 200") < 3 or not received.rstrip().endswith(b"}}"):
        assert time.time() < deadline, received
        received += s.recv(65536)
    s.close()
    bodies = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in received.split(b"HTTP/1.1 200 OK")[1:]]
    assert [b["version"] for b in bodies] == [1, 2, 2] and bodies[2]["tree"] == {"a": 1}


def test_a_min_app_version_that_is_not_a_version_is_refused_naming_its_path(dev_hub):
    """Such a node used to reach every client unfiltered, min_app_version and fallback included."""
    for value in ["99999999999999999999999.0.0", "5.x", 5]:
        tree = {"children": [{"id": "a", "type": "text"}, {"id": "b", "type": "chart", "min_app_version": value}]}
        status, answer = call(dev_hub, "PUT", "/v1/screens/gated", tree)
        assert status == 422 and "/children/1/min_app_version" in answer["error"]["message"], (value, answer)
    assert call(dev_hub, "GET", "/v1/screens/gated")[0] == 404
