"""HTTP fetch on the client listener (issue 13 item 3, DESIGN §12): GET /v1/screens/{name} answers
the tree that client would receive — variants and capability filter included — with an ETag of
its hash; If-None-Match gives 304; a client without credentials gets 401."""
import hashlib
import json
import os
import time
import urllib.error
import urllib.request

import jwt
import rfc8785

from admin import call
from chromium import CLIENT_DIR, client_bundle


def fetch(hub, path, headers=None):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (hub.port, path), headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_fetch_answers_the_clients_tree_with_an_etag_and_304(hub_factory):
    hub = hub_factory()
    secret = open(os.path.join(hub.data, "data", "jwt.secret")).read().strip()
    tree = {"type": "screen", "title": "base",
            "children": [{"key": "new", "type": "text", "text": "6+", "min_app_version": "6.0.0"}]}
    assert call(hub, "PUT", "/v1/screens/home", tree)[0] == 200
    experiment = {"key": "look", "status": "running", "variants": [{"key": "A"}, {"key": "B"}],
                  "screens": {"home": {"A": {"title": "A"}, "B": {"title": "B"}}}}
    assert call(hub, "PUT", "/v1/experiments/look", experiment)[0] == 200
    status, headers, body = fetch(hub, "/v1/screens/home")
    assert status == 401 and headers.get("WWW-Authenticate") == "Bearer", (status, body)
    for user in ("u1", "u2", "u3"):
        token = jwt.encode({"sub": user, "exp": int(time.time()) + 600}, secret, algorithm="HS256")
        status, headers, body = fetch(hub, "/v1/screens/home?platform=ios&app_version=5.0.0",
                                      {"Authorization": "Bearer " + token})
        assert status == 200, body
        answer = json.loads(body)
        variant = call(hub, "GET", "/v1/experiments/look/assignment?unit=" + user)[1]["variant"]
        assert answer["tree"]["title"] == variant and answer["tree"]["children"] == [], answer
        # In a variant: the ETag names the tree and the variants (docs/protocol.md "HTTP fetch").
        digest = hashlib.sha256(rfc8785.dumps(answer["variants"])).hexdigest()[:16]
        assert answer["variants"] == {"look": variant}
        assert headers["ETag"] == '"%s.%s"' % (answer["hash"], digest) and headers["Cache-Control"] == "no-cache"
        admin_view = call(hub, "GET", "/v1/screens/home?user=%s&platform=ios&app_version=5.0.0" % user)[1]
        assert admin_view["hash"] == answer["hash"]
        etag = headers["ETag"]
        status, headers, body = fetch(hub, "/v1/screens/home?platform=ios&app_version=5.0.0&token=" + token,
                                      {"If-None-Match": etag})
        assert status == 304 and body == b"" and "Content-Length" not in headers, (status, headers)
        status, _, _ = fetch(hub, "/v1/screens/home?app_version=6.1.0&token=" + token,
                             {"If-None-Match": etag})
        assert status == 200  # another app version, another tree
    assert fetch(hub, "/v1/screens/nope?token=" + token)[0] == 404


def test_fetch_by_device_where_anonymous_clients_are_allowed(hub_factory):
    hub = hub_factory("--dev")
    assert call(hub, "PUT", "/v1/screens/home", {"type": "screen"})[0] == 200
    status, _, body = fetch(hub, "/v1/screens/home?device=widget-1")
    assert status == 200 and json.loads(body)["tree"] == {"type": "screen"}
    assert fetch(hub, "/v1/screens/home")[0] == 401  # no device, no token


def test_the_client_module_is_served_with_an_etag_and_cors(hub_factory):
    """Issue 13 item 1 (hub side): /v1/client.js and its .d.ts from the build, with an ETag of
    the content (304 on If-None-Match), no-cache, and CORS: * without allowed origins, the
    page's origin when it is allowed."""
    hub = hub_factory()
    status, headers, body = fetch(hub, "/v1/client.js")
    assert status == 200 and body == client_bundle(), "the hub serves another module than clients/js/src bundled"
    assert headers["Content-Type"].startswith("text/javascript") and headers["Access-Control-Allow-Origin"] == "*"
    assert headers["Cache-Control"] == "no-cache"
    status, _, body = fetch(hub, "/v1/client.js", {"If-None-Match": headers["ETag"]})
    assert status == 304 and body == b""
    types = fetch(hub, "/v1/client.d.ts")
    assert types[0] == 200 and types[2] == open(os.path.join(CLIENT_DIR, "pushhub-client.d.ts"), "rb").read()
    # The screen renderer the demo page and the console draw with, for apps' web views too.
    status, headers, body = fetch(hub, "/v1/screen-render.js")
    assert status == 200 and body == open(os.path.join(CLIENT_DIR, "screen-render.js"), "rb").read()
    assert headers["Content-Type"].startswith("text/javascript") and headers["ETag"]
    status, headers, body = fetch(hub, "/v1/screen-render.css")
    assert status == 200 and body == open(os.path.join(CLIENT_DIR, "screen-render.css"), "rb").read()
    assert headers["Content-Type"].startswith("text/css")
    strict = hub_factory("--allowed-origins", "https://app.example.com")
    _, headers, _ = fetch(strict, "/v1/client.js", {"Origin": "https://app.example.com"})
    assert headers["Access-Control-Allow-Origin"] == "https://app.example.com" and "Origin" in headers["Vary"]
    _, headers, _ = fetch(strict, "/v1/client.js", {"Origin": "https://evil.example.net"})
    assert "Access-Control-Allow-Origin" not in headers


def test_fetch_allows_pages_on_other_origins(hub_factory):
    """CORS for the fetch (a token in Authorization and If-None-Match need a preflight): the
    preflight allows GET with those headers; every answer carries the origin policy."""
    hub = hub_factory("--dev")
    assert call(hub, "PUT", "/v1/screens/home", {"type": "screen"})[0] == 200
    request = urllib.request.Request("http://127.0.0.1:%d/v1/screens/home" % hub.port, method="OPTIONS",
                                     headers={"Origin": "https://page.example", "Access-Control-Request-Method": "GET",
                                              "Access-Control-Request-Headers": "authorization, if-none-match"})
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 204
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert "Authorization" in response.headers["Access-Control-Allow-Headers"]
        assert "If-None-Match" in response.headers["Access-Control-Allow-Headers"]
    for path in ("/v1/screens/home?device=d", "/v1/screens/nope?device=d"):
        _, headers, _ = fetch(hub, path, {"Origin": "https://page.example"})
        assert headers["Access-Control-Allow-Origin"] == "*", path
    strict = hub_factory("--dev", "--allowed-origins", "https://app.example.com")
    assert call(strict, "PUT", "/v1/screens/home", {"type": "screen"})[0] == 200
    _, headers, _ = fetch(strict, "/v1/screens/home?device=d", {"Origin": "https://app.example.com"})
    assert headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    _, headers, _ = fetch(strict, "/v1/screens/home?device=d", {"Origin": "https://evil.example.net"})
    assert "Access-Control-Allow-Origin" not in headers
