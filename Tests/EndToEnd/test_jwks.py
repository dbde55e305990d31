"""Client tokens signed with public keys, end to end (DESIGN §18): PyJWT and `cryptography` mint
RS256, ES256 and EdDSA tokens whose keys a local JWKS endpoint (`jwks_server.py`) publishes; the
hub fetches it over its HTTP/1.1 client. Each key signs in; a rotated-in key is fetched once; a
burst of unknown kids fetches at most once per 10 s; with the endpoint down, kept keys still
verify, also after a restart (from jwks.json); the known attacks are refused."""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import time

import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from websockets.asyncio.client import connect as connect_async
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from admin import call
from conftest import BIN
from jwks_server import JWKSServer, SigningKey


def claims(user="u1", lifetime=3600, **extra):
    return {"sub": user, "exp": int(time.time()) + lifetime, **extra}


def hello(hub, token, timeout=5):
    """(the socket, the hub's first answer) for a hello with `token` (sync client)."""
    ws = connect(hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token, "device": "d-1"}))
    return ws, json.loads(ws.recv(timeout=timeout))


def refused(hub, token, says=None):
    """Asserts the hub answers `unauthorized` (naming `says`) and closes with 1008."""
    ws, answer = hello(hub, token)
    assert answer["type"] == "error" and answer["code"] == "unauthorized", answer
    if says:
        assert says in answer["message"], answer
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=5)
    assert closed.value.rcvd.code == 1008
    return answer["message"]


def signed_in(hub, token, user="u1"):
    ws, answer = hello(hub, token)
    assert answer["type"] == "welcome" and answer["user"] == user, answer
    ws.close()


def metrics(hub):
    """{"name{labels}": value} of /metrics."""
    status, text = call(hub, "GET", "/metrics")
    assert status == 200, text
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def log_lines(hub, message):
    return [json.loads(line) for line in open(hub.log_path) if json.loads(line).get("msg") == message]


@pytest.fixture
def idp():
    server = JWKSServer([SigningKey("rsa", "r1"), SigningKey("p256", "e1"), SigningKey("ed25519", "o1")])
    yield server
    server.stop()


@pytest.fixture
def jwks_hub(hub_factory, idp):
    hub = hub_factory("--jwt-jwks", idp.url, "--hello-timeout", "5s")
    idp.wait_for_fetches(1)
    wait_for_metric(hub, 'pushhub_jwks_keys', 3)
    return hub


def wait_for_metric(hub, name, value, timeout=10):
    deadline = time.time() + timeout
    while metrics(hub).get(name) != value:
        assert time.time() < deadline, "%s never became %s: %s" % (name, value, metrics(hub).get(name))
        time.sleep(0.05)


def test_rs256_es256_and_eddsa_tokens_from_the_jwks_sign_in(jwks_hub, idp):
    for kid in ("r1", "e1", "o1"):
        signed_in(jwks_hub, idp.keys[kid].sign(claims("u-" + kid)), "u-" + kid)
        # Without a kid, every key of the token's algorithm is tried.
        signed_in(jwks_hub, idp.keys[kid].sign(claims("v-" + kid), kid=False), "v-" + kid)
    # The hub's own HS256 secret still signs in beside them (hubctl token).
    secret = open(os.path.join(jwks_hub.data, "data", "jwt.secret")).read().strip()
    signed_in(jwks_hub, jwt.encode(claims("hs"), secret, algorithm="HS256"), "hs")
    values = metrics(jwks_hub)
    assert values['pushhub_jwks_fetches_total{outcome="ok"}'] == 1 and values["pushhub_jwks_keys"] == 3


def test_the_claims_checks_apply_to_every_algorithm(hub_factory, idp):
    hub = hub_factory("--jwt-jwks", idp.url, "--jwt-issuer", "https://idp.test/", "--jwt-audience", "hub")
    idp.wait_for_fetches(1)
    wait_for_metric(hub, "pushhub_jwks_keys", 3)
    for kid in ("r1", "e1", "o1"):
        key = idp.keys[kid]
        signed_in(hub, key.sign(claims(iss="https://idp.test/", aud=["api", "hub"])))
        refused(hub, key.sign(claims(iss="https://evil.test/", aud="hub")), "issuer")
        refused(hub, key.sign(claims(iss="https://idp.test/", aud="api")), "audience")
        refused(hub, key.sign(claims(lifetime=-3600, iss="https://idp.test/", aud="hub")), "expired")
        refused(hub, key.sign({"sub": "u1", "iss": "https://idp.test/", "aud": "hub"}), "exp")
        early = claims(iss="https://idp.test/", aud="hub", nbf=int(time.time()) + 3600)
        refused(hub, key.sign(early), "not valid yet")


def test_a_rotated_in_key_is_fetched_once(jwks_hub, idp):
    time.sleep(10.2)  # the start's fetch is more than 10 s old: an unknown kid may fetch at once
    before = idp.count()
    new = SigningKey("p256", "e2")
    idp.rotate(new)
    for n in range(5):
        signed_in(jwks_hub, new.sign(claims("u%d" % n)), "u%d" % n)
    assert idp.count() - before == 1, "the new kid was fetched %d times" % (idp.count() - before)
    wait_for_metric(jwks_hub, "pushhub_jwks_keys", 4)


def test_a_burst_of_unknown_kids_fetches_at_most_once_per_10_s(jwks_hub, idp):
    """50 hellos at once (asyncio clients) whose tokens name kids nobody published: one fetch,
    every one refused naming its kid; the same burst again within 10 s fetches nothing."""
    time.sleep(10.2)
    attacker = SigningKey("rsa", "x")

    async def burst(tag):
        async def one(n):
            kid = "%s-%d" % (tag, n)
            async with connect_async(jwks_hub.url + "/v1/connect") as ws:
                token = jwt.encode(claims(), attacker.private, algorithm="RS256", headers={"kid": kid})
                await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
                answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert answer["code"] == "unauthorized" and ('"%s"' % kid) in answer["message"], answer
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 5)
        await asyncio.gather(*(one(n) for n in range(50)))

    start = time.time()
    before = idp.count()
    asyncio.run(burst("a"))
    assert idp.count() - before == 1
    asyncio.run(burst("b"))
    assert time.time() - start < 10
    assert idp.count() - before == 1, "a second burst within 10 s fetched again"
    assert metrics(jwks_hub)['pushhub_jwt_refused_total{reason="unknown_kid"}'] == 100


def test_keys_in_use_stay_while_the_endpoint_is_down_or_answers_garbage(jwks_hub, idp):
    idp.answer = (200, b"<html>maintenance</html>")
    time.sleep(10.2)
    # An unknown kid makes the hub ask; the garbage answer changes nothing.
    refused(jwks_hub, SigningKey("rsa", "zz").sign(claims()), 'no key with kid "zz"')
    signed_in(jwks_hub, idp.keys["r1"].sign(claims()))
    idp.answer = (503, b"{}")
    idp.down()
    for kid in ("r1", "e1", "o1"):
        signed_in(jwks_hub, idp.keys[kid].sign(claims()))
    values = metrics(jwks_hub)
    assert values["pushhub_jwks_keys"] == 3 and values['pushhub_jwks_fetches_total{outcome="failed"}'] >= 1
    assert log_lines(jwks_hub, "the JWKS could not be fetched; the keys in use stay")


def test_a_restart_while_the_endpoint_is_down_verifies_from_jwks_json(hub_factory, idp):
    hub = hub_factory("--jwt-jwks", idp.url)
    idp.wait_for_fetches(1)
    wait_for_metric(hub, "pushhub_jwks_keys", 3)
    kept = json.load(open(os.path.join(hub.data, "data", "jwks.json")))
    assert kept["url"].endswith("/jwks.json") and len(kept["jwks"]["keys"]) == 3
    idp.down()
    hub.stop()
    again = hub_factory("--jwt-jwks", idp.url, data=hub.data)
    assert log_lines(again, "JWKS keys restored from disk")
    for kid in ("r1", "e1", "o1"):
        signed_in(again, idp.keys[kid].sign(claims()))
    # It starts all the same, says it could not fetch, and retries (1 s, 2 s, …).
    deadline = time.time() + 5
    while len(log_lines(again, "the JWKS could not be fetched; the keys in use stay")) < 2:
        assert time.time() < deadline, open(again.log_path).read()
        time.sleep(0.1)


def test_a_hub_whose_jwks_is_down_at_start_serves_and_takes_the_keys_once_it_answers(hub_factory, idp):
    idp.down()
    hub = hub_factory("--jwt-jwks", idp.url)
    refused(hub, idp.keys["r1"].sign(claims()), 'no key with kid "r1"')
    idp.up()
    wait_for_metric(hub, "pushhub_jwks_keys", 3, timeout=15)
    signed_in(hub, idp.keys["r1"].sign(claims()))


def test_public_key_files_verify_tokens_without_kid(hub_factory, tmp_path):
    keys = [SigningKey("rsa", "-"), SigningKey("p256", "-"), SigningKey("ed25519", "-")]
    flags = []
    for n, key in enumerate(keys):
        path = tmp_path / ("key%d.pem" % n)
        path.write_bytes(key.public_pem())
        flags += ["--jwt-public-key", str(path)]
    hub = hub_factory(*flags)
    for key in keys:
        signed_in(hub, key.sign(claims(), kid=False))
    refused(hub, SigningKey("rsa", "-").sign(claims(), kid=False), "does not verify")
    refused(hub, SigningKey("rsa", "k9").sign(claims()), 'no key with kid "k9"')


def test_the_hub_refuses_to_start_with_a_cleartext_jwks_url_off_loopback_or_a_bad_key_file(tmp_path):
    def start(*flags):
        return subprocess.run([os.path.join(BIN, "pushhub"), "--data", str(tmp_path / "d"), *flags],
                              capture_output=True, text=True, timeout=20)
    run = start("--jwt-jwks", "http://10.0.0.1/jwks.json")
    assert run.returncode == 2 and "--jwt-jwks wants an https:// URL" in run.stderr, run.stderr
    private = tmp_path / "private.pem"
    private.write_bytes(SigningKey("p256", "-").private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    run = start("--jwt-public-key", str(private))
    assert run.returncode == 2 and "is a private key" in run.stderr, run.stderr
    short = tmp_path / "short.pem"
    short.write_bytes(SigningKey("rsa1024", "-").public_pem())
    run = start("--jwt-public-key", str(short))
    assert run.returncode == 2 and "an RSA key of 1024 bits" in run.stderr, run.stderr


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_attacks_are_refused_end_to_end(jwks_hub, idp, tmp_path):
    rsa_key = idp.keys["r1"]
    payload = b64(json.dumps(claims("admin")).encode())

    def forge(header, signature):
        return b64(json.dumps(header).encode()) + "." + payload + "." + b64(signature)

    pem = rsa_key.public_pem()
    for header in ({"alg": "HS256"}, {"alg": "HS256", "kid": "r1"}):
        signing_input = (b64(json.dumps(header).encode()) + "." + payload).encode()
        token = forge(header, hmac.new(pem, signing_input, hashlib.sha256).digest())
        refused(jwks_hub, token)
    assert "names a key for RS256" in refused(
        jwks_hub, forge({"alg": "HS256", "kid": "r1"}, hmac.new(pem, b"x", hashlib.sha256).digest()))
    refused(jwks_hub, forge({"alg": "none"}, b""), "this hub accepts HS256, RS256, ES256 and EdDSA")
    # ES256 with OpenSSL's DER signature instead of r‖s, and the all-zero "psychic" signature.
    header = {"alg": "ES256", "kid": "e1"}
    signing_input = (b64(json.dumps(header).encode()) + "." + payload).encode()
    der = idp.keys["e1"].private.sign(signing_input, ec.ECDSA(hashes.SHA256()))
    refused(jwks_hub, forge(header, der), "64 bytes")
    refused(jwks_hub, forge(header, bytes(64)), "does not verify")
    # A token that brings its own key (jwk, jku), signed with it.
    attacker = SigningKey("rsa", "r1")
    embedded = jwt.encode(claims("admin"), attacker.private, algorithm="RS256",
                          headers={"kid": "r1", "jwk": attacker.jwk(), "jku": "http://127.0.0.1:1/jwks.json"})
    refused(jwks_hub, embedded, "does not verify")
    # A kid naming a key of another kind; kid injection.
    refused(jwks_hub, jwt.encode(claims(), idp.keys["e1"].private, algorithm="ES256", headers={"kid": "r1"}),
            "names a key for RS256")
    refused(jwks_hub, jwt.encode(claims(), idp.keys["r1"].private, algorithm="RS256",
                                 headers={"kid": "../../etc/passwd"}), 'no key with kid "../../etc/passwd"')
    refused(jwks_hub, jwt.encode(claims(), idp.keys["r1"].private, algorithm="RS256",
                                 headers={"kid": "r1\n"}), "kid header")
    refused(jwks_hub, jwt.encode(claims(), idp.keys["r1"].private, algorithm="RS256",
                                 headers={"kid": "k" * 5000}), "kid header")
    # A tampered payload under a good signature, with each algorithm.
    for kid in ("r1", "e1", "o1"):
        head, _, signature = idp.keys[kid].sign(claims("u1")).split(".")
        refused(jwks_hub, head + "." + payload + "." + signature, "does not verify")
    # Nothing above made the hub fetch a URL a token named.
    assert not re.search(r"127\.0\.0\.1:1\b", open(jwks_hub.log_path).read())


def test_keys_the_jwks_must_not_give_are_left_out_with_a_log_line(hub_factory):
    private_published = SigningKey("p256", "leaked")
    idp = JWKSServer([SigningKey("rsa", "ok"), SigningKey("rsa1024", "short"), SigningKey("p384", "p384"),
                      private_published])
    try:
        original = idp.document

        def with_private():
            document = json.loads(original())
            for key in document["keys"]:
                if key["kid"] == "leaked":
                    key["d"] = b64(private_published.private.private_numbers().private_value.to_bytes(32, "big"))
            return json.dumps(document).encode()
        idp.document = with_private
        hub = hub_factory("--jwt-jwks", idp.url)
        wait_for_metric(hub, "pushhub_jwks_keys", 1)
        notes = " ".join(line["key"] for line in log_lines(hub, "a JWKS key was left out"))
        for kid, why in (("short", "1024 bits"), ("p384", "ES384"), ("leaked", "private key")):
            assert ('kid "%s"' % kid) in notes and why in notes, notes
        refused(hub, private_published.sign(claims()), 'no key with kid "leaked"')
        signed_in(hub, idp.keys["ok"].sign(claims()))
    finally:
        idp.stop()
