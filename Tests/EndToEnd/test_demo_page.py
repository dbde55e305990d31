"""The demo page (issue 13 item 4, DESIGN §12): a hub in --dev mode serves clients/demo/index.html
at / on its client listener; in headless Chromium the page imports /v1/client.js from the hub,
connects anonymously, renders the published tree (text, image, list, button, section, an
unknown type as a labelled box), follows a publish live, shows version, hash and syncs; the
test takes a screenshot (also copied to /tmp/demo.png to be looked at) and checks it is a real
picture."""
import json
import os
import shutil
import struct
import urllib.request
import zlib

import pytest

from admin import call, publish
from chromium import browser_or_skip
from conftest import ROOT

DEMO = os.path.join(ROOT, "clients", "demo", "index.html")

BANNER = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnIHdpZHRoPSczMjAnIGhlaWdodD0nOTAnPjxyZWN0IHdpZHRoPSczMjAnIGhlaWdodD0nOTAnIHJ4PScxMicgZmlsbD0nIzJmNmZkZScvPjxjaXJjbGUgY3g9JzI4MCcgY3k9JzQ1JyByPScyNicgZmlsbD0nI2ZmZDE2NicvPjx0ZXh0IHg9JzE4JyB5PSc1NicgZm9udC1zaXplPScyOCcgZmlsbD0nd2hpdGUnIGZvbnQtZmFtaWx5PSdzYW5zLXNlcmlmJz5NYXRjaCBkYXk8L3RleHQ+PC9zdmc+"


def tree(headline, score):
    return {"type": "screen", "title": "Home", "children": [
        {"id": "headline", "type": "text", "style": "title", "text": headline},
        {"id": "hero", "type": "image", "url": BANNER, "alt": "a banner drawn from a data: URL"},
        {"id": "scores", "type": "section", "title": "Live scores", "children": [
            {"id": "s1", "type": "text", "text": "Lions %d – 1 Tigers" % score},
            {"id": "fixtures", "type": "list", "items": ["Sat 15:00 Bears v Wolves", {"id": "f2", "label": "Sun 18:30 Owls v Hawks"}]},
        ]},
        {"id": "cta", "type": "button", "label": "Buy tickets", "action": {"open": "/tickets"}},
        {"id": "chart", "type": "chart", "series": [3, 1, 4, 1, 5]},
    ]}


def png_pixels(data):
    """(width, height, set of distinct pixels) of an 8-bit RGB/RGBA non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat = 8, b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunk = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    raw = zlib.decompress(idat)
    channels = 4 if color == 6 else 3
    stride = width * channels
    previous, colors, position = bytearray(stride), set(), 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):  # undo the PNG filter (RFC 2083 §6)
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colors.update(bytes(line[i:i + channels]) for i in range(0, stride, channels * 7))  # a sample
        previous = line
    return width, height, colors


@pytest.fixture(scope="module")
def browser():
    chromium = browser_or_skip("the demo page test")
    yield chromium
    chromium.close()


def text_of(browser, selector):
    return browser.evaluate("[...document.querySelectorAll(%s)].map(e => e.textContent)" % json.dumps(selector))


def test_the_demo_page_renders_a_screen_live(browser, hub_factory, tmp_path):
    hub = hub_factory("--dev")
    page = "http://127.0.0.1:%d/" % hub.port
    with urllib.request.urlopen(page, timeout=5) as response:
        served = response.read()
        assert response.headers["Content-Type"].startswith("text/html")
    assert served == open(DEMO, "rb").read(), \
        "the hub serves another demo page than clients/demo/index.html: rebuild it (swift build embeds the file)"
    first = publish(hub, "home", tree("Welcome to match day", 2))
    browser.screenshot()  # sets the viewport before the page lays out
    browser.call("Page.navigate", url=page)
    browser.wait_for("document.body && document.body.innerText.includes('Welcome to match day')", what="the published text")
    assert browser.evaluate("demo.hub.state") == "live"
    assert text_of(browser, "#version") == ["1"] and text_of(browser, "#hash") == [first["hash"]]
    assert text_of(browser, ".c-screen > h1") == ["Home"]
    assert text_of(browser, ".c-section > h3") == ["Live scores"]
    assert text_of(browser, ".c-list li") == ["Sat 15:00 Bears v Wolves", "Sun 18:30 Owls v Hawks"]
    assert text_of(browser, "button.c-button") == ["Buy tickets"]
    assert text_of(browser, ".c-unknown > .label") == ["chart"]
    assert browser.evaluate("document.querySelector('.c-image img').complete && document.querySelector('.c-image img').naturalWidth") == 320
    device = browser.evaluate("localStorage.getItem('pushhub-demo:device')")
    assert device.startswith("demo-") and device in text_of(browser, "#device")[0]
    # The hub sees an anonymous web client with that device id.
    clients = call(hub, "GET", "/v1/clients")[1]["clients"]
    assert [(c["user"], c["device"], c["platform"]) for c in clients] == [(None, device, "web")], clients

    # A publish shows up live, as a patch (the unchanged parts keep their elements).
    browser.evaluate("document.querySelector('.c-list').dataset.mark = 'kept', true")
    second = publish(hub, "home", tree("Kick-off in 10 minutes", 3))
    browser.wait_for("document.body.innerText.includes('Kick-off in 10 minutes') && document.body.innerText.includes('Lions 3')",
                     what="the changed text")
    assert text_of(browser, "#version") == ["2"] and text_of(browser, "#hash") == [second["hash"]]
    assert text_of(browser, "#source") == ["patch"]
    assert browser.evaluate("document.querySelector('.c-list').dataset.mark") == "kept"
    assert "Welcome to match day" not in browser.evaluate("document.getElementById('screen').innerText")

    # A sync shows in the list once its jitter (0..4 s) has passed.
    status, sync = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "hotfix", "scope": "bundle"})
    assert status == 200 and sync["targeted_online"] == 1, sync
    browser.wait_for("document.getElementById('syncs').innerText.includes(%s)" % json.dumps(sync["id"]), timeout=8,
                     what="the sync in the list")
    assert "hotfix → bundle" in text_of(browser, "#syncs li")[0]

    browser.evaluate("new Promise(r => setTimeout(r, 1700))")  # the change highlight fades
    png = browser.screenshot()
    path = tmp_path / "demo.png"
    path.write_bytes(png)
    shutil.copy(path, "/tmp/demo.png")
    width, height, colors = png_pixels(png)
    assert (width, height) == (1200, 800) and len(png) > 20000, (width, height, len(png))
    assert len(colors) > 50, "the screenshot is (nearly) one color: %d colors" % len(colors)
    assert not browser.console, browser.console


def test_the_demo_page_waits_for_a_screen_that_is_not_published_yet(browser, hub_factory):
    hub = hub_factory("--dev")
    browser.call("Page.navigate", url="http://127.0.0.1:%d/?screen=promo/summer" % hub.port)
    browser.wait_for("document.getElementById('notice')?.innerText.includes('hubctl screen publish promo/summer')",
                     what="the notice naming the command")
    # Issue 24 item 10: the hub keeps the subscription (pending); the page asks once, no retry loop.
    assert browser.evaluate("demo.hub.stats.pending") == 1
    publish(hub, "promo/summer", {"type": "screen", "children": [{"type": "text", "text": "Summer sale"}]})
    browser.wait_for("document.getElementById('screen').innerText.includes('Summer sale')", timeout=3,
                     what="the screen once published")
    assert browser.evaluate("document.getElementById('notice').innerText") == ""
    assert browser.evaluate("document.getElementById('source').innerText") == "snapshot"
    assert browser.evaluate("demo.hub.stats.pending") == 1 and "error" not in browser.evaluate(
        "document.getElementById('updates').innerText")
    # Deleted: the page subscribes once more and waits again; republished, it shows up.
    assert call(hub, "DELETE", "/v1/screens/promo/summer")[0] in (200, 204)
    browser.wait_for("demo.hub.stats.pending === 2 && document.getElementById('notice')?.innerText.includes('hubctl screen publish')",
                     what="waiting again after the deletion")
    publish(hub, "promo/summer", {"type": "screen", "children": [{"type": "text", "text": "Back again"}]})
    browser.wait_for("document.getElementById('screen').innerText.includes('Back again')", timeout=3,
                     what="the screen once published again")
