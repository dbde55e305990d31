"""Clients of a screen under a release (issue 27, DESIGN §15), for the hubctl and console tests:
anonymous devices that follow the version they hold and report what they rendered, and who the
reference bucket exposes."""
import json
import threading
import time

from websockets.sync.client import connect

from assignment_reference import bucket


def exposed(release_id, devices, percent, screen="home"):
    """The devices the reference bucket puts in a release at `percent`."""
    return {d for d in devices if bucket("release/%s/%s/%s" % (screen, release_id, d)) < round(percent * 100)}


def wait(what, condition, timeout=10):
    deadline = time.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.time() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


class Device:
    """An anonymous client subscribed to `screen`; a thread follows the version it holds."""

    def __init__(self, hub, device, screen="home"):
        self.device, self.screen = device, screen
        self.ws = connect(hub.url + "/v1/connect")
        self.ws.send(json.dumps({"type": "hello", "protocol": 1, "device": device,
                                 "app": {"platform": "ios", "version": "5.2.0"}}))
        assert json.loads(self.ws.recv(timeout=5))["type"] == "welcome"
        self.ws.send(json.dumps({"type": "subscribe", "screen": screen}))
        first = json.loads(self.ws.recv(timeout=5))
        assert first["type"] == "snapshot", first
        self.version, self.hash, self.received = first["version"], first["hash"], []
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for text in self.ws:
                message = json.loads(text)
                if message["type"] in ("snapshot", "patch") and message["screen"] == self.screen:
                    self.received.append(message["version"])
                    self.version, self.hash = message["version"], message["hash"]
        except Exception:
            pass

    def rendered(self):
        self.ws.send(json.dumps({"type": "rendered", "screen": self.screen, "version": self.version}))

    def render_error(self, component, message):
        self.ws.send(json.dumps({"type": "render_error", "screen": self.screen, "version": self.version,
                                 "hash": self.hash, "component": component, "message": message}))

    def close(self):
        self.ws.close()
        self.thread.join(timeout=5)
