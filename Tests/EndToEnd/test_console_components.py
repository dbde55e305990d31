"""The console's Components page (issue 28, DESIGN §16): headless Chromium against a real hub with
real clients of several builds connected. The list shows, per component version, how many
connected clients can render it — the admin API's counts, and the ones the test computes from
the clients it holds; a component's page shows its versions and schemas as registered; the app
profiles are the hub's; and the screen as a given build sees it (its platform and app version,
or the components it declares) is the tree a real client of that build is sent, with the profile
that applied named. Screenshots go to the test's tmp dir and /tmp/console-components*.png."""
import json

import pytest

from admin import call, publish
from chromium import PageServer
from component_clients import CAROUSEL, HOME, TEXT, App, client_token, expected_counts
from release_clients import wait
from test_console import browser, hub  # noqa: F401 (module fixtures: a --dev hub, headless Chromium)
from test_console import click, go, js, screenshot, set_value, sign_in, text


#: A page that loads the JavaScript client as `window.P` (PageServer serves the bundle).
PAGE = """<!doctype html><meta charset="utf-8"><title>components</title>
<script type="module">import * as P from "/pushhub-client.js"; window.P = P; window.harnessReady = true;</script>"""


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("console-components-screenshots")


@pytest.fixture
def registry(hub):
    """Carousel and Text registered, `home` published, profiles for ios 5.0.0 and android 4.0.0."""
    for name, body in (("Carousel", CAROUSEL), ("Text", TEXT)):
        status, answer = call(hub, "PUT", "/v1/components/" + name, body)
        assert status == 200, answer
    publish(hub, "home", HOME)
    for platform, version, components in (("ios", "5.0.0", {"Carousel": 1, "Text": 1}), ("android", "4.0.0", {"Text": 1})):
        status, answer = call(hub, "PUT", "/v1/apps/%s/%s/components" % (platform, version), {"components": components})
        assert status == 200, answer
    return {"Carousel": CAROUSEL, "Text": TEXT}


@pytest.fixture
def apps(hub, registry):
    """Seven clients of different builds, subscribed to home; each knows what it can render."""
    held = [
        App(hub, "u-new", ("ios", "6.0.0"), components={"Carousel": 2, "Text": 1}, screen="home"),
        App(hub, "u-old", ("ios", "5.2.0"), components={"Carousel": 1, "Text": 1}, screen="home"),
        App(hub, "u-text", ("web", "1.0.0"), components={"Text": 1}, screen="home"),
        App(hub, "u-none", ("web", "1.0.0"), components={}, screen="home"),
        App(hub, "u-ios-profile", ("ios", "5.1.0"), profile={"Carousel": 1, "Text": 1}, screen="home"),
        App(hub, "u-android-profile", ("android", "4.1.0"), profile={"Text": 1}, screen="home"),
        App(hub, "u-everything", ("android", "3.0.0"), screen="home"),
    ]
    yield held
    for app in held:
        app.close()




def rows(browser, selector):
    return browser.evaluate("[...document.querySelectorAll(%s)].map(r => [...r.cells].map(c => c.textContent))"
                            % js(selector + " tbody tr"))


def share(clients, total):
    return "%d of %d (%d %%)" % (clients, total, round(clients / total * 100))


def test_the_list_counts_the_clients_that_can_render_each_version(hub, browser, shots, apps, registry):
    expected = expected_counts(apps, registry)
    assert expected == {("Carousel", 1): 4, ("Carousel", 2): 2, ("Text", 1): 6}, expected
    listed = call(hub, "GET", "/v1/components")[1]
    assert listed["clients"] == len(apps)
    assert {(c["name"], v["version"]): v["clients"] for c in listed["components"] for v in c["versions"]} == expected

    sign_in(browser, hub, hub.token)
    go(browser, "#components", "!!document.querySelector('table.components')")
    assert browser.evaluate("document.getElementById('components-connected').dataset.clients") == str(len(apps))
    shown = rows(browser, "table.components")
    assert shown == [["Carousel", "v1", share(4, 7)], ["", "v2", share(2, 7)], ["Text", "v1", share(6, 7)]], shown
    assert browser.evaluate("document.querySelector('#nav a[aria-current=page]').dataset.view") == "components"

    # The profiles are the hub's, by platform then version.
    browser.wait_for("!!document.querySelector('table.app-profiles')", what="the profiles")
    profiles = call(hub, "GET", "/v1/apps")[1]["profiles"]
    assert [r[:3] for r in rows(browser, "table.app-profiles")] == [
        [p["platform"], p["app_version"], ", ".join("%s:%d" % kv for kv in sorted(p["components"].items()))] for p in profiles]

    # A client leaving is counted out at the next read (every 3 s).
    apps[0].close()
    browser.wait_for("document.getElementById('components-connected')?.dataset.clients === '6'", what="6 connected", timeout=15)
    assert rows(browser, "table.components")[1] == ["", "v2", share(1, 6)]
    assert browser.evaluate("a11yProblems()") == []
    screenshot(browser, shots, "components")


def test_a_components_page_shows_its_versions_and_schemas(hub, browser, shots, apps):
    sign_in(browser, hub, hub.token)
    go(browser, "#components", "!!document.querySelector('table.components a')")
    click(browser, "table.components a")
    browser.wait_for("location.hash === '#components/Carousel' && !!document.querySelector('table.component-versions')",
                     what="Carousel's page")
    assert rows(browser, "table.component-versions") == [["v1", share(4, 7), "shown below"], ["v2", share(2, 7), "shown below"]]
    for version in ("1", "2"):
        schema = browser.evaluate("document.querySelector('.component-schema[data-version=\"%s\"] pre.schema-json').textContent"
                                  % version)
        assert json.loads(schema) == CAROUSEL["versions"][version]["schema"]
        assert "autoplay" in text(browser, ".component-schema[data-version=\"2\"] .tree")
    assert browser.evaluate("a11yProblems()") == []
    screenshot(browser, shots, "component", height=1400)
    go(browser, "#components/Nope", "!!document.querySelector('#view .error')")
    assert "Nope is not registered" in text(browser, "#view .error")


def test_a_screen_as_a_build_sees_it_is_what_a_client_of_that_build_is_sent(hub, browser, shots, apps):
    sign_in(browser, hub, hub.token)
    go(browser, "#components", "!!document.querySelector('#build-view form')")
    browser.wait_for("document.querySelector('input[name=build_screen]').value === 'home'", what="the screen proposed")
    by_user = {app.user: app for app in apps}

    def show(platform, version, components, app, renders):
        set_value(browser, "input[name=build_platform]", platform)
        set_value(browser, "input[name=build_app_version]", version)
        set_value(browser, "input[name=build_components]", components)
        click(browser, "#show-build")
        snapshot = app.snapshot
        browser.wait_for("document.getElementById('build-preview')?.dataset.hash === %s" % js(snapshot["hash"]),
                         what="the tree of %s" % app.user)
        assert text(browser, "#build-hash") == snapshot["hash"]
        assert renders in text(browser, "#build-renders"), text(browser, "#build-renders")
        everything = call(hub, "GET", "/v1/screens/home")[1]["hash"]
        assert browser.evaluate("document.getElementById('build-compared').dataset.same") == str(snapshot["hash"] == everything).lower()

    show("ios", "5.1.0", "", by_user["u-ios-profile"], "the ios 5.0.0 profile (the newest at or below 5.1.0): Carousel:1, Text:1")
    assert "Swipe through our offers" in text(browser, "#build-preview")  # Carousel v2 became its Text fallback
    show("android", "4.1.0", "", by_user["u-android-profile"], "the android 4.0.0 profile")
    show("web", "1.0.0", "Carousel:2, Text:1", by_user["u-new"], "declared: Carousel:2, Text:1")
    show("web", "1.0.0", "Text:1", by_user["u-text"], "declared: Text:1")
    show("android", "3.0.0", "", by_user["u-everything"], "everything: no android profile at or below 3.0.0")
    assert browser.evaluate("document.getElementById('build-compared').dataset.same") == "true"
    assert browser.evaluate("a11yProblems()") == []
    screenshot(browser, shots, "components-build", height=1300)

    # The hub refuses a bad list; the refusal is shown at the field.
    set_value(browser, "input[name=build_components]", "Carousel:0")
    click(browser, "#show-build")
    browser.wait_for("document.querySelector('input[name=build_components]').getAttribute('aria-invalid') === 'true'",
                     what="the refusal at the components field")
    assert "400" in browser.evaluate("document.querySelector('input[name=build_components]').closest('.field')"
                                     ".querySelector('.field-message').textContent")


def test_a_read_token_sees_the_components_page(hub, browser, registry):
    status, created = call(hub, "POST", "/v1/tokens", {"name": "components-viewer", "scopes": ["read"]})
    assert status == 200, created
    sign_in(browser, hub, created["token"])
    go(browser, "#components", "!!document.querySelector('table.components') && !!document.querySelector('table.app-profiles')")
    wait("the registry", lambda: rows(browser, "table.components")[0][0] == "Carousel")
    assert browser.evaluate("a11yProblems()") == []


def test_the_javascript_client_declares_its_components_to_a_real_hub(hub, browser, apps):
    """The JavaScript client (the bundle of clients/js/src, on a page of its own origin) made with
    `components` is sent the tree a Python client that declared the same is sent, its fetch gets
    that tree too, and the hub counts it; a bad list throws before anything is sent."""
    declared = next(app for app in apps if app.user == "u-text")  # {"Text": 1}
    server = PageServer({"/": ("text/html", PAGE)})
    try:
        browser.open(server.url("/"))
        browser.evaluate("""(() => {
            window.jsClient = new P.PushHub({ url: %s, token: %s, app: { platform: 'web', version: '1.0.0' },
                                              components: { Text: 1 } });
            window.jsClient.subscribe('home', (tree, meta) => { window.jsHash = meta.hash; });
            return true; })()""" % (js(hub.url + "/v1/connect"), js(client_token(hub, "u-js"))))
        browser.wait_for("window.jsHash === %s" % js(declared.snapshot["hash"]), what="the JavaScript client's tree")
        fetched = browser.evaluate("window.jsClient.fetchScreen('home').then(r => ({ hash: r.hash, status: r.status }))")
        assert fetched == {"hash": declared.snapshot["hash"], "status": 304}, fetched
        wait("the JavaScript client counted", lambda: call(hub, "GET", "/v1/components")[1]["clients"] == len(apps) + 1)
        thrown = browser.evaluate("""(() => {
            try { new P.PushHub({ url: 'ws://127.0.0.1:1/v1/connect', components: { Text: 0 } }); return null; }
            catch (error) { return error.name + ': ' + error.message; } })()""")
        assert thrown.startswith("TypeError: PushHub: components must map") and "Text is 0" in thrown, thrown
    finally:
        browser.evaluate("window.jsClient?.close(), true")
        server.close()
