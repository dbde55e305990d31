"""Bad inputs from issue 9's list, each with the answer the hub should give (docs/operations.md,
docs/admin-api.md). A case returns None when the answer was right, else a sentence saying what
came instead; the driver counts both. None of them may crash, stall or bloat the hub.
"""
import asyncio
import json
import os
import struct

from common import RawWS, b64url, compact, make_jwt, now, raw_http

# ---------------------------------------------------------------------------------------------
# Client listener


async def _expect_status(port, request, statuses, within=3.0):
    status, data, seconds = await raw_http(port, request, timeout=within + 2)
    if status not in statuses:
        return "expected %s, got %s (%r) after %.1f s" % (statuses, status, data[:120], seconds)
    if seconds > within:
        return "answered %s after %.1f s (expected within %.0f s)" % (status, seconds, within)
    return None


async def garbage_bytes(drv):
    return await _expect_status(drv.hub.port, os.urandom(300).replace(b"\n", b"x") + b"\r\n\r\n", (400,))


async def tls_client_hello(drv):
    hello = bytes.fromhex("16030100c4010000c00303") + os.urandom(32) + b"\x00\x00\x02\x13\x01\x01\x00"
    status, data, seconds = await raw_http(drv.hub.port, hello + os.urandom(150), timeout=16)
    # No CRLF ever comes: 400 at once or 408 after the handshake timeout (10 s) are both bounded.
    if status not in (400, 408, None) or seconds > 15:
        return "TLS bytes: status %s after %.1f s" % (status, seconds)
    return None


async def bare_lf_upgrade(drv):
    request = ("GET /v1/connect HTTP/1.1\nHost: x\nUpgrade: websocket\nConnection: Upgrade\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\nSec-WebSocket-Version: 13\n\n").encode()
    return await _expect_status(drv.hub.port, request, (400,), within=4)


async def duplicate_ws_key(drv):
    request = ("GET /v1/connect HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode()
    return await _expect_status(drv.hub.port, request, (400,))


async def huge_header(drv):
    request = b"GET /v1/connect HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"
    return await _expect_status(drv.hub.port, request, (431, 400))


async def slowloris(drv):
    """Half a request head, then nothing: 408 after the handshake timeout (10 s)."""
    status, data, seconds = await raw_http(drv.hub.port, b"GET /v1/connect HTTP/1.1\r\nHost: x\r\n", timeout=16)
    if status != 408 or seconds > 13:
        return "slowloris: status %s after %.1f s" % (status, seconds)
    return None


async def _ws(drv, hello=True):
    ws = await RawWS.connect(drv.hub.port)
    if hello:
        ws.send_json({"type": "hello", "protocol": 1, "device": "bad-%d" % drv.rng.randrange(10 ** 6),
                      "app": {"platform": "web", "version": "5.0.0"}})
        m = await ws.recv_json(10)
        if m.get("type") != "welcome":
            ws.abort()
            raise ConnectionError("no welcome: %r" % m)
    return ws


async def _expect_close(ws, codes, timeout=10):
    try:
        code = await ws.close_code(timeout)
    except asyncio.TimeoutError:
        return "no close within %d s (expected %s)" % (timeout, codes)
    finally:
        ws.abort()
    return None if code in codes else "close code %s, expected %s" % (code, codes)


async def oversized_frame(drv):
    ws = await _ws(drv)
    ws.writer.write(RawWS.frame(1, b"", length=1 << 20)[:14])  # header of a 1 MiB text frame
    return await _expect_close(ws, (1009,))


async def oversized_fragments(drv):
    ws = await _ws(drv)
    chunk = b"x" * 16384
    ws.send(1, chunk, fin=False)
    for _ in range(5):
        ws.send(0, chunk, fin=False)
    ws.send(0, chunk, fin=True)
    return await _expect_close(ws, (1009,))


async def unmasked_frame(drv):
    ws = await _ws(drv)
    ws.send(1, compact({"type": "ack", "sync": "s-1"}), mask=False)
    return await _expect_close(ws, (1002,))


async def reserved_bits(drv):
    ws = await _ws(drv)
    ws.send(1, b"{}", rsv=drv.rng.choice([1, 2, 4]))
    return await _expect_close(ws, (1002,))


async def bad_opcode(drv):
    ws = await _ws(drv)
    ws.send(drv.rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), b"x")
    return await _expect_close(ws, (1002,))


async def invalid_utf8(drv):
    ws = await _ws(drv)
    ws.send(1, b'{"type":"\xff\xfe"}')
    return await _expect_close(ws, (1007,))


async def _next_reply(ws):
    """The next message that answers us (syncs to everyone may come in between)."""
    while True:
        m = await ws.recv_json(10)
        if m.get("type") != "sync":
            return m


async def _expect_errors(drv, messages, code, hello=True, binary=False):
    ws = await _ws(drv, hello=hello)
    try:
        for message in messages:
            ws.send(2 if binary else 1, message)
        for _ in messages:
            m = await _next_reply(ws)
            if m.get("type") != "error" or m.get("code") != code:
                return "expected error %s, got %s" % (code, str(m)[:200])
        # Still connected: a good message still works.
        ws.send_json({"type": "subscribe", "screen": "home"})
        m = await _next_reply(ws)
        if m.get("type") not in ("snapshot", "error"):
            return "after errors: %s" % str(m)[:200]
        return None
    finally:
        ws.abort()


async def bad_json(drv):
    return await _expect_errors(drv, [b'{"type": "subscribe", ', b"not json", b"[1,2,", b'{"a":1}}'], "bad_json")


async def unknown_type(drv):
    return await _expect_errors(drv, [compact({"type": "frobnicate"}), compact({"type": "x" * 500})],
                                "unknown_type")


async def bad_message(drv):
    return await _expect_errors(drv, [b"[1,2,3]", b'"string"', compact({"type": "subscribe", "screen": 7})],
                                "bad_message")


async def before_hello(drv):
    ws = await _ws(drv, hello=False)
    try:
        ws.send_json({"type": "subscribe", "screen": "home"})
        m = await _next_reply(ws)
        if m.get("code") != "hello_first":
            return "expected hello_first, got %s" % str(m)[:200]
        return None
    finally:
        ws.abort()


async def hello_timeout(drv):
    ws = await _ws(drv, hello=False)
    started = now()
    problem = await _expect_close(ws, (1008,), timeout=12)
    if problem is None and now() - started > 8:
        return "hello timeout after %.1f s" % (now() - started)
    return problem


def _bad_tokens(drv):
    secret = drv.hub.secret
    t = int(drv.wall())
    good = {"sub": "u1", "exp": t + 3600}
    return {
        "alg_none": make_jwt(secret, good, header={"alg": "none", "typ": "JWT"}, sign=False),
        "alg_hs512": make_jwt(secret, good, header={"alg": "HS512", "typ": "JWT"}),
        "wrong_secret": make_jwt(b"not the secret", good),
        "expired": make_jwt(secret, {"sub": "u1", "exp": t - 3600}),
        "not_yet": make_jwt(secret, {"sub": "u1", "exp": t + 7200, "nbf": t + 3600}),
        "crit": make_jwt(secret, good, header={"alg": "HS256", "typ": "JWT", "crit": ["x-soak"], "x-soak": 1}),
        "cohorts_not_array": make_jwt(secret, {"sub": "u1", "exp": t + 3600, "cohorts": "beta"}),
        "no_sub": make_jwt(secret, {"exp": t + 3600}),
        "garbage": "x.y.z",
        "two_parts": b64url(b'{"alg":"HS256"}') + "." + b64url(b"{}"),
        "tampered": make_jwt(secret, good)[:-4] + "AAAA",
    }


async def bad_jwt(drv):
    name, token = drv.rng.choice(sorted(_bad_tokens(drv).items()))
    ws = await _ws(drv, hello=False)
    try:
        ws.send_json({"type": "hello", "protocol": 1, "token": token, "device": "d",
                      "app": {"platform": "ios", "version": "5.0.0"}})
        try:
            m = await ws.recv_json(10)
        except ConnectionAbortedError as closed:
            return "%s: closed without an error message (%s)" % (name, closed)
        if m.get("code") != "unauthorized":
            return "%s: expected unauthorized, got %s" % (name, str(m)[:200])
        problem = await _expect_close(ws, (1008,))
        return problem and "%s: %s" % (name, problem)
    finally:
        ws.abort()


async def _flood(drv, make, seconds):
    """Sends `make()` frames without reading for `seconds`: the hub must stop reading from us
    (its answers count against the watermarks) instead of buffering its answers."""
    ws = await _ws(drv)
    sent = 0
    started = now()
    try:
        while now() - started < seconds:
            for _ in range(200):
                ws.writer.write(make())
                sent += 1
            try:
                await asyncio.wait_for(ws.writer.drain(), max(0.05, seconds - (now() - started)))
            except asyncio.TimeoutError:
                break
    except (ConnectionError, OSError):
        pass
    finally:
        ws.abort()
    drv.count("flood_frames_sent", sent)
    return None


async def ping_flood(drv):
    payload = b"p" * 100
    return await _flood(drv, lambda: RawWS.frame(9, payload), drv.rng.uniform(5, 15))


async def subscribe_flood(drv):
    message = compact({"type": "subscribe", "screen": "no/such/screen"})
    return await _flood(drv, lambda: RawWS.frame(1, message), drv.rng.uniform(5, 15))


async def wrong_path_and_method(drv):
    problem = await _expect_status(drv.hub.port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", (404,))
    if problem:
        return problem
    return await _expect_status(drv.hub.port, b"POST /v1/connect HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                                (405,))


# ---------------------------------------------------------------------------------------------
# Admin listener


def _admin_request(drv, method, path, body, extra=b"", content_length=True):
    head = ("%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n" % (method, path, drv.hub.token)).encode()
    if content_length:
        head += b"Content-Length: %d\r\n" % len(body)
    return head + extra + b"\r\n" + body


async def _admin_expect(drv, request, statuses, within=3.0):
    return await _expect_status(drv.hub.admin_port, request, statuses, within)


async def _admin_json(drv, method, path, body, statuses):
    status, answer = await drv.admin_once(method, path, body=body, timeout=10)
    if status not in statuses:
        return "%s %s: expected %s, got %s %s" % (method, path, statuses, status, str(answer)[:200])
    return None


async def huge_ttl(drv):
    body = drv.rng.choice([
        {"target": {"all": True}, "ttl": 1e19},
        {"target": {"all": True}, "ttl": "9223372036854775807s"},
        {"target": {"all": True}, "spread": 9.3e18},
        {"target": {"all": True}, "ttl": -5},
        {"target": {"all": True}, "ttl": "99999999999999999999h"},
        {"target": {"all": True}, "spread": "1e400s"},
    ])
    return await _admin_json(drv, "POST", "/v1/syncs", body, (400,))


async def bad_sync_bodies(drv):
    body = drv.rng.choice([
        {"target": {}},
        {"target": {"all": True, "user": "u1"}},
        {"target": {"user": 5}},
        {"target": {"all": True, "app_version": "<<5"}},
        {"target": {"all": True}, "hint": {"x": "y" * 2000}},
        {"target": {"all": True}, "hint": "not an object"},
        {"target": {"all": True}, "mandatory": "yes"},
        [1, 2, 3],
    ])
    return await _admin_json(drv, "POST", "/v1/syncs", body, (400, 413, 422))


async def duplicate_content_length(drv):
    body = compact({"target": {"user": "nobody"}, "reason": "dup-cl"})
    request = _admin_request(drv, "POST", "/v1/syncs", body,
                             extra=b"Content-Length: %d\r\n" % (len(body) + 10))
    return await _admin_expect(drv, request, (400,))


async def signed_content_length(drv):
    body = compact({"target": {"user": "nobody"}})
    request = _admin_request(drv, "POST", "/v1/syncs", body, extra=b"Content-Length: +%d\r\n" % len(body),
                             content_length=False)
    return await _admin_expect(drv, request, (400,))


async def bare_lf_admin(drv):
    request = ("GET /v1/stats HTTP/1.1\nHost: x\nAuthorization: Bearer %s\n\n" % drv.hub.token).encode()
    return await _admin_expect(drv, request, (400,), within=4)


async def bad_json_body(drv):
    path = drv.rng.choice(["/v1/screens/home", "/v1/syncs", "/v1/cohorts/churn-a", "/v1/experiments/exp-a"])
    method = "POST" if path == "/v1/syncs" else "PUT"
    body = drv.rng.choice([b"{", b'{"a":', b"nul", b'{"a":1,}', b"\xff\xfe", b'"\\ud800"x'])
    status, answer = await drv.admin_once(method, path, raw=body, timeout=10)
    return None if status == 400 else "%s %s with bad JSON: %s %s" % (method, path, status, str(answer)[:200])


async def wrong_admin_token(drv):
    status, answer = await drv.admin_once("GET", "/v1/stats", token="not-the-token", timeout=10)
    return None if status == 401 else "wrong token: %s" % status


async def too_big_body(drv):
    body = b'{"type":"screen","pad":"' + b"x" * ((4 << 20) + 100) + b'"}'
    status, data, seconds = await raw_http(drv.hub.admin_port, _admin_request(drv, "PUT", "/v1/screens/toobig", body),
                                           timeout=10, read_all=False)
    return None if status == 413 else "5 MB body: status %s" % status


async def bad_weights(drv):
    weights = drv.rng.choice([[0.5, 2], [2 ** 64, 1], [1e308, 1e308], [-1, 1], [0, 0], ["1", 1], [1000001, 1]])
    definition = {"key": "bad-weights", "variants": [{"key": "a", "weight": weights[0]},
                                                     {"key": "b", "weight": weights[1]}]}
    return await _admin_json(drv, "PUT", "/v1/experiments/bad-weights", definition, (400, 422))


async def many_variants(drv):
    """20,000 variants: linear validation (or a 422 naming a limit), answered in well under 2 s;
    deleted again when the hub accepted it."""
    definition = {"key": "many-variants", "variants": [{"key": "v%d" % i} for i in range(20000)]}
    started = now()
    status, answer = await drv.admin_once("PUT", "/v1/experiments/many-variants", body=definition, timeout=30)
    seconds = now() - started
    if status == 200:
        await drv.admin_once("DELETE", "/v1/experiments/many-variants", timeout=30)
    if status not in (200, 400, 413, 422):
        return "20,000 variants: %s %s" % (status, str(answer)[:200])
    if seconds > 2:
        return "20,000 variants answered after %.1f s" % seconds
    return None


async def overlapping_layer(drv):
    """Two experiments of one layer may not share a range: the second is refused."""
    first = {"key": "bad-layer-a", "layer": "soak-bad", "layer_range": [0, 6000], "variants": [{"key": "a"}]}
    second = {"key": "bad-layer-b", "layer": "soak-bad", "layer_range": [5000, 10000], "variants": [{"key": "a"}]}
    try:
        problem = await _admin_json(drv, "PUT", "/v1/experiments/bad-layer-a", first, (200,))
        if problem:
            return problem
        problem = await _admin_json(drv, "PUT", "/v1/experiments/bad-layer-b", second, (409, 422))
        if problem:
            await drv.admin_once("DELETE", "/v1/experiments/bad-layer-b", timeout=10)
        return problem
    finally:
        await drv.admin_once("DELETE", "/v1/experiments/bad-layer-a", timeout=10)


async def bad_min_app_version(drv):
    tree = {"type": "screen", "children": [{"id": "x", "type": "text",
                                             "min_app_version": drv.rng.choice(["5.x", 5, "99999999999999999999999.0.0"])}]}
    return await _admin_json(drv, "PUT", "/v1/screens/bad-min-version", tree, (422,))


async def bad_names(drv):
    path = drv.rng.choice(["/v1/screens/UPPER", "/v1/screens/a%20b", "/v1/screens/" + "x" * 300,
                           "/v1/cohorts/Bad!", "/v1/screens/x/history"])
    method = "PUT" if "history" not in path else "PUT"
    status, answer = await drv.admin_once(method, path, body={"type": "screen"}, timeout=10)
    return None if status in (405, 422) else "%s %s: %s %s" % (method, path, status, str(answer)[:200])


async def deep_json(drv):
    body = b"[" * 100000 + b"]" * 100000
    status, answer = await drv.admin_once("PUT", "/v1/screens/deep", raw=body, timeout=10)
    return None if status in (400, 413, 422) else "100k-deep JSON: %s" % status


async def pipelined_admin(drv):
    request = ("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 200).encode()
    status, data, seconds = await raw_http(drv.hub.admin_port, request, timeout=10, read_all=False)
    return None if status == 200 else "pipelined: %s" % status


CLIENT_CASES = [garbage_bytes, tls_client_hello, bare_lf_upgrade, duplicate_ws_key, huge_header, slowloris,
                oversized_frame, oversized_fragments, unmasked_frame, reserved_bits, bad_opcode, invalid_utf8,
                bad_json, unknown_type, bad_message, before_hello, hello_timeout, bad_jwt, ping_flood,
                subscribe_flood, wrong_path_and_method]
ADMIN_CASES = [huge_ttl, bad_sync_bodies, duplicate_content_length, signed_content_length, bare_lf_admin,
               bad_json_body, wrong_admin_token, too_big_body, bad_weights, many_variants, overlapping_layer,
               bad_min_app_version, bad_names, deep_json, pipelined_admin]
# Heavier cases run less often.
WEIGHTS = {too_big_body: 0.2, many_variants: 0.2, deep_json: 0.3, slowloris: 0.3, hello_timeout: 0.3,
           ping_flood: 0.5, subscribe_flood: 0.5}
