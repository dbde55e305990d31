"""hubctl's releases (issue 27, DESIGN §15) against a real hub with real clients: `screen release`
(and its dry run), `release list | status | percent | promote | halt`. What hubctl prints is
checked against the admin API's own answer and against the clients: who the reference bucket
(`u64(SHA-256("release/{screen}/{id}/{unit}")) % 10000 < percent × 100`) exposes is who gets the
candidate, and the counts hubctl shows are the clients the test holds."""
import json
import os
import subprocess

import pytest

from admin import call, publish
from conftest import BIN
from release_clients import Device, exposed, wait

BASE = {"type": "screen", "children": [{"id": "hero", "type": "text", "text": "Welcome"}]}
CANDIDATE = {"type": "screen", "children": [{"id": "hero", "type": "carousel", "items": ["a", "b"]}]}


def hubctl(hub, *args):
    return subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=20, cwd="/",
                          env={**os.environ, "HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port,
                               "HUBCTL_TOKEN": hub.token})


def ok(hub, *args):
    result = hubctl(hub, *args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def fields(text):
    """The `key: value` rows of hubctl's human output (until the first section heading)."""
    rows = {}
    for line in text.splitlines():
        if line.endswith(":") or line.startswith("  "):
            break
        key, value = line.split(":", 1)
        rows[key.strip()] = value.strip()
    return rows


def section(text, heading):
    """The indented lines under `heading:`, each split into its columns."""
    lines = text.splitlines()
    if heading + ":" not in lines:
        return []
    rows = []
    for line in lines[lines.index(heading + ":") + 1:]:
        if not line.startswith("  "):
            break
        rows.append(line.split())
    return rows


@pytest.fixture
def devices(hub_factory):
    """A hub (anonymous clients allowed) whose `home` is at v1, and 24 devices subscribed to it."""
    hub = hub_factory("--dev")
    publish(hub, "home", BASE)
    held = [Device(hub, "dev-%02d" % n) for n in range(24)]
    yield hub, held
    for device in held:
        device.close()


def test_a_release_from_dry_run_to_halt_through_hubctl(devices, tmp_path):
    hub, held = devices
    names = [d.device for d in held]
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(CANDIDATE))
    assert call(hub, "PUT", "/v1/cohorts/qa", {"users": ["tester"]})[0] == 200

    # The dry run counts what the admin API's dry run counts, and starts nothing.
    dry = ok(hub, "screen", "release", "home", str(candidate), "--qa-cohort", "qa", "--percent", "100", "--dry-run")
    status, answer = call(hub, "POST", "/v1/screens/home/releases?dry_run=true",
                          {"tree": CANDIDATE, "qa_cohort": "qa", "percent": 100})
    assert status == 200 and answer["would_expose"] == answer["subscribers"] == 24, answer
    assert fields(dry)["would expose"] == "24 of 24 connected subscribers", dry
    assert fields(dry)["change"].startswith("v1 -> v2"), dry
    assert call(hub, "GET", "/v1/screens/home/releases")[1]["releases"] == []

    # Started at 25 %: hubctl shows the release the hub keeps, and "sent" is who the bucket exposes.
    started = ok(hub, "screen", "release", "home", str(candidate), "--qa-cohort", "qa", "--percent", "25",
                 "--max-error-rate", "0.5", "--min-units", "3", "--message", "carousel hero")
    shown = fields(started)
    release_id = shown["release"]
    kept = call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]
    assert (kept["status"], kept["percent"], kept["qa_cohort"], kept["message"]) == ("rolling", 25, "qa", "carousel hero")
    assert kept["guard"] == {"max_error_rate": 0.5, "min_units": 3}
    assert (shown["status"], shown["versions"], shown["percent"]) == ("rolling", "v1 -> v2", "25 % and QA cohort qa")
    first = exposed(release_id, names, 25)
    assert shown["sent"].split()[0] == str(len(first)), (shown, sorted(first))
    wait("the exposed devices on v2", lambda: all(d.version == (2 if d.device in first else 1) for d in held))

    # status without an ID is the rolling release; --json is the hub's answer.
    status_text = ok(hub, "release", "status", "home")
    shown = fields(status_text)
    assert (shown["release"], shown["status"], shown["exposed"]) == (release_id, "rolling", str(len(first)))
    assert shown["guard"] == "halts above 50 % once 3 units reported"
    assert [row[1:4] for row in section(status_text, "steps")] == [["root", "start", "25"]]
    as_json = json.loads(ok(hub, "--json", "release", "status", "home"))
    assert as_json == call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]

    # percent --dry-run: how many connected clients 60 % would expose, and how many newly.
    wider = exposed(release_id, names, 60)
    assert first <= wider, "raising the percent moved a unit out"
    dry = fields(ok(hub, "release", "percent", "home", "60", "--dry-run"))
    assert dry["would expose"] == "%d of 24 connected subscribers" % len(wider), dry
    assert dry["newly exposed"] == str(len(wider - first)), dry
    assert call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]["percent"] == 25
    lower = hubctl(hub, "release", "percent", "home", "10")
    assert lower.returncode == 1 and "409" in lower.stderr, lower.stderr
    raised = fields(ok(hub, "release", "percent", "home", "60"))
    assert raised["percent"] == "60 % and QA cohort qa" and raised["sent"].split()[0] == str(len(wider - first)), raised
    wait("the newly exposed devices on v2", lambda: all(d.version == (2 if d.device in wider else 1) for d in held))

    # What the exposed devices report: all rendered it but one, whose Carousel threw.
    failing = sorted(wider)[0]
    for device in held:
        if device.device == failing:
            device.render_error("Carousel", "index out of range")
        elif device.device in wider:
            device.rendered()
    wait("every report counted",
         lambda: call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]["health"]["reported"] == len(wider))
    status_text = ok(hub, "release", "status", "home", release_id)
    shown = fields(status_text)
    assert (shown["exposed"], shown["rendered"], shown["errored"]) == (str(len(wider)), str(len(wider) - 1), "1")
    rate = round(100 / len(wider), 2)
    assert shown["error rate"] == "%s %% (1 of %d reported)" % (("%g" % rate), len(wider)), shown
    assert section(status_text, "errors by component") == [["Carousel", "1"]]
    recent = section(status_text, "recent errors")
    assert len(recent) == 1 and recent[0][1:] == [failing, "Carousel", "index", "out", "of", "range"], recent
    assert [row[2] for row in section(status_text, "steps")] == ["start", "percent"]
    listed = ok(hub, "release", "list", "home").splitlines()
    assert len(listed) == 1 and listed[0].split()[:2] == [release_id, "rolling"], listed

    # A plain publish is refused while it rolls, naming the release.
    refused = hubctl(hub, "screen", "publish", "home", str(candidate))
    assert refused.returncode == 1 and release_id in refused.stderr, refused.stderr

    # halt: a reason is required; the exposed devices go back to the base tree as v3, nobody else hears.
    assert hubctl(hub, "release", "halt", "home").returncode == 2
    assert call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]["status"] == "rolling"
    halted = ok(hub, "release", "halt", "home", "--reason", "carousel crash")
    shown = fields(halted)
    assert shown["status"] == "halted" and shown["halted"].endswith("by root: carousel crash"), shown
    assert shown["reverted"].startswith("v3 ") and shown["sent"].split()[0] == str(len(wider)), shown
    wait("the exposed devices back on the base tree",
         lambda: all(d.received == ([2, 3] if d.device in wider else []) for d in held))
    base_hash = call(hub, "GET", "/v1/screens/home")[1]["hash"]
    assert all(d.hash == base_hash for d in held if d.device in wider)

    # Nothing rolls now: status shows the newest, with every step; promote has nothing to act on.
    status_text = ok(hub, "release", "status", "home")
    assert fields(status_text)["release"] == release_id and fields(status_text)["status"] == "halted"
    steps = section(status_text, "steps")
    assert [row[1:3] for row in steps] == [["root", "start"], ["root", "percent"], ["root", "halt"]], steps
    assert steps[1][3] == "60" and steps[2][3:] == ["carousel", "crash"], steps
    promote = hubctl(hub, "release", "promote", "home")
    assert promote.returncode == 1 and "no rolling release" in promote.stderr and release_id in promote.stderr


def test_promote_by_id_gives_everyone_the_candidate(devices, tmp_path):
    hub, held = devices
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(CANDIDATE))
    started = json.loads(ok(hub, "--json", "screen", "release", "home", str(candidate)))
    assert started["status"] == "rolling" and started["percent"] == 0 and started["sent"] == 0, started
    assert started["guard"] == {"max_error_rate": 0.02, "min_units": 50}
    release_id = started["release"]
    assert all(d.received == [] for d in held)  # 0 % and no QA cohort: nobody yet
    unknown = hubctl(hub, "release", "status", "home", "r-nope")
    assert unknown.returncode == 1 and "404" in unknown.stderr
    promoted = fields(ok(hub, "release", "promote", "home", release_id))
    assert promoted["status"] == "promoted" and promoted["sent"].split()[0] == "24", promoted
    wait("every device on v2", lambda: all(d.received == [2] and d.hash == started["hash"] for d in held))
    assert call(hub, "GET", "/v1/screens/home")[1]["version"] == 2
    status_text = ok(hub, "release", "status", "home")
    assert fields(status_text)["status"] == "promoted"
    assert [row[1:3] for row in section(status_text, "steps")] == [["root", "start"], ["root", "promote"]]
    again = hubctl(hub, "release", "promote", "home", release_id)
    assert again.returncode == 1 and "409" in again.stderr, again.stderr
    as_json = json.loads(ok(hub, "--json", "release", "list", "home"))
    assert as_json == call(hub, "GET", "/v1/screens/home/releases")[1]


def test_a_guard_halt_is_shown_with_its_reason(devices, tmp_path):
    hub, held = devices
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(CANDIDATE))
    release_id = fields(ok(hub, "screen", "release", "home", str(candidate), "--percent", "100",
                           "--max-error-rate", "0.2", "--min-units", "4"))["release"]
    wait("every device on v2", lambda: all(d.version == 2 for d in held))
    for device in held[:3]:
        device.render_error("Carousel", "bad item")
    held[3].rendered()
    wait("the guard's halt",
         lambda: call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]["status"] == "halted")
    status_text = ok(hub, "release", "status", "home")
    shown = fields(status_text)
    assert shown["status"] == "halted" and " by guard: " in shown["halted"], shown
    reason = call(hub, "GET", "/v1/screens/home/releases/" + release_id)[1]["halt"]["reason"]
    assert shown["halted"].endswith("by guard: " + reason)
    assert section(status_text, "steps")[-1][1:3] == ["guard", "halt"]


def test_usage_errors_send_nothing(devices, tmp_path):
    hub, _ = devices
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(CANDIDATE))
    (tmp_path / "broken.json").write_text("{not json")
    for args, message in (
        (("screen", "release", "home"), "takes NAME FILE"),
        (("screen", "release", "home", str(tmp_path / "broken.json")), "is not JSON"),
        (("screen", "release", "home", str(tmp_path / "absent.json")), "no such file"),
        (("screen", "release", "home", str(candidate), "--percent", "ten"), "--percent wants a number"),
        (("screen", "release", "home", str(candidate), "--min-units", "5.5"), "--min-units wants a whole number"),
        (("screen", "release", "home", str(candidate), "--max-error-rate", "x"), "--max-error-rate wants"),
        (("screen", "release", "home", str(candidate), "--percnt", "5"), "Did you mean '--percent'?"),
        (("screen", "publish", "home", str(candidate), "--percent", "5"), "'screen publish' takes no --percent"),
        (("release", "percent", "home", "abc"), "wants P, a number"),
        (("release", "percent", "home"), "takes NAME P [ID]"),
        (("release", "halt", "home"), "needs --reason"),
        (("release", "promote", "home", "--reason", "x"), "takes no --reason"),
        (("release", "status", "home", "--dry-run"), "takes no --dry-run"),
        (("release", "stauts", "home"), "Did you mean 'release status'?"),
        (("release",), "Missing a release subcommand"),
    ):
        result = hubctl(hub, *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    assert call(hub, "GET", "/v1/screens/home/releases")[1]["releases"] == []
    assert call(hub, "GET", "/v1/screens/home")[1]["version"] == 1
    none = hubctl(hub, "release", "status", "home")
    assert none.returncode == 1 and "home has no releases" in none.stderr, none.stderr
    assert hubctl(hub, "release", "list", "home").stdout.strip() == "home has no releases"


def test_help_and_completion_name_the_release_commands():
    top = subprocess.run([os.path.join(BIN, "hubctl"), "--help"], capture_output=True, text=True, timeout=10)
    assert any(line.split()[:1] == ["release"] for line in top.stdout.splitlines()), top.stdout
    helped = subprocess.run([os.path.join(BIN, "hubctl"), "release", "--help"], capture_output=True, text=True, timeout=10)
    assert helped.returncode == 0 and helped.stdout.startswith("OVERVIEW:")
    listed = helped.stdout.split("SUBCOMMANDS:")[1].split()
    assert all(name in listed for name in ("list", "status", "percent", "promote", "halt"))
    assert "--reason TEXT" in helped.stdout and "--dry-run" in helped.stdout
    screen = subprocess.run([os.path.join(BIN, "hubctl"), "screen", "--help"], capture_output=True, text=True, timeout=10)
    assert "release NAME FILE" in screen.stdout
    for option in ("--qa-cohort C", "--percent P", "--max-error-rate R", "--min-units N", "--dry-run"):
        assert option in screen.stdout, option
    script = subprocess.run([os.path.join(BIN, "hubctl"), "completion", "bash"], capture_output=True, text=True,
                            timeout=10).stdout
    completed = subprocess.run(
        ["bash", "-c", script + '\nCOMP_WORDS=(hubctl release pro); COMP_CWORD=2; _hubctl; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, timeout=10)
    assert completed.stdout.split() == ["promote"], completed
