"""The providers' side of the push bench: the credentials the hub is given and a fast local HTTP/2
sink that answers its pushes, so the hub and not the sink is what is measured.

- `Credentials`: made with the `openssl` command line in a folder: an APNs token-signing key
  (EC P-256, PKCS#8 PEM, as Apple's .p8), a service-account JSON for FCM (RSA 2048, PKCS#8) whose
  token_uri is the sink's `/token`, and a self-signed certificate (CA:TRUE, SAN 127.0.0.1 and
  localhost) the hub trusts with `--push-ca`.
- `Nghttpd`: Debian's `nghttpd` (nghttp2-server: C, one event loop) over TLS with ALPN h2, serving
  files from an htdocs folder to any method, POST included: `3/device/<token>` (an empty file, as
  APNs answers 200 with no body; the tokens are hard links to a few such files, 50,000 each, so
  100,000 distinct tokens cost directory entries only), `v1/projects/<id>/messages:send` (FCM's answer) and `token` (the OAuth
  answer). A path with no file is a 404, which the hub counts as a failed push.
- `python_sink`: the fallback when nghttpd cannot be used, the Python stand-in of the end-to-end
  tests (Tests/EndToEnd/push_provider.py, h2 in one thread per connection, verifying every JWT):
  much slower, so its figures measure it, not the hub.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

PROJECT = "pushhub-bench"
KEY_ID, TEAM = "ABC123DEFG", "DEF123GHIJ"
TOPIC = "com.example.app"
ACCESS_TOKEN = b'{"access_token":"x","expires_in":3600,"token_type":"Bearer"}'
LINKS_PER_FILE = 50_000
FCM_ANSWER = b'{"name":"projects/%s/messages/0:1700000000000000%%2531bd1c9631bd1c96"}' % PROJECT.encode()


def openssl(*arguments):
    done = subprocess.run(["openssl", *arguments], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit("openssl %s: %s" % (" ".join(arguments), done.stderr.strip()[-500:]))


class Credentials:
    def __init__(self, folder, sink_url):
        self.folder = folder
        self.apns_key = os.path.join(folder, "AuthKey_%s.p8" % KEY_ID)
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", self.apns_key)
        rsa = os.path.join(folder, "service-key.pem")
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa)
        self.fcm_credentials = os.path.join(folder, "service-account.json")
        with open(self.fcm_credentials, "w") as file:
            json.dump({"type": "service_account", "project_id": PROJECT, "private_key_id": "0" * 40,
                       "private_key": open(rsa).read(), "client_email": "hub@%s.iam.gserviceaccount.com" % PROJECT,
                       "client_id": "100000000000000000001", "token_uri": sink_url + "/token"}, file, indent=2)
        self.certificate = os.path.join(folder, "sink-cert.pem")
        self.certificate_key = os.path.join(folder, "sink-key.pem")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=pushhub bench sink", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-addext", "basicConstraints=critical,CA:TRUE", "-keyout", self.certificate_key,
                "-out", self.certificate)
        self.ca = self.certificate  # self-signed: its own CA

    def hub_flags(self, url, fcm):
        flags = ["--apns-key", self.apns_key, "--apns-key-id", KEY_ID, "--apns-team", TEAM, "--apns-url", url,
                 "--push-ca", self.ca]
        if fcm:
            flags += ["--fcm-credentials", self.fcm_credentials, "--fcm-url", url]
        return flags


def wait_listening(port, process, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


class Nghttpd:
    """nghttpd on `port` serving `htdocs`, started by `start`; `process` is the Popen (the caller
    stops it)."""

    def __init__(self, folder, credentials, port, tokens, max_streams):
        self.port, self.credentials, self.max_streams, self.process = port, credentials, max_streams, None
        self.url = "https://127.0.0.1:%d" % port
        self.htdocs = os.path.join(folder, "htdocs")
        devices = os.path.join(self.htdocs, "3", "device")
        os.makedirs(devices)
        fcm = os.path.join(self.htdocs, "v1", "projects", PROJECT)
        os.makedirs(fcm)
        with open(os.path.join(fcm, "messages:send"), "wb") as file:
            file.write(FCM_ANSWER)
        with open(os.path.join(self.htdocs, "token"), "wb") as file:
            file.write(ACCESS_TOKEN)
        for k, token in enumerate(tokens):
            if k % LINKS_PER_FILE == 0:  # ext4 allows 65,000 links to one inode
                answer = os.path.join(folder, "apns-answer-%d" % k)
                open(answer, "wb").close()
            os.link(answer, os.path.join(devices, token))
        self.log = os.path.join(folder, "nghttpd.log")

    def start(self, window_bits):
        """With a connection-level receive window of 2**`window_bits` - 1 octets (nghttpd's
        default is 16: 65,535, RFC 9113's initial window)."""
        self.window_bits = window_bits
        self.process = subprocess.Popen(
            ["nghttpd", "--htdocs", self.htdocs, "--max-concurrent-streams", str(self.max_streams),
             "--connection-window-bits", str(window_bits), str(self.port), self.credentials.certificate_key,
             self.credentials.certificate], stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        if not wait_listening(self.port, self.process):
            raise SinkUnusable("nghttpd did not listen on %d: %s" % (self.port, open(self.log).read()[-500:]))
        return self.process

    def check(self, credentials, token):
        """That it answers POSTs of each endpoint with 200 and the file, over HTTP/2 with TLS."""
        if not shutil.which("curl"):
            raise SinkUnusable("no curl to check nghttpd with")
        for path, body, expected in (("/3/device/" + token, b'{"aps":{"content-available":1}}', b""),
                                     ("/v1/projects/%s/messages:send" % PROJECT, b'{"message":{}}', FCM_ANSWER),
                                     ("/token", b"grant_type=x&assertion=y", ACCESS_TOKEN)):
            done = subprocess.run(
                ["curl", "-s", "--http2", "--cacert", credentials.ca, "-X", "POST", "--data-binary", "@-",
                 "-o", "-", "-w", "\n%{http_code} %{http_version}", self.url + path], input=body, capture_output=True)
            answer, _, status = done.stdout.rpartition(b"\n")
            if done.returncode or status != b"200 2" or answer != expected:
                raise SinkUnusable("nghttpd answered POST %s with %r %r (curl exit %d)"
                                   % (path, status, answer[:200], done.returncode))


class SinkUnusable(Exception):
    pass


def python_sink(root, folder):
    """The end-to-end tests' stand-in, its credentials and certificate made in `folder`; it runs
    in threads of this process."""
    sys.path.insert(0, os.path.join(root, "Tests", "EndToEnd"))
    try:
        from push_provider import PushProvider
    except ImportError as error:
        raise SystemExit("no fallback sink either: Tests/EndToEnd/push_provider.py (%s)" % error)
    os.makedirs(folder)
    return PushProvider(directory=folder)
