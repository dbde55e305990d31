#!/usr/bin/env python3
"""Writes the seed corpus, Fuzz/corpus/<target>/seed-*, from the unit tests' golden inputs.

Each file is one input in the target's format (see its doc comment in Fuzz/FuzzTargets):
WebSocket and HTTP seeds start with a settings byte and a chunk-plan seed byte; the JSON pair
targets take two texts around a NUL; jwt a settings byte and a token; hub-options NUL-separated
arguments and PUSHHUB_ variables; component-schema a schema and a value around a NUL, or a
settings byte and a pattern and strings around NULs. Seeds are rewritten on each run; other files (crashes the
fuzzer found, kept as regression inputs) are left alone.

    python3 Fuzz/make-corpus.py
"""
import base64, hashlib, hmac, json, os, struct, sys, zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
JWT_SECRET = b"pushhub fuzz secret, 32 bytes ok"  # JWTFuzz.secret
KEY = bytes([0x37, 0xFA, 0x21, 0x3D])  # RFC 6455 §5.7's masking key


def write(target, name, data):
    if not data:
        return  # libFuzzer tries the empty input itself (and FoundationEssentials leaks reading an empty file)
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


# --- websocket: settings byte, chunk seed, frames -------------------------------------------

def frame(opcode, payload=b"", fin=True, rsv=0, mask=None, length=None):
    """One frame; `length` overrides the announced length (for malformed seeds)."""
    n = len(payload) if length is None else length
    out = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    bit = 0x80 if mask else 0
    if n < 126:
        out += bytes([bit | n])
    elif n <= 0xFFFF:
        out += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        out += bytes([bit | 127]) + struct.pack(">Q", n)
    if mask:
        out += mask
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return out + payload


def close(code, reason=b""):
    return struct.pack(">H", code) + reason


def websocket():
    # (name, frames as the client sends them; the server-role seed masks them)
    streams = [
        ("hello", [(1, b"Hello")]),  # RFC 6455 §5.7
        ("fragmented-hello", [(1, b"Hel", False), (0, b"lo")]),
        ("ping-pong", [(9, b"Hello"), (10, b"Hello")]),
        ("binary-256", [(2, b"\xab" * 256)]),
        ("binary-empty", [(2, b"")]),
        ("text-utf8", [(1, "κόσμε €😀".encode())]),
        ("text-utf8-split-over-fragments", [(1, "κό".encode()[:3], False), (0, "κό".encode()[3:])]),
        ("text-invalid-utf8", [(1, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited")]),
        ("text-overlong", [(1, b"\xc0\x80")]),
        ("ping-between-fragments", [(1, b"frag", False), (9, b"p"), (0, b"ment", False), (0, b"s")]),
        ("close-normal", [(8, close(1000, b"bye"))]),
        ("close-empty", [(8, b"")]),
        ("close-one-byte", [(8, b"\x03")]),
        ("close-invalid-code", [(8, close(999))]),
        ("close-reserved-code", [(8, close(1005))]),
        ("close-invalid-reason", [(8, close(1000, b"\xff"))]),
        ("continuation-first", [(0, b"x")]),
        ("text-during-fragments", [(1, b"a", False), (1, b"b")]),
        ("fragmented-ping", [(9, b"x", False)]),
        ("ping-126", [(9, b"x" * 126)]),
        ("many-fragments", [(2, b"a", False)] + [(0, b"b", False)] * 9 + [(0, b"c")]),
        ("then-close-then-data", [(1, b"a"), (8, close(1001)), (1, b"b")]),
    ]
    for name, frames in streams:
        for role, settings in (("server", 0), ("client", 1)):
            mask = KEY if role == "server" else None
            data = b"".join(frame(f[0], f[1], f[2] if len(f) > 2 else True, mask=mask) for f in frames)
            write("websocket", f"{name}-{role}", bytes([settings, 0]) + data)
            write("websocket", f"{name}-{role}-bytewise", bytes([settings | 8, 8]) + data)
    # Header-level violations and limits.
    write("websocket", "rsv1-without-extension", bytes([0, 0]) + frame(1, b"x", rsv=4, mask=KEY))
    write("websocket", "rsv1-negotiated", bytes([4, 3]) + frame(1, b"x", rsv=4, mask=KEY))
    # permessage-deflate (RFC 7692 §7.2.3): "Hello" compressed, in one frame and in two; the same
    # again with the context kept (a client reading a server that takes its context over);
    # RSV1 on a continuation; a small bomb (2,000 spaces) past the small limits' 1,000 bytes.
    hello = bytes.fromhex("f248cdc9c90700")
    write("websocket", "deflate-hello-server", bytes([4, 0]) + frame(1, hello, rsv=4, mask=KEY))
    write("websocket", "deflate-hello-fragmented-server",
          bytes([4 | 8, 5]) + frame(1, hello[:3], fin=False, rsv=4, mask=KEY) + frame(0, hello[3:], mask=KEY))
    write("websocket", "deflate-context-takeover-client",
          bytes([5, 0]) + frame(1, hello, rsv=4) + frame(1, bytes.fromhex("f200110000"), rsv=4))
    write("websocket", "deflate-rsv1-on-continuation-server",
          bytes([4, 0]) + frame(1, hello[:3], fin=False, rsv=4, mask=KEY) + frame(0, hello[3:], rsv=4, mask=KEY))
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    write("websocket", "deflate-bomb-small-limits-server",
          bytes([4 | 2, 0]) + frame(2, (bomb.compress(b" " * 2000) + bomb.flush(zlib.Z_SYNC_FLUSH))[:-4], rsv=4, mask=KEY))
    write("websocket", "reserved-opcode", bytes([0, 0]) + frame(3, b"", mask=KEY))
    write("websocket", "unmasked-to-server", bytes([0, 0]) + frame(1, b"Hello"))
    write("websocket", "masked-to-client", bytes([1, 0]) + frame(1, b"Hello", mask=KEY))
    write("websocket", "non-minimal-16", bytes([0, 0]) + bytes([0x82, 0xFE, 0, 5]) + KEY + b"\0" * 5)
    write("websocket", "non-minimal-64", bytes([1, 0]) + bytes([0x82, 0x7F]) + struct.pack(">Q", 200) + b"x" * 200)
    write("websocket", "length-high-bit", bytes([1, 0]) + bytes([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1]))
    write("websocket", "frame-over-small-limit", bytes([2, 5]) + frame(2, b"z" * 200, mask=KEY))
    write("websocket", "message-over-small-limit",
          bytes([2, 6]) + b"".join(frame(2 if i == 0 else 0, b"m" * 120, fin=i == 9, mask=KEY) for i in range(10)))
    write("websocket", "binary-64k-header", bytes([1, 0]) + bytes([0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]) + b"\xcd" * 64)


# --- http-request: settings byte, chunk seed, request bytes -----------------------------------

def http():
    requests = {
        "upgrade-pipelined": b"GET /v1/connect?token=a%20b&x=1 HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\n"
        b"Connection: keep-alive, Upgrade\r\n\r\nAFTER",  # RequestParserTests
        "websocket-handshake": b"GET /v1/connect HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        "post-body": b"POST /v1/syncs HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\nAuthorization: Bearer t\r\n\r\n"
        b'{"target":{"all":true}}',
        "two-requests": b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        "http10-keep-alive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "connection-close": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "leading-crlf": b"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "no-version": b"GET /\r\n\r\n",
        "no-colon": b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        "no-slash": b"GET nopath HTTP/1.1\r\nHost: x\r\n\r\n",
        "no-host": b"GET / HTTP/1.1\r\n\r\n",
        "bad-method": b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
        "bare-lf": b"GET /v1/connect HTTP/1.1\nHost: hub\n\n",
        "nul": b"GET / HTTP/1.1\r\nHost: x\0\r\n\r\n",
        "whitespace-values": b"GET /a?b=%zz&c&=d+e HTTP/1.1\r\nHost:   x \t\r\nX:\r\n\r\n",
        "two-content-lengths": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 30\r\n\r\nab",
        "big-header": b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 2000 + b"\r\n\r\n",
        # request smuggling (issue #24): what a strict parser refuses
        "bare-cr": b"GET / HTTP/1.1\r\nHost: x\r\nFoo: 1\rBar: 2\r\n\r\n",
        "obs-fold": b"POST / HTTP/1.1\r\nHost: x\r\nFoo: bar\r\n Content-Length: 38\r\n\r\n",
        "control-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\x7f\r\n\r\n",
        "space-before-colon": b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "te-and-cl": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
        "te-codings": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "two-hosts": b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "version-505": b"GET / HTTP/1.2\r\nHost: x\r\n\r\n",
        "absolute-form": b"GET http://x:80/v1/stats?a=1 HTTP/1.1\r\nHost: x\r\n\r\nGET HTTPS://y HTTP/1.1\r\nHost: y\r\n\r\n",
        "obs-text-value": b"GET / HTTP/1.1\r\nHost: [::1]:80\r\nX: caf\xc3\xa9\t\xff\r\n\r\n",
    }
    for i, (name, data) in enumerate(sorted(requests.items())):
        write("http-request", name, bytes([0, 0]) + data)
        write("http-request", name + "-split", bytes([i % 2, 1 + i * 37 % 255]) + data)


# --- JSON ------------------------------------------------------------------------------------

TREES = [  # JSONTests, JSONPatchDiffTests
    '{"type":"screen","children":[{"id":"a","n":-12.5e3,"s":"κόσμε"},[],{},""],"ok":false}',
    '{"b":1,"a":[true,null,"x\\"\\\\\\/\\u0001\\n"],"\\u20ac":2,"\\ud83d\\ude00":3,"\\u00e9":4}',
    '[0,-0,1,4.50,2e-3,1E30,333333333.33333329,1e21,1e20,0.0000001,-1.5e-7,9007199254740993,5e-324,'
    '1.7976931348623157e308]',
    '{"type":"screen","children":[{"id":"h","type":"header","title":"A"},'
    '{"id":"b","type":"list","items":[{"id":"x","label":"old"}]}]}',
    '[{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4}]',
    '{"a~b/c":1,"":{"":[]}}',
    '[1,2,3,4]',
    '"\\u00e9"',
]
REFUSED = ["", "{", "[1,]", '{"a":1,}', "01", "1.", "-", "NaN", "[1 2]", '"\x01"', '"\\x"', '{"a":1,"a":2}',
           '"\\ud800"', "true false", "1e400", "[" * 300 + "]" * 300]

DIFF_PAIRS = [  # JSONPatchDiffTests
    (TREES[3], TREES[3].replace('"old"', '"new"')),
    ('[{"id":"a"},{"id":"c"}]', '[{"id":"a"},{"id":"b"},{"id":"c"}]'),
    ('[{"id":"a"},{"id":"b"},{"id":"c"}]', '[{"id":"a"},{"id":"c"}]'),
    (TREES[4], '[{"id":"d","v":4},{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3}]'),
    (TREES[4], '[{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4},{"id":"a","v":1}]'),
    (TREES[4], '[{"id":"b","v":2},{"id":"a","v":9},{"id":"c","v":3},{"id":"d","v":4}]'),
    ('{"a":1,"b":2}', '{"b":3,"c":4}'),
    ('{"a":[1]}', '{"a":{"x":1}}'),
    ('{"a~b/c":1}', '{"a~b/c":2}'),
    ("[1,2,3,4]", "[1,2,9,3,4]"),
    ("[1,2,3,4]", "[1,4]"),
    ('{"s":"\\u00e9","k":[{"id":"\\u00e9"},{"id":"b"}]}', '{"s":"e\\u0301","k":[{"id":"e\\u0301"},{"id":"b"}]}'),
]

PATCHES = [  # RFC 6902 appendix A, JSONPatchDiffTests
    ('{"foo":"bar"}', '[{"op":"add","path":"/baz","value":"qux"}]'),
    ('{"foo":["bar","baz"]}', '[{"op":"add","path":"/foo/1","value":"qux"}]'),
    ('{"baz":"qux","foo":"bar"}', '[{"op":"remove","path":"/baz"}]'),
    ('{"foo":["bar","qux","baz"]}', '[{"op":"remove","path":"/foo/1"}]'),
    ('{"baz":"qux","foo":"bar"}', '[{"op":"replace","path":"/baz","value":"boo"}]'),
    ('{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}',
     '[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]'),
    ('{"foo":["all","grass","cows","eat"]}', '[{"op":"move","from":"/foo/1","path":"/foo/3"}]'),
    ('{"baz":"qux","foo":["a",2,"c"]}',
     '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]'),
    ('{"baz":"qux"}', '[{"op":"test","path":"/baz","value":"bar"}]'),
    ('{"foo":"bar"}', '[{"op":"add","path":"/child","value":{"grandchild":{}}}]'),
    ('{"foo":"bar"}', '[{"op":"add","path":"/baz/bat","value":"qux"}]'),
    ('{"/":9,"~1":10}', '[{"op":"test","path":"/~01","value":10}]'),
    ('{"foo":["bar"]}', '[{"op":"add","path":"/foo/-","value":["abc","def"]}]'),
    ('{"a":[1,2],"b":{"c":1}}',
     '[{"op":"add","path":"/a/-","value":3},{"op":"copy","from":"/b","path":"/d"},'
     '{"op":"move","from":"/a/0","path":"/b/e"},{"op":"test","path":"/a","value":[2,3]},'
     '{"op":"replace","path":"/b/c","value":null}]'),
    ('{"a":[1,2],"b":{"c":1}}', '[{"op":"move","from":"/b","path":"/b/c/d"}]'),
    ('{"a":[1,2]}', '[{"op":"add","path":"/a/01","value":1}]'),
    ('{"a":{"b":1}}', '[{"op":"copy","from":"","path":"/a/c"},{"op":"copy","from":"","path":"/a/c/a/d"}]'),
    ('{"a":1}', '[{"op":"remove","path":""}]'),
    ('{"a":1}', '[{"op":"bogus","path":"/a"}]'),
]

MERGES = [  # RFC 7386 appendix A: target, patch
    ('{"a":"b"}', '{"a":"c"}'), ('{"a":"b"}', '{"b":"c"}'), ('{"a":"b"}', '{"a":null}'),
    ('{"a":"b","b":"c"}', '{"a":null}'), ('{"a":["b"]}', '{"a":"c"}'), ('{"a":"c"}', '{"a":["b"]}'),
    ('{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}'), ('{"a":[{"b":"c"}]}', '{"a":[1]}'),
    ('["a","b"]', '["c","d"]'), ('{"a":"b"}', '["c"]'), ('{"a":"foo"}', 'null'), ('{"a":"foo"}', '"bar"'),
    ('{"e":null}', '{"a":1}'), ('[1,2]', '{"a":"b","c":null}'), ('{}', '{"a":{"bb":{"ccc":null}}}'),
]


def json_targets():
    for i, text in enumerate(TREES):
        write("json-reader", f"tree-{i}", text.encode())
    for i, text in enumerate(REFUSED):
        write("json-reader", f"refused-{i}", text.encode())
    for i, (a, b) in enumerate(DIFF_PAIRS):
        write("json-diff", f"pair-{i}", a.encode() + b"\0" + b.encode())
    for i, (doc, patch) in enumerate(PATCHES):
        write("json-patch", f"rfc6902-{i}", doc.encode() + b"\0" + patch.encode())
    for i, (target, patch) in enumerate(MERGES):
        write("merge-patch", f"rfc7386-{i}", target.encode() + b"\0" + patch.encode())
    # A few generated-mode inputs (no NUL, or not JSON): trees built from the bytes.
    for target in ("json-diff", "json-patch", "merge-patch"):
        for i, data in enumerate([bytes(range(1, 64)), bytes([6, 3, 0x11, 2, 6, 3, 0x12, 1, 5, 2]) * 4]):
            write(target, f"generated-{i}", data)


# --- jwt: settings byte (1 iss, 2 aud, 4 re-sign, 8 exp required), token --------------------------------------

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(header, claims, secret=JWT_SECRET, raw_header=None, raw_claims=None):
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    c = raw_claims if raw_claims is not None else json.dumps(claims, separators=(",", ":")).encode()
    signing_input = b64(h) + "." + b64(c)
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def jwt():
    hs = {"alg": "HS256", "typ": "JWT"}
    now = 1_700_000_000
    tokens = {
        "valid": (0, token(hs, {"sub": "u17", "cohorts": ["beta"], "exp": now + 3600})),
        "valid-iss-aud": (3, token(hs, {"sub": "u1", "iss": "hub", "aud": ["x", "clients"], "exp": now + 60})),
        "valid-no-exp": (0, token(hs, {"sub": "u1"})),
        "no-exp-required": (8, token(hs, {"sub": "u1"})),
        "expired": (0, token(hs, {"sub": "u1", "exp": now - 3600})),
        "within-leeway": (0, token(hs, {"sub": "u1", "exp": now - 10, "nbf": now + 10})),
        "not-yet-valid": (0, token(hs, {"sub": "u1", "nbf": now + 3600})),
        "wrong-issuer": (1, token(hs, {"sub": "u1", "iss": "other"})),
        "wrong-audience": (2, token(hs, {"sub": "u1", "aud": "other"})),
        "no-sub": (0, token(hs, {"exp": now + 60})),
        "empty-sub": (0, token(hs, {"sub": ""})),
        "cohorts-string": (0, token(hs, {"sub": "u1", "cohorts": "beta"})),
        "cohorts-mixed": (0, token(hs, {"sub": "u1", "cohorts": ["a", 1]})),
        "exp-string": (0, token(hs, {"sub": "u1", "exp": "soon"})),
        "exp-huge": (0, token(hs, {"sub": "u1", "exp": 1e308})),
        "crit": (0, token({"alg": "HS256", "crit": ["exp"]}, {"sub": "u1"})),
        "alg-none": (0, b64(b'{"alg":"none"}') + "." + b64(b'{"sub":"u1"}') + "."),
        "alg-hs512": (4, token({"alg": "HS512"}, {"sub": "u1"})),
        "other-secret": (0, token(hs, {"sub": "u1"}, secret=b"s3cret")),
        "header-not-json": (4, token(None, {"sub": "u1"}, raw_header=b"{alg}")),
        "payload-array": (4, token(hs, None, raw_claims=b'["sub"]')),
        "two-parts": (0, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9"),
        "rfc7515-a1": (4, "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
                          ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
                          ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "bad-base64": (0, "e$J.e$J.e$J"),
    }
    for name, (settings, text) in tokens.items():
        write("jwt", name, bytes([settings]) + text.encode())


# --- hub-options: NUL-separated arguments and PUSHHUB_ variables ------------------------------

def hub_options():
    vectors = {  # HubOptionsTests
        "precedence": ["--listen", "127.0.0.1:9000", "--echo-path=/echo", "--hello-timeout", "500ms",
                       "PUSHHUB_LISTEN=0.0.0.0:1", "PUSHHUB_ADMIN=127.0.0.1:9001", "PUSHHUB_DEV=1"],
        "none": [""],
        "production": ["--allow-anonymous", "--keep-versions", "4"],
        "every-flag": ["--listen=:0", "--admin", "127.0.0.1:0", "--data", "/tmp/d", "--loops", "256",
                       "--dev", "--jwt-issuer", "hub", "--jwt-audience=clients", "--handshake-timeout", "10s",
                       "--ping-interval=25s", "--idle-timeout", "1h", "--drain-timeout", "2m",
                       "--log-level", "debug", "-h"],
        "env-only": ["PUSHHUB_LOOPS=2", "PUSHHUB_KEEP_VERSIONS=1000", "PUSHHUB_LOG_LEVEL=warning",
                     "PUSHHUB_IDLE_TIMEOUT=90s", "PUSHHUB_ALLOW_ANONYMOUS=yes", "PUSHHUB_DATA=./x"],
        "missing-value": ["--listen"],
        "bad-address": ["--listen", "nowhere"],
        "zero-loops": ["--loops", "0"],
        "unknown": ["--bogus"],
        "echo-no-slash": ["--echo-path", "echo"],
        "duration-no-unit": ["--idle-timeout", "5"],
        "duration-overflow": ["--idle-timeout", "9223372036854775807h"],
        "config-file-missing": ["--config", "/nonexistent/hub.json"],
        "tls": ["--tls-cert=c.pem", "--tls-key", "k.pem"],
        "bad-level": ["PUSHHUB_LOG_LEVEL=loud"],
        "config-file": ['{"listen":"127.0.0.1:9000","keep_versions":4,"dev":true,"allowed_origins":["https://a"],'
                        '"idle_timeout":"90s","loops":2}', "--keep-versions", "8"],
        "config-file-env-wins": ['{"admin":"127.0.0.1:1","log_level":"debug"}', "PUSHHUB_ADMIN=127.0.0.1:2"],
        "config-unknown-key": ['{"keep_version":4}'],
        "config-bad-value": ['{"loops":1.5,"dev":null}'],
        "config-not-object": ['{"a"', "--dev"],
    }
    for name, parts in vectors.items():
        write("hub-options", name, b"\0".join(p.encode() for p in parts))


# --- component-schema: schema NUL value; or an even byte, pattern NUL strings; or an odd byte and bytes --

SCHEMA_PAIRS = [  # ComponentSchemaTests, TreeValidationTests
    ('{"type":"integer"}', '1.0'),
    ('{"type":["string","null"]}', '3'),
    ('{"properties":{"title":{"type":"string"},"count":{"type":"integer","minimum":0}}}', '{"title":7,"count":-1}'),
    ('{"properties":{"a/b":{"properties":{"c~d":{"items":{"properties":{"x":{"type":"boolean"}}}}}}}}',
     '{"a/b":{"c~d":[{"x":true},{"x":1},{"x":false},{"x":"no"}]}}'),
    ('{"required":["items","title"],"additionalProperties":false}', '{"colour":"red","type":"Text","v":1}'),
    ('{"properties":{"id":{"type":"string"}},"additionalProperties":{"type":"number"}}', '{"id":"x","a":"1"}'),
    ('{"enum":[1,"a",{"x":1,"y":[true,null]},[1,2],null,false]}', '{"y":[true,null],"x":1.0}'),
    ('{"const":{"b":1,"a":2}}', '{"a":2,"b":1}'),
    ('{"minimum":-1.5,"maximum":10}', '10.000001'),
    ('{"minLength":2,"maxLength":3}', '"e\\u0301e\\u0301"'),
    ('{"pattern":"^[a-z]+(-[a-z0-9]+)*$"}', '"carousel-2"'),
    ('{"items":false}', '[1]'),
    ('{"properties":{"z":{"const":1},"\\uFFFF":{"const":5}},"required":["\\uFFFF","a"],"additionalProperties":false}',
     '{"b":0,"z":1,"\\uFFFF":5,"\\ud83d\\ude00":0}'),
    ('{"type":"object","properties":{"text":{"type":"string","maxLength":80},"style":{"enum":["body","title"]}},'
     '"required":["text"],"additionalProperties":false}',
     '{"type":"Text","text":"hi","style":"title","min_app_version":"5.0.0","fallback":{"type":"Text","text":"x"}}'),
    ('{"oneOf":[]}', '1'),
    ('{"pattern":"(?=a)"}', '"a"'),
]

PATTERNS = [  # SchemaPatternTests: the pattern, then strings
    ["^#[0-9a-fA-F]{6}$", "#00ff7F", "#00ff7"],
    ["^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$", "a.b-c@x-y.org", "a@b.c"],
    ["\\bcat\\b", "a cat.", "concat"],
    ["^(a+)+$", "a" * 40 + "!"],
    ["(a|b)*a(a|b){12}$", "bbba" + "b" * 12],
    ["a.c", "a\u2028c", "a\U0001F600c"],
    ["\\uD83D\\uDE00|[\u00e9-\u00eb]", "\u00ea", "e\u0301"],
    ["(?<n>a)\\k<n>", "aa"],
    ["a{2,1}", "aa"],
    ["^[^]$|[]", "\n"],
    ["caf\u00e9", "caf\u00e9 cr\u00e8me", "cafe"],
]


def component_schema():
    for i, (schema, value) in enumerate(SCHEMA_PAIRS):
        write("component-schema", f"pair-{i}", schema.encode() + b"\0" + value.encode())
    for i, parts in enumerate(PATTERNS):
        write("component-schema", f"pattern-{i}", bytes([2]) + b"\0".join(p.encode() for p in parts))
    for i, data in enumerate([bytes(range(1, 64, 2)), bytes([0x41, 0x35, 0x21, 0x07, 0x33, 0x91, 0x4b]) * 6]):
        write("component-schema", f"generated-{i}", bytes([1]) + data)


if __name__ == "__main__":
    websocket()
    http()
    json_targets()
    jwt()
    hub_options()
    component_schema()
    for target in sorted(os.listdir(ROOT)):
        files = os.listdir(os.path.join(ROOT, target))
        size = sum(os.path.getsize(os.path.join(ROOT, target, f)) for f in files)
        print(f"{target}: {len(files)} files, {size} bytes", file=sys.stderr)
