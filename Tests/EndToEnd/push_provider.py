"""A stand-in for APNs and FCM (DESIGN §17): one local HTTP/2 server over TLS (ALPN "h2"), built
on the `h2` package, that speaks the providers' documented contracts strictly enough to fail a
hub that gets them wrong, and answers what a test scripts.

    provider = PushProvider()               # makes its credentials, listens on 127.0.0.1
    hub = hub_factory(*provider.hub_flags())
    provider.script(token, (410, "Unregistered"))        # the next push to `token` gets 410
    provider.wait_for_requests(1, provider="apns")       # what the hub sent, parsed
    provider.close()

Endpoints (all on the one port, as the providers' hosts would be):
- APNs `POST /3/device/<hex token>`: the bearer ES256 provider JWT is verified with the .p8's
  public key (alg ES256, kid = key id, iss = team, iat at most 1 h old and not in the future),
  the headers are checked (apns-topic, apns-push-type background, apns-priority 5,
  apns-expiration a number, apns-collapse-id at most 64 bytes, content-type JSON) and the body
  (JSON of at most 4096 bytes, aps.content-available 1, pushhub a sync object). A refusal is
  what APNs answers: `{"reason": …}` with 400/403/404/405/413. Success: 200 with `apns-id`.
- OAuth `POST /token`: the RS256 assertion of the jwt-bearer grant is verified with the service
  account's public key (iss = client_email, aud = token_uri, the FCM scope, exp - iat <= 3600,
  not expired); the answer is `{"access_token","expires_in","token_type":"Bearer"}` or Google's
  `{"error":"invalid_grant",…}` (400).
- FCM `POST /v1/projects/<project_id>/messages:send`: the bearer must be an unexpired access
  token from /token; the body a data message carrying `data.pushhub` (the sync as a JSON string)
  with `android.priority` normal and `android.ttl` "<seconds>s". A refusal is FCM's error object
  (`error.code`, `error.status`, `error.details[].errorCode`). Success: 200 `{"name": …}`.

A valid request is then answered by the script of its device token (or of "oauth" for /token):
answers given in turn, 200 once the script is used up. An answer is a status, a (status, reason)
or (status, reason, retry_after) tuple, or an `Answer` ("hang" or `Answer(hang=True)`: never answered).
Every request is recorded (`requests`): provider, path, headers, parsed body, connection number,
time and the answer given."""
import datetime
import ipaddress
import itertools
import json
import os
import re
import socket
import ssl
import tempfile
import threading
import time
import urllib.parse
import uuid

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# Google's canonical error statuses for the HTTP statuses FCM answers with.
FCM_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
              429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class Answer:
    """What the stand-in answers one request: `status` with `reason` in the provider's error body,
    a `retry-after` header when `retry_after` is set, after `delay` seconds; `hang` never answers."""

    def __init__(self, status=200, reason=None, retry_after=None, delay=0.0, hang=False):
        self.status = status
        self.reason = reason
        self.retry_after = retry_after
        self.delay = delay
        self.hang = hang

    @classmethod
    def of(cls, value):
        if isinstance(value, Answer):
            return value
        if value == "hang":
            return cls(hang=True)
        if isinstance(value, int):
            return cls(value)
        return cls(*value)

    def __repr__(self):
        return "Answer(%r, %r, retry_after=%r, hang=%r)" % (self.status, self.reason, self.retry_after, self.hang)


class Recorded:
    """One request the stand-in received, and how it answered (`status` None: not answered)."""

    def __init__(self, provider, method, path, headers, body, connection, token):
        self.provider = provider  # "apns", "fcm", "oauth" or "unknown"
        self.method = method
        self.path = path
        self.header_list = headers  # [(name, value)] as received, names lower-case
        self.headers = dict(headers)
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None
        self.connection = connection
        self.token = token
        self.time = time.time()
        self.status = None
        self.reason = None

    @property
    def sync(self):
        """The sync object the push carried (APNs: `pushhub`; FCM: `data.pushhub` parsed), or None."""
        try:
            if self.provider == "apns":
                return self.json["pushhub"]
            if self.provider == "fcm":
                return json.loads(self.json["message"]["data"]["pushhub"])
        except (TypeError, KeyError, ValueError):
            return None
        return None

    def __repr__(self):
        return "Recorded(%s %s %s conn=%d -> %r %r)" % (
            self.provider, self.method, self.path, self.connection, self.status, self.reason)


class Refusal(Exception):
    """A request the provider would refuse: `status` and `reason` (APNs reason, FCM status or
    OAuth error), `field` for FCM's fieldViolations."""

    def __init__(self, status, reason, description="", field=None):
        super().__init__("%d %s %s" % (status, reason, description))
        self.status = status
        self.reason = reason
        self.description = description
        self.field = field


class ProviderCredentials:
    """What the hub is given to reach the stand-in, made in `directory`: an APNs .p8 key (EC
    P-256, PKCS#8) with its key id and team, a service-account JSON (RSA 2048) whose token_uri is
    `token_uri`, and a self-signed certificate (its own CA) for 127.0.0.1 and localhost."""

    def __init__(self, directory, token_uri, project_id="pushhub-standin", apns_key_id="ABC123DEFG",
                 apns_team="TEAM123456", client_email="hub@pushhub-standin.iam.gserviceaccount.com"):
        self.directory = directory
        self.apns_key_id = apns_key_id
        self.apns_team = apns_team
        self.project_id = project_id
        self.client_email = client_email
        self.token_uri = token_uri

        self.apns_key = ec.generate_private_key(ec.SECP256R1())
        self.apns_key_file = self.write("AuthKey_%s.p8" % apns_key_id, self.pem(self.apns_key))

        self.service_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.fcm_credentials_file = self.write("service-account.json", json.dumps({
            "type": "service_account", "project_id": project_id, "private_key_id": uuid.uuid4().hex,
            "private_key": self.pem(self.service_key).decode(), "client_email": client_email,
            "client_id": "100000000000000000001", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri, "universe_domain": "googleapis.com"}, indent=2).encode())

        tls_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pushhub push stand-in")])
        now = datetime.datetime.now(datetime.timezone.utc)
        certificate = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(tls_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(tls_key, hashes.SHA256()))
        self.certificate_file = self.write("cert.pem", certificate.public_bytes(serialization.Encoding.PEM))
        self.certificate_key_file = self.write("cert-key.pem", self.pem(tls_key))
        self.ca_file = self.certificate_file  # self-signed: it is its own CA

    @staticmethod
    def pem(key):
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    def write(self, name, data):
        path = os.path.join(self.directory, name)
        with open(path, "wb") as file:
            file.write(data)
        os.chmod(path, 0o600)
        return path

    def provider_token(self, iat=None, kid=None, team=None, key=None, algorithm="ES256"):
        """An APNs provider JWT as a correct hub makes it (each part overridable, for tests)."""
        return jwt.encode({"iss": team or self.apns_team, "iat": int(time.time()) if iat is None else iat},
                          key or self.apns_key, algorithm=algorithm, headers={"kid": kid or self.apns_key_id})

    def assertion(self, iat=None, lifetime=3600, audience=None, scope=FCM_SCOPE, issuer=None, key=None):
        """A service-account assertion as a correct hub makes it (each part overridable)."""
        now = int(time.time()) if iat is None else iat
        return jwt.encode({"iss": issuer or self.client_email, "scope": scope, "aud": audience or self.token_uri,
                           "iat": now, "exp": now + lifetime}, key or self.service_key, algorithm="RS256")


class PushProvider:
    """The stand-in: APNs, the OAuth token endpoint and FCM on one port of 127.0.0.1, over TLS with
    ALPN h2 (or h2c with prior knowledge when `tls` is false), one thread per connection."""

    def __init__(self, directory=None, tls=True, alpn=("h2",), access_token_lifetime=3600):
        self.directory = directory or tempfile.mkdtemp(prefix="pushhub-provider-")
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.credentials = ProviderCredentials(self.directory, "%s/token" % self.url_for(tls))
        self.tls = None
        if tls:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(self.credentials.certificate_file, self.credentials.certificate_key_file)
            self.tls.set_alpn_protocols(list(alpn))
        self.access_token_lifetime = access_token_lifetime
        self.lock = threading.Condition()
        self.scripts = {}  # token (or "oauth") -> [Answer]
        self.requests = []  # [Recorded], in arrival order
        self.access_tokens = {}  # token -> expiry (time.time())
        self.provider_tokens_valid_from = 0  # APNs: a JWT with an older iat is ExpiredProviderToken
        self.connection_numbers = itertools.count(1)
        self.accepted = 0
        self.sockets = []  # every socket accepted (and its TLS wrapper), for disconnect_all
        self.closed = False
        self.acceptor = threading.Thread(target=self.accept, name="push-provider-accept", daemon=True)
        self.acceptor.start()

    # The hub's side of it

    def url_for(self, tls):
        return "%s://127.0.0.1:%d" % ("https" if tls else "http", self.port)

    @property
    def url(self):
        return self.url_for(self.tls is not None)

    def hub_flags(self):
        """The pushhub flags that send both providers' pushes here (DESIGN §17)."""
        c = self.credentials
        return ["--apns-key", c.apns_key_file, "--apns-key-id", c.apns_key_id, "--apns-team", c.apns_team,
                "--fcm-credentials", c.fcm_credentials_file, "--apns-url", self.url, "--fcm-url", self.url,
                "--push-ca", c.ca_file]

    # Scripting and assertions

    def script(self, token, *answers):
        """Appends answers for the next valid requests for device `token` ("oauth": /token)."""
        with self.lock:
            self.scripts.setdefault(token, []).extend(Answer.of(answer) for answer in answers)

    def expire_access_tokens(self):
        """Every access token issued so far is expired from now on (FCM answers 401)."""
        with self.lock:
            self.access_tokens = {token: 0 for token in self.access_tokens}

    def expire_provider_tokens(self):
        """APNs answers 403 ExpiredProviderToken to every JWT issued before the next second."""
        with self.lock:
            self.provider_tokens_valid_from = int(time.time()) + 1

    def recorded(self, provider=None, token=None):
        with self.lock:
            return [r for r in self.requests
                    if (provider is None or r.provider == provider) and (token is None or r.token == token)]

    def wait_for_requests(self, count, provider=None, token=None, timeout=10.0):
        """Waits until at least `count` matching requests were received; returns them all."""
        deadline = time.time() + timeout
        with self.lock:
            while True:
                found = [r for r in self.requests
                         if (provider is None or r.provider == provider) and (token is None or r.token == token)]
                if len(found) >= count:
                    return found
                if time.time() > deadline:
                    raise AssertionError("expected %d %s requests, the stand-in received %r" % (
                        count, provider or "", self.requests))
                self.lock.wait(deadline - time.time())

    def wait_for_answered(self, count, provider=None, timeout=10.0):
        """Waits until `count` matching requests were answered (status set); returns those."""
        deadline = time.time() + timeout
        with self.lock:
            while True:
                found = [r for r in self.requests if r.status is not None and (provider is None or r.provider == provider)]
                if len(found) >= count:
                    return found
                if time.time() > deadline:
                    raise AssertionError("expected %d answered requests, the stand-in has %r" % (count, self.requests))
                self.lock.wait(deadline - time.time())

    @property
    def connections(self):
        """How many connections were accepted so far."""
        with self.lock:
            return self.accepted

    def disconnect_all(self):
        """Drops every open connection (what a provider restart looks like to the hub)."""
        with self.lock:
            sockets = list(self.sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.closed = True
        try:
            self.listener.close()
        except OSError:
            pass
        self.disconnect_all()

    # Serving

    def accept(self):
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                number = next(self.connection_numbers)
                self.accepted += 1
                self.sockets.append(sock)
            threading.Thread(target=self.serve, args=(sock, number), name="push-provider-%d" % number,
                             daemon=True).start()

    def serve(self, sock, number):
        try:
            if self.tls:
                sock.settimeout(10)
                sock = self.tls.wrap_socket(sock, server_side=True)
                sock.settimeout(None)
                if sock.selected_alpn_protocol() != "h2":
                    return  # a provider speaks HTTP/2 only
                with self.lock:
                    self.sockets.append(sock)
            Connection(self, sock, number).run()
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def next_answer(self, token):
        with self.lock:
            queue = self.scripts.get(token)
            return queue.pop(0) if queue else Answer(200)

    def record(self, recorded):
        with self.lock:
            self.requests.append(recorded)
            self.lock.notify_all()

    def answered(self, recorded, status, reason):
        with self.lock:
            recorded.status = status
            recorded.reason = reason
            self.lock.notify_all()

    # The providers' rules

    def check_apns(self, request):
        """Raises Refusal as APNs would for a request it refuses; the device token otherwise."""
        match = re.fullmatch(r"/3/device/([^/?]*)", request.path)
        if not match:
            raise Refusal(404, "BadPath")
        request.token = match.group(1)  # recorded even when the push is refused
        if request.method != "POST":
            raise Refusal(405, "MethodNotAllowed")
        headers = request.headers
        authorization = headers.get("authorization", "")
        if not authorization:
            raise Refusal(403, "MissingProviderToken")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Refusal(403, "InvalidProviderToken", "not a bearer token")
        self.verify_provider_token(token)
        if not re.fullmatch(r"[0-9a-fA-F]+", match.group(1)):
            raise Refusal(400, "BadDeviceToken")
        if not headers.get("apns-topic"):
            raise Refusal(400, "MissingTopic")
        if headers.get("apns-push-type") != "background":
            raise Refusal(400, "InvalidPushType", "a silent push is apns-push-type background")
        if headers.get("apns-priority") != "5":
            raise Refusal(400, "BadPriority", "a background push has priority 5")
        if not re.fullmatch(r"\d+", headers.get("apns-expiration", "")):
            raise Refusal(400, "BadExpirationDate")
        if "apns-collapse-id" in headers and len(headers["apns-collapse-id"].encode()) > 64:
            raise Refusal(400, "BadCollapseId")
        if not headers.get("content-type", "").startswith("application/json"):
            raise Refusal(400, "BadPayload", "content-type is not application/json")
        if not request.body:
            raise Refusal(400, "PayloadEmpty")
        if len(request.body) > 4096:
            raise Refusal(413, "PayloadTooLarge")
        body = request.json
        if not isinstance(body, dict) or body.get("aps") != {"content-available": 1}:
            raise Refusal(400, "BadPayload", 'the body is not {"aps":{"content-available":1},…}')
        check_sync(body.get("pushhub"), lambda why: Refusal(400, "BadPayload", why))
        return match.group(1)

    def verify_provider_token(self, token):
        c = self.credentials
        try:
            header = jwt.get_unverified_header(token)
            if header.get("alg") != "ES256" or header.get("kid") != c.apns_key_id:
                raise Refusal(403, "InvalidProviderToken", "header %r" % header)
            claims = jwt.decode(token, c.apns_key.public_key(), algorithms=["ES256"],
                                options={"require": ["iss", "iat"], "verify_iat": False})
        except jwt.PyJWTError as error:
            raise Refusal(403, "InvalidProviderToken", str(error))
        if claims.get("iss") != c.apns_team:
            raise Refusal(403, "InvalidProviderToken", "iss %r" % claims.get("iss"))
        now = time.time()
        iat = claims["iat"]
        if not isinstance(iat, int) or iat > now + 60:
            raise Refusal(403, "InvalidProviderToken", "iat %r is not a time in the past" % iat)
        with self.lock:
            valid_from = self.provider_tokens_valid_from
        if iat < now - 3600 or iat < valid_from:
            raise Refusal(403, "ExpiredProviderToken")

    def check_oauth(self, request):
        if request.path != urllib.parse.urlparse(self.credentials.token_uri).path:
            raise Refusal(404, "not_found")
        if request.method != "POST":
            raise Refusal(405, "invalid_request", "the token endpoint takes POST")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
            raise Refusal(400, "invalid_request", "the body is not application/x-www-form-urlencoded")
        form = urllib.parse.parse_qs(request.body.decode("latin-1"), strict_parsing=False)
        if form.get("grant_type") != [JWT_BEARER]:
            raise Refusal(400, "unsupported_grant_type", "grant_type %r" % form.get("grant_type"))
        assertion = (form.get("assertion") or [""])[0]
        c = self.credentials
        try:
            claims = jwt.decode(assertion, c.service_key.public_key(), algorithms=["RS256"], audience=c.token_uri,
                                options={"require": ["iss", "aud", "iat", "exp", "scope"]})
        except jwt.PyJWTError as error:
            raise Refusal(400, "invalid_grant", str(error))
        if claims["iss"] != c.client_email:
            raise Refusal(400, "invalid_grant", "iss %r is not the service account" % claims["iss"])
        if FCM_SCOPE not in str(claims["scope"]).split():
            raise Refusal(400, "invalid_scope", "scope %r" % claims["scope"])
        if claims["exp"] - claims["iat"] > 3600:
            raise Refusal(400, "invalid_grant", "Invalid JWT: the assertion lives longer than an hour")

    def check_fcm(self, request):
        """Raises Refusal as FCM would; the registration token otherwise."""
        match = re.fullmatch(r"/v1/projects/([^/]+)/messages:send", request.path)
        if not match:
            raise Refusal(404, "NOT_FOUND", "no such method")
        if request.method != "POST":
            raise Refusal(405, "METHOD_NOT_ALLOWED")
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        now = time.time()
        with self.lock:
            expiry = self.access_tokens.get(token)
        if scheme.lower() != "bearer" or expiry is None or expiry <= now:
            raise Refusal(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if match.group(1) != self.credentials.project_id:
            raise Refusal(403, "PERMISSION_DENIED", "the token is not for project %s" % match.group(1))
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise Refusal(400, "INVALID_ARGUMENT", "content-type is not application/json")
        body = request.json
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, dict):
            raise Refusal(400, "INVALID_ARGUMENT", "no message", field="message")
        device = message.get("token")
        request.token = device  # recorded even when the push is refused
        if not isinstance(device, str) or not device:
            raise Refusal(400, "INVALID_ARGUMENT", "no token", field="message.token")
        data = message.get("data")
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise Refusal(400, "INVALID_ARGUMENT", "data values must be strings", field="message.data")
        if len(json.dumps(data, separators=(",", ":")).encode()) > 4096:
            raise Refusal(400, "INVALID_ARGUMENT", "Message is too big", field="message")
        try:
            sync = json.loads(data.get("pushhub", ""))
        except ValueError:
            raise Refusal(400, "INVALID_ARGUMENT", "data.pushhub is not JSON", field="message.data")
        check_sync(sync, lambda why: Refusal(400, "INVALID_ARGUMENT", why, field="message.data"))
        android = message.get("android")
        if not isinstance(android, dict) or android.get("priority") != "normal":
            raise Refusal(400, "INVALID_ARGUMENT", "a silent push has android.priority normal",
                          field="message.android.priority")
        if not re.fullmatch(r"\d+(\.\d{1,9})?s", str(android.get("ttl"))) or float(android["ttl"][:-1]) > 2419200:
            raise Refusal(400, "INVALID_ARGUMENT", "bad ttl %r" % android.get("ttl"), field="message.android.ttl")
        if "collapse_key" in android and not isinstance(android["collapse_key"], str):
            raise Refusal(400, "INVALID_ARGUMENT", "bad collapse_key", field="message.android.collapse_key")
        return device

    def issue_access_token(self):
        token = "ya29.standin-" + uuid.uuid4().hex
        with self.lock:
            self.access_tokens[token] = time.time() + self.access_token_lifetime
        return token


def check_sync(sync, refuse):
    """The sync object a push carries (DESIGN §17): type, id, seq, reason, scope; hint, mandatory."""
    if not isinstance(sync, dict):
        raise refuse("the push carries no sync object")
    if sync.get("type") != "sync" or not isinstance(sync.get("id"), str) or not isinstance(sync.get("seq"), int):
        raise refuse("the sync object lacks type/id/seq: %r" % sync)
    if not isinstance(sync.get("reason"), str) or not isinstance(sync.get("scope"), str):
        raise refuse("the sync object lacks reason/scope: %r" % sync)
    unknown = set(sync) - {"type", "id", "seq", "reason", "scope", "hint", "mandatory"}
    if unknown or sync.get("mandatory", True) is not True:
        raise refuse("the sync object has %r" % sorted(unknown or ["mandatory: false"]))


class Connection:
    """One HTTP/2 connection: reads frames on its thread; answers as they are due, some later
    (`Answer.delay`, from a timer) — the lock keeps the h2 state and the socket to one writer."""

    def __init__(self, provider, sock, number):
        self.provider = provider
        self.sock = sock
        self.number = number
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.lock = threading.Lock()
        self.streams = {}  # stream id -> [headers, bytearray]

    def run(self):
        with self.lock:
            self.h2.initiate_connection()
            self.flush()
        while True:
            data = self.sock.recv(65536)
            if not data:
                return
            with self.lock:
                for event in self.h2.receive_data(data):
                    self.handle(event)
                self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def handle(self, event):
        if isinstance(event, h2.events.RequestReceived):
            self.streams[event.stream_id] = [event.headers, bytearray()]
        elif isinstance(event, h2.events.DataReceived):
            if event.stream_id in self.streams:
                self.streams[event.stream_id][1] += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            headers, body = self.streams.pop(event.stream_id, (None, None))
            if headers is not None:
                self.request(event.stream_id, headers, bytes(body))
        elif isinstance(event, h2.events.StreamReset):
            self.streams.pop(event.stream_id, None)

    def request(self, stream_id, headers, body):
        pseudo = {name: value for name, value in headers if name.startswith(":")}
        fields = [(name.lower(), value) for name, value in headers if not name.startswith(":")]
        path = pseudo.get(":path", "")
        provider = ("apns" if path.startswith("/3/") else "fcm" if path.startswith("/v1/")
                    else "oauth" if path.startswith("/token") else "unknown")
        recorded = Recorded(provider, pseudo.get(":method"), path, fields, body, self.number, None)
        self.provider.record(recorded)
        try:
            if provider == "apns":
                recorded.token = self.provider.check_apns(recorded)
            elif provider == "fcm":
                recorded.token = self.provider.check_fcm(recorded)
            elif provider == "oauth":
                self.provider.check_oauth(recorded)
                recorded.token = "oauth"
            else:
                raise Refusal(404, "BadPath")
        except Refusal as refusal:
            self.respond(stream_id, recorded, refusal.status, refusal.reason, None, refusal)
            return
        answer = self.provider.next_answer(recorded.token)
        if answer.hang:
            return
        if answer.delay:
            timer = threading.Timer(answer.delay, self.respond_later, args=(stream_id, recorded, answer))
            timer.daemon = True
            timer.start()
            return
        self.respond(stream_id, recorded, answer.status, answer.reason, answer.retry_after, None)

    def respond_later(self, stream_id, recorded, answer):
        try:
            with self.lock:
                self.respond(stream_id, recorded, answer.status, answer.reason, answer.retry_after, None)
                self.flush()
        except (OSError, h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
            pass  # the hub gave up on the stream or the connection: nothing to answer

    def respond(self, stream_id, recorded, status, reason, retry_after, refusal):
        headers = [(":status", str(status))]
        provider = recorded.provider
        description = refusal.description if refusal else ""
        if provider == "apns":
            headers.append(("apns-id", str(uuid.uuid4()).upper()))
            body = {} if status == 200 else {"reason": reason or "InternalServerError"}
            if status == 410:
                body["timestamp"] = int(time.time() * 1000)
        elif provider == "oauth":
            if status == 200:
                body = {"access_token": self.provider.issue_access_token(),
                        "expires_in": self.provider.access_token_lifetime, "token_type": "Bearer"}
            else:
                body = {"error": reason or "internal_failure", "error_description": description}
        elif status == 200:
            body = {"name": "projects/%s/messages/0:%d" % (self.provider.credentials.project_id, time.time_ns())}
        else:
            body = {"error": fcm_error(status, reason, description, refusal.field if refusal else None)}
        if retry_after is not None:
            headers.append(("retry-after", str(retry_after)))
        data = json.dumps(body).encode() if body else b""
        headers += [("content-type", "application/json"), ("content-length", str(len(data)))]
        try:
            self.h2.send_headers(stream_id, headers, end_stream=not data)
            if data:
                self.h2.send_data(stream_id, data, end_stream=True)
        except h2.exceptions.StreamClosedError:
            return
        self.provider.answered(recorded, status, reason)


def fcm_error(status, reason, description, field):
    """FCM's error object: `reason` is a canonical status (INVALID_ARGUMENT, …) or an FCM error
    code (UNREGISTERED, QUOTA_EXCEEDED, …), given as errorCode in the details."""
    canonical = FCM_STATUS.get(status, "UNKNOWN")
    if reason in FCM_STATUS.values():
        canonical = reason
    details = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": reason or canonical}]
    if field:
        details.append({"@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [{"field": field, "description": description}]})
    return {"code": status, "message": description or reason or canonical, "status": canonical, "details": details}

