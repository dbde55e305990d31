"""Headless Chromium driven over the DevTools protocol (CDP) with the `websockets` package, and a
small HTTP server on 127.0.0.1 that serves the JavaScript client and a page to run it in. Used
by test_js_client.py and bench/js-client/."""
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

from websockets.sync.client import connect

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENT_DIR = os.path.join(ROOT, "clients", "js")


def client_bundle():
    """The JavaScript client as one module: what clients/js/bundle.sh makes of clients/js/src/
    (what the hub's build embeds and serves at /v1/client.js)."""
    return subprocess.run(["sh", os.path.join(CLIENT_DIR, "bundle.sh")], capture_output=True, check=True).stdout


def find_chromium():
    """The Chromium binary, or None (the callers skip with the reason)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class PageServer:
    """Serves `clients/js/*` at `/` (`/pushhub-client.js`: the bundle of the modules) (with CORS, for pages on a hub's origin) and the given extra pages (path → (content type, text)) on 127.0.0.1.
    127.0.0.1 is a secure context, so SubtleCrypto is available to the pages."""

    def __init__(self, pages):
        pages = dict(pages)
        bundle = client_bundle()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if path in pages:
                    content_type, body = pages[path]
                    body = body.encode()
                elif path == "/pushhub-client.js":
                    content_type, body = "text/javascript", bundle
                elif path.startswith("/") and os.path.isfile(os.path.join(CLIENT_DIR, os.path.basename(path))):
                    content_type = "text/javascript" if path.endswith(".js") else "text/plain"
                    body = open(os.path.join(CLIENT_DIR, os.path.basename(path)), "rb").read()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", content_type + "; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Access-Control-Allow-Origin", "*")  # pages on the hub's origin import the module
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class JSError(AssertionError):
    pass


def browser_or_skip(what, flags=()):
    """A started `Browser` for a test, or the test skipped saying why (`what` needs Chromium):
    no binary, or one that cannot start in this container."""
    import pytest
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium); %s needs it" % what)
    try:
        return Browser(binary, flags=flags)
    except Exception as error:  # a container without what Chromium needs to start
        pytest.skip("chromium could not start: %s" % error)


class Browser:
    """One headless Chromium with one page; `evaluate` runs an expression (awaiting promises) and
    returns its JSON value."""

    def __init__(self, binary, flags=()):
        """`flags`: more command-line switches (a test's trusted certificate, for one)."""
        self.profile = tempfile.mkdtemp(prefix="pushhub-chromium-")
        self.process = subprocess.Popen(
            ["nice", binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-dev-shm-usage", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "--user-data-dir=" + self.profile, *flags, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and len(open(port_file).read().split()) >= 2):
            if self.process.poll() is not None or time.time() > deadline:
                self.close()
                raise RuntimeError("chromium did not start (exit %r)" % self.process.poll())
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self.next_id = 0
        self.console = []
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, timeout=30, **params):
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.time() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.time())))
            if message.get("id") == ident:
                if "error" in message:
                    raise JSError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if message.get("method") == "Runtime.exceptionThrown":
                self.console.append(message["params"]["exceptionDetails"].get("exception", {}).get("description"))
            elif message.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value", a.get("description"))) for a in message["params"]["args"]))

    def evaluate(self, expression, timeout=30):
        result = self.call("Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise JSError("%s\n  in: %s" % (details.get("exception", {}).get("description") or details.get("text"),
                                            expression[:300]))
        return result["result"].get("value")

    def wait_for(self, expression, timeout=10.0, what=None):
        """Polls `expression` until it is truthy; returns its value."""
        deadline = time.time() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError("timed out waiting for %s (console: %s)" % (what or expression, self.console[-5:]))
            time.sleep(0.02)

    def open(self, url, ready="window.harnessReady === true"):
        self.call("Page.navigate", url=url)
        self.wait_for(ready, what="the page at " + url)

    def screenshot(self, width=1200, height=800):
        """A PNG of the page at that viewport size (bytes)."""
        import base64
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
