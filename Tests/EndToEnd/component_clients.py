"""Clients of app builds that render given components (issue 28, DESIGN §16), for the hubctl and
console tests: signed-in clients whose hello declares `components` (or names only an app, so that
its profile applies), and what each can render — the counts `GET /v1/components` must give,
computed from the clients a test holds."""
import json
import os
import threading
import time

import jwt
from websockets.sync.client import connect

#: Two components as a registry holds them: Carousel in two versions (v2 adds `autoplay`), Text in one.
CAROUSEL = {"versions": {
    "1": {"schema": {"type": "object", "required": ["items"],
                     "properties": {"id": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}}}}},
    "2": {"schema": {"type": "object", "required": ["items"],
                     "properties": {"id": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}},
                                    "autoplay": {"type": "boolean"}}}}}}
TEXT = {"versions": {"1": {"schema": {"type": "object", "required": ["text"],
                                      "properties": {"id": {"type": "string"}, "text": {"type": "string"}}}}}}

#: A screen with a Carousel v2 (falling back to a Text), a Carousel v1 and a Text.
HOME = {"type": "screen", "children": [
    {"id": "hero", "type": "Carousel", "v": 2, "items": ["a", "b"], "autoplay": True,
     "fallback": {"id": "hero", "type": "Text", "text": "Swipe through our offers"}},
    {"id": "promo", "type": "Carousel", "items": ["x"]},
    {"id": "note", "type": "Text", "text": "Free delivery"}]}


def client_token(hub, user):
    """A client JWT for `user`, signed with the hub's secret."""
    secret = open(os.path.join(hub.data, "data", "jwt.secret")).read().strip()
    return jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, secret, algorithm="HS256")


def can_render(capabilities, component, version):
    """Whether a client with `capabilities` (name → highest version; None: everything) renders it."""
    return capabilities is None or capabilities.get(component, 0) >= version


class App:
    """A signed-in client (user `user`) of one build: `app` is (platform, version) or None,
    `components` what its hello declares (None: the member is left out). `capabilities` is
    what it renders: the declared set, else `profile` (the one that applies to its app, given by
    the test), else everything (None). With `screen`, it subscribes and `snapshot` is the hub's
    first answer; a thread reads the rest so that closing never waits."""

    def __init__(self, hub, user, app=None, components=None, profile=None, screen=None):
        self.user = user
        self.capabilities = components if components is not None else profile
        self.ws = connect(hub.url + "/v1/connect")
        hello = {"type": "hello", "protocol": 1, "token": client_token(hub, user)}
        if app:
            hello["app"] = {"platform": app[0], "version": app[1]}
        if components is not None:
            hello["components"] = components
        self.ws.send(json.dumps(hello))
        welcome = json.loads(self.ws.recv(timeout=5))
        assert welcome["type"] == "welcome", welcome
        self.snapshot = None
        if screen:
            self.ws.send(json.dumps({"type": "subscribe", "screen": screen}))
            self.snapshot = json.loads(self.ws.recv(timeout=5))
            assert self.snapshot["type"] == "snapshot", self.snapshot
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for _ in self.ws:
                pass
        except Exception:
            pass

    def close(self):
        self.ws.close()
        self.thread.join(timeout=5)


def expected_counts(apps, registry):
    """{(component, version): clients that can render it} over `apps`, for each version of each
    component in `registry` (name → PUT body)."""
    return {(name, int(version)): sum(can_render(a.capabilities, name, int(version)) for a in apps)
            for name, body in registry.items() for version in body["versions"]}
