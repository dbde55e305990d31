"""TLS on the hub's listeners (issue 11): checked with `openssl s_client`, Python's ssl module and
`websockets` over wss://, against a real hub with a certificate made by `openssl req` per test."""
import asyncio
import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest
import websockets

from admin import call, metric, publish
from conftest import BIN


def make_certificate(directory, name, common_name="localhost", names="DNS:localhost,IP:127.0.0.1"):
    """A self-signed certificate (for localhost and 127.0.0.1 unless `names` says otherwise):
    (cert path, key path)."""
    cert, key = os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=" + common_name,
                    "-addext", "subjectAltName=" + names], check=True, capture_output=True)
    return cert, key


def s_client(port, *options, stdin=b"", wait=0.0):
    """`openssl s_client` against the hub; its output (stdout and stderr). `wait` keeps the
    connection open that long (a TLS 1.3 ticket arrives after the handshake)."""
    process = subprocess.Popen(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, *options],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if wait:
        time.sleep(wait)
    out, _ = process.communicate(stdin, timeout=10)
    return out.decode(errors="replace")


def wss_context(cert):
    return ssl.create_default_context(cafile=cert)


@pytest.fixture
def tls_hub(hub_factory, tmp_path):
    cert, key = make_certificate(str(tmp_path), "client")
    hub = hub_factory("--dev", "--tls-cert", cert, "--tls-key", key, "--handshake-timeout", "1s")
    hub.cert, hub.key = cert, key
    return hub


def test_tls_versions_alpn_and_session_resumption(tls_hub, tmp_path):
    port, cert = tls_hub.port, tls_hub.cert
    out = s_client(port, "-CAfile", cert, "-alpn", "h2,http/1.1", "-servername", "localhost")
    assert "New, TLSv1.3" in out and "ALPN protocol: http/1.1" in out and "Verify return code: 0 (ok)" in out, out
    # A client offering only protocols the hub does not speak gets no ALPN answer, not a failure.
    out = s_client(port, "-CAfile", cert, "-alpn", "h2")
    assert "No ALPN negotiated" in out and "Verify return code: 0 (ok)" in out, out
    for old in ("-tls1", "-tls1_1"):
        out = s_client(port, old)
        assert "alert protocol version" in out or "no protocols available" in out, out
    # A TLS 1.3 ticket comes with the hub's first answer (TLSStream.ticketDue), so each client
    # asks for something and reads the answer to the end.
    request = b"GET /v1/client.js HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    for version in ("-tls1_2", "-tls1_3"):
        session = str(tmp_path / ("session%s.pem" % version))
        first = s_client(port, version, "-CAfile", cert, "-sess_out", session, "-ign_eof", stdin=request)
        assert "New, TLSv1." in first and "HTTP/1.1 200" in first, first
        again = s_client(port, version, "-CAfile", cert, "-sess_in", session, "-ign_eof", stdin=request)
        assert "Reused, TLSv1." in again, again
    assert metric(tls_hub, "pushhub_tls_resumed_total") >= 2
    assert metric(tls_hub, "pushhub_tls_failures_total") >= 2  # the TLS 1.0 and 1.1 attempts


def test_wss_clients_get_every_update_over_tls(tls_hub):
    """20 websockets clients over wss:// get the snapshot, two patches and a sync; the hub
    encodes each update once and encrypts it per connection."""
    rows = [{"id": "r%d" % i, "text": "row %d" % i} for i in range(30)]
    publish(tls_hub, "home", {"title": "one", "rows": rows})

    async def run():
        context = wss_context(tls_hub.cert)
        sockets = []
        for i in range(20):
            ws = await websockets.connect("wss://localhost:%d/v1/connect" % tls_hub.port, ssl=context,
                                          subprotocols=["pushhub.v1"])
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d-%d" % i}))
            assert json.loads(await ws.recv())["type"] == "welcome"
            await ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
            assert json.loads(await ws.recv())["version"] == 1
            sockets.append(ws)
        hashes = [publish(tls_hub, "home", {"title": title, "rows": rows})["hash"] for title in ("two", "three")]
        sync = call(tls_hub, "POST", "/v1/syncs", {"target": {"all": True}})[1]
        for ws in sockets:
            patches = [json.loads(await ws.recv()) for _ in range(2)]
            assert [(p["type"], p["version"], p["hash"]) for p in patches] == [("patch", 2, hashes[0]), ("patch", 3, hashes[1])]
            assert json.loads(await ws.recv())["id"] == sync["id"]
            await ws.close()
        return sockets[0].subprotocol

    assert asyncio.run(run()) == "pushhub.v1"
    assert metric(tls_hub, "pushhub_tls_handshakes_total") >= 20


def test_plain_http_on_a_tls_port_is_told_to_use_tls(tls_hub, hub_factory, tmp_path):
    with socket.create_connection(("127.0.0.1", tls_hub.port), timeout=5) as plain:
        plain.sendall(b"GET /v1/connect HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n")
        answer = plain.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 400") and "this port speaks TLS: use wss://" in answer, answer
    cert, key = make_certificate(str(tmp_path), "admin")
    hub = hub_factory("--admin-tls-cert", cert, "--admin-tls-key", key)
    with socket.create_connection(("127.0.0.1", hub.admin_port), timeout=5) as plain:
        plain.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert "use https://" in plain.recv(4096).decode()


def test_the_admin_listener_has_its_own_certificate(hub_factory, tmp_path):
    client_cert, client_key = make_certificate(str(tmp_path), "client", "client-side")
    admin_cert, admin_key = make_certificate(str(tmp_path), "admin", "admin-side")
    hub = hub_factory("--tls-cert", client_cert, "--tls-key", client_key,
                      "--admin-tls-cert", admin_cert, "--admin-tls-key", admin_key)
    assert "CN = admin-side" in s_client(hub.admin_port, "-CAfile", admin_cert)
    assert "CN = client-side" in s_client(hub.port, "-CAfile", client_cert)
    request = urllib.request.Request("https://localhost:%d/v1/stats" % hub.admin_port,
                                     headers={"Authorization": "Bearer " + hub.token})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=admin_cert), timeout=5) as answer:
        assert json.load(answer)["connections"] >= 1
    with pytest.raises(urllib.error.URLError):  # the client listener's certificate does not vouch for it
        urllib.request.urlopen(request, context=ssl.create_default_context(cafile=client_cert), timeout=5)


def test_sighup_reloads_the_certificate_and_open_connections_stay(tls_hub, tmp_path):
    publish(tls_hub, "home", {"title": "one", "rows": list(range(40))})

    async def run():
        ws = await websockets.connect("wss://localhost:%d/v1/connect" % tls_hub.port, ssl=wss_context(tls_hub.cert))
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d-old"}))
        await ws.recv()
        await ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
        await ws.recv()
        new_cert, new_key = make_certificate(str(tmp_path), "renewed", "renewed")
        os.replace(new_cert, tls_hub.cert)
        os.replace(new_key, tls_hub.key)
        tls_hub.process.send_signal(signal.SIGHUP)
        deadline = time.time() + 5
        while "CN = renewed" not in s_client(tls_hub.port):
            assert time.time() < deadline, "new connections still get the old certificate"
            time.sleep(0.1)
        publish(tls_hub, "home", {"title": "two", "rows": list(range(40))})
        update = json.loads(await asyncio.wait_for(ws.recv(), 5))
        await ws.close()
        return update

    assert asyncio.run(run())["version"] == 2  # the connection made with the old certificate goes on
    log = [json.loads(line) for line in open(tls_hub.log_path)]
    assert any(e.get("msg") == "SIGHUP: configuration reloaded" and "tls_cert" in e.get("changed", "") for e in log)


def test_sighup_reloads_both_listeners_certificates(hub_factory, tmp_path):
    """Issue 24 item 2: the log said admin_tls_cert changed while the admin listener kept its
    old certificate (the reload reached the client loops only)."""
    client_cert, client_key = make_certificate(str(tmp_path), "client", "client-old")
    admin_cert, admin_key = make_certificate(str(tmp_path), "admin", "admin-old")
    hub = hub_factory("--tls-cert", client_cert, "--tls-key", client_key,
                      "--admin-tls-cert", admin_cert, "--admin-tls-key", admin_key)
    assert "CN = admin-old" in s_client(hub.admin_port) and "CN = client-old" in s_client(hub.port)
    for name, cert, key in (("client-new", client_cert, client_key), ("admin-new", admin_cert, admin_key)):
        new_cert, new_key = make_certificate(str(tmp_path), name, name)
        os.replace(new_cert, cert)
        os.replace(new_key, key)
    hub.process.send_signal(signal.SIGHUP)
    deadline = time.time() + 5
    while "CN = client-new" not in s_client(hub.port):
        assert time.time() < deadline, "new client connections still get the old certificate"
        time.sleep(0.1)
    while "CN = admin-new" not in s_client(hub.admin_port):
        assert time.time() < deadline, "new admin connections still get the old certificate"
        time.sleep(0.1)
    request = urllib.request.Request("https://localhost:%d/v1/stats" % hub.admin_port,
                                     headers={"Authorization": "Bearer " + hub.token})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=admin_cert), timeout=5) as answer:
        assert json.load(answer)["connections"] >= 1


def test_a_silent_or_stalled_handshake_times_out(tls_hub):
    for first in (b"", b"\x16\x03\x01\x00\xc8\x01"):  # nothing, then a ClientHello cut short
        with socket.create_connection(("127.0.0.1", tls_hub.port), timeout=5) as raw:
            raw.sendall(first)
            started = time.time()
            assert raw.recv(100) == b""  # closed by the hub
            assert 0.5 < time.time() - started < 3.5


def test_bad_tls_settings_are_refused_naming_the_file(tmp_path):
    cert, key = make_certificate(str(tmp_path), "one")
    other_cert, other_key = make_certificate(str(tmp_path), "two")
    pushhub = os.path.join(BIN, "pushhub")
    cases = [
        (["--tls-cert", cert], "--tls-cert needs --tls-key"),
        (["--tls-cert", cert, "--tls-key", other_key], "does not match certificate"),
        (["--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", key], "missing.pem"),
        (["--admin-tls-key", key], "--admin-tls-key needs --admin-tls-cert"),
    ]
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    for flags, message in cases:
        result = subprocess.run([pushhub, "--check-config", str(empty), *flags], capture_output=True, text=True)
        assert result.returncode == 2 and message in result.stderr, (flags, result.stderr)
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"tls_cert": cert, "tls_key": key}))
    result = subprocess.run([pushhub, "--check-config", str(config)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_hubctl_speaks_https_and_watch_wss(hub_factory, tmp_path):
    """hubctl with --url https://…: the system's CAs by default (a self-signed certificate is
    refused, saying what to do), --cacert FILE, or --insecure; watch follows the hub's client
    listener onto wss:// (the scheme comes from /v1/stats)."""
    cert, key = make_certificate(str(tmp_path), "hub")
    hub = hub_factory("--dev", "--tls-cert", cert, "--tls-key", key, "--admin-tls-cert", cert, "--admin-tls-key", key)
    publish_body = tmp_path / "home.json"
    publish_body.write_text(json.dumps({"title": "over tls", "rows": list(range(30))}))
    env = {**os.environ, "HUBCTL_TOKEN": hub.token}
    hubctl = os.path.join(BIN, "hubctl")
    url = "https://localhost:%d" % hub.admin_port

    def run(*args):
        return subprocess.run([hubctl, "--url", url, *args], capture_output=True, text=True, env=env, timeout=30)

    refused = run("status")
    assert refused.returncode == 3 and "not trusted" in refused.stderr and "--cacert" in refused.stderr, refused.stderr
    assert run("--cacert", cert, "screen", "publish", "home", str(publish_body)).returncode == 0
    assert run("--insecure", "status").returncode == 0
    assert subprocess.run([hubctl, "--url", url, "status"], capture_output=True, text=True, timeout=30,
                          env={**env, "HUBCTL_CACERT": cert}).returncode == 0
    watched = run("--cacert", cert, "watch", "home", "--count", "1")
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.startswith("snapshot home v1") and json.loads(watched.stdout.splitlines()[1])["title"] == "over tls"


def test_a_certificate_for_another_name_is_refused(hub_factory, tmp_path):
    cert, key = make_certificate(str(tmp_path), "elsewhere", "elsewhere", names="DNS:elsewhere.example")
    hub = hub_factory("--admin-tls-cert", cert, "--admin-tls-key", key)
    for host in ("localhost", "127.0.0.1"):
        answer = subprocess.run([os.path.join(BIN, "hubctl"), "--url", "https://%s:%d" % (host, hub.admin_port),
                                 "--cacert", cert, "--token", hub.token, "status"],
                                capture_output=True, text=True, timeout=30)
        assert answer.returncode == 3 and "not trusted" in answer.stderr and "mismatch" in answer.stderr, answer.stderr


def spki_hash(cert):
    """base64 SHA-256 of the certificate's public key: what Chromium's
    --ignore-certificate-errors-spki-list trusts (the test's CA, without a system store)."""
    key = subprocess.run(["openssl", "x509", "-pubkey", "-noout", "-in", cert], capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=key, capture_output=True, check=True).stdout
    import base64
    import hashlib
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def test_chromium_runs_the_demo_page_over_https_and_wss(tls_hub):
    from chromium import browser_or_skip
    publish(tls_hub, "home", {"type": "screen", "title": "Over TLS",
                              "children": [{"id": "t", "type": "text", "text": "served over wss"}]})
    browser = browser_or_skip("the wss:// demo page test",
                              flags=["--ignore-certificate-errors-spki-list=" + spki_hash(tls_hub.cert)])
    try:
        browser.call("Page.navigate", url="https://localhost:%d/" % tls_hub.port)
        browser.wait_for("document.body && document.body.innerText.includes('served over wss')", what="the tree over wss")
        assert browser.evaluate("demo.hub.state") == "live"
        assert browser.evaluate("demo.hub.url").startswith("wss://localhost:")
        assert browser.evaluate("location.protocol") == "https:"
        publish(tls_hub, "home", {"type": "screen", "title": "Over TLS",
                                  "children": [{"id": "t", "type": "text", "text": "patched over wss"}]})
        browser.wait_for("document.body.innerText.includes('patched over wss')", what="the patch over wss")
        assert not browser.console, browser.console
    finally:
        browser.close()


def certificate_serial(pem_text):
    return subprocess.run(["openssl", "x509", "-noout", "-serial"], input=pem_text.encode(), capture_output=True,
                          check=True).stdout.decode().strip()


def test_a_certificate_swapped_under_1000_clients_drops_none(tls_hub, tmp_path):
    """SIGHUP with 1,000 wss:// clients connected: every one of them still gets a sync after the
    reload, and a new connection is served the new certificate (its serial)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:  # 1,000 sockets here
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))

    async def run():
        context = wss_context(tls_hub.cert)
        limit = asyncio.Semaphore(50)

        async def connect(i):
            async with limit:
                ws = await websockets.connect("wss://localhost:%d/v1/connect" % tls_hub.port, ssl=context,
                                              open_timeout=30)
                await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d-%d" % i}))
                assert json.loads(await ws.recv())["type"] == "welcome"
                return ws

        sockets = await asyncio.gather(*(connect(i) for i in range(1000)))
        new_cert, new_key = make_certificate(str(tmp_path), "swapped", "swapped")
        os.replace(new_cert, tls_hub.cert)
        os.replace(new_key, tls_hub.key)
        tls_hub.process.send_signal(signal.SIGHUP)
        expected = certificate_serial(open(tls_hub.cert).read())
        deadline = time.time() + 5
        while True:
            served = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % tls_hub.port],
                                    input=b"", capture_output=True).stdout.decode(errors="replace")
            start = served.find("-----BEGIN CERTIFICATE-----")
            end = served.find("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")
            if certificate_serial(served[start:end]) == expected:
                break
            assert time.time() < deadline, "new connections still get the old certificate"
            await asyncio.sleep(0.1)
        sync = await asyncio.to_thread(call, tls_hub, "POST", "/v1/syncs", {"target": {"all": True}})
        assert sync[1]["targeted_online"] == 1000, sync

        async def receives(ws):
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            await ws.close()
            return message.get("id")

        return sync[1]["id"], await asyncio.gather(*(receives(ws) for ws in sockets))

    sync_id, received = asyncio.run(run())
    assert received == [sync_id] * 1000
