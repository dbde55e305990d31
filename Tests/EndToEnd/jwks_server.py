"""A stand-in identity provider (DESIGN §18): signing keys made with `cryptography`, tokens signed
by PyJWT, and a JWKS served over HTTP/1.1 on loopback by a threaded `http.server`, which counts
every fetch and can be scripted.

    idp = JWKSServer([SigningKey("rsa", "r1"), SigningKey("p256", "e1")], max_age=3600)
    hub = hub_factory("--jwt-jwks", idp.url)
    token = idp.keys["r1"].sign({"sub": "u1", "exp": …})
    idp.rotate(SigningKey("ed25519", "o1"))       # publishes one more key
    idp.down() / idp.up()                          # connection refused, then serving again
    idp.fetches                                    # times (time.time()) of every GET of the JWKS
    idp.stop()

`answer` scripts what every GET gets instead of the JWKS (a status and a body: `(503, b"…")`),
None for the JWKS. The JWKS answer carries `Cache-Control: public, max-age=<max_age>` and an
`ETag`; `If-None-Match` with the current ETag is answered 304."""
import hashlib
import http.server
import json
import socket
import threading
import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from jwt.utils import base64url_encode

ALGORITHMS = {"rsa": "RS256", "p256": "ES256", "ed25519": "EdDSA"}


class SigningKey:
    """A provider's signing key: `kind` is "rsa" (2048 bits), "p256" or "ed25519" (or "rsa1024",
    "p384" for keys a hub must refuse)."""

    def __init__(self, kind, kid):
        self.kind, self.kid = kind, kid
        if kind.startswith("rsa"):
            self.private = rsa.generate_private_key(65537, 1024 if kind == "rsa1024" else 2048)
        elif kind == "p256":
            self.private = ec.generate_private_key(ec.SECP256R1())
        elif kind == "p384":
            self.private = ec.generate_private_key(ec.SECP384R1())
        else:
            self.private = ed25519.Ed25519PrivateKey.generate()
        self.algorithm = {"rsa1024": "RS256", "p384": "ES384"}.get(kind, ALGORITHMS.get(kind))

    def jwk(self):
        """The public JWK with `kid`, as providers publish it (EC coordinates at full size: PyJWT
        drops leading zero bytes, which RFC 7518 §6.2.1.2 does not allow)."""
        public = self.private.public_key()
        if self.kind.startswith("rsa"):
            key = RSAAlgorithm.to_jwk(public, as_dict=True)
        elif self.kind.startswith("p"):
            key = ECAlgorithm.to_jwk(public, as_dict=True)
            numbers, size = public.public_numbers(), (public.curve.key_size + 7) // 8
            key["x"] = base64url_encode(numbers.x.to_bytes(size, "big")).decode()
            key["y"] = base64url_encode(numbers.y.to_bytes(size, "big")).decode()
        else:
            key = OKPAlgorithm.to_jwk(public, as_dict=True)
        key.update({"kid": self.kid, "use": "sig", "alg": self.algorithm})
        return key

    def public_pem(self):
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign(self, claims, kid=True, **headers):
        """A token PyJWT signs with this key; its kid in the header unless `kid` is False."""
        if kid:
            headers = {"kid": self.kid, **headers}
        return jwt.encode(claims, self.private, algorithm=self.algorithm, headers=headers or None)


class JWKSServer:
    """Serves `/jwks.json` on 127.0.0.1 (a free port) until `stop`."""

    def __init__(self, keys, max_age=3600):
        self.keys = {key.kid: key for key in keys}
        self.max_age = max_age
        self.answer = None
        self.fetches = []
        self.conditional = 0
        self._lock = threading.Lock()
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.url = "http://127.0.0.1:%d/jwks.json" % self.port
        self._server = None
        self.up()

    def document(self):
        with self._lock:
            return json.dumps({"keys": [key.jwk() for key in self.keys.values()]}).encode()

    def rotate(self, *added, removed=()):
        """Publishes `added` keys and withdraws the kids in `removed`."""
        with self._lock:
            for key in added:
                self.keys[key.kid] = key
            for kid in removed:
                self.keys.pop(kid, None)

    def count(self, since=0.0):
        with self._lock:
            return sum(1 for at in self.fetches if at >= since)

    def wait_for_fetches(self, count, timeout=10.0):
        deadline = time.time() + timeout
        while self.count() < count:
            assert time.time() < deadline, "the hub fetched the JWKS %d times, not %d" % (self.count(), count)
            time.sleep(0.02)

    def up(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                with server._lock:
                    server.fetches.append(time.time())
                    answer = server.answer
                if self.path != "/jwks.json":
                    return self._send(404, b"not found")
                if answer is not None:
                    return self._send(*answer)
                body = server.document()
                etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
                if self.headers.get("If-None-Match") == etag:
                    with server._lock:
                        server.conditional += 1
                    return self._send(304, b"", etag=etag)
                self._send(200, body, etag=etag)

            def _send(self, status, body, etag=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "public, max-age=%d" % server.max_age)
                if etag:
                    self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self):
        """Stops listening: the hub's fetches get connection refused."""
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def stop(self):
        self.down()
