"""A tiny admin API client for the end-to-end tests."""
import json
import time
import urllib.error
import urllib.request


def call(hub, method, path, body=None, token=None, raw=None):
    """Returns (status, parsed JSON or text)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (hub.admin_port, path), data=data, method=method,
                                     headers={"Authorization": "Bearer " + (token or hub.token)})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        payload = error.read()
        status = error.code
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, payload.decode()


def publish(hub, name, tree):
    status, answer = call(hub, "PUT", "/v1/screens/" + name, tree)
    assert status == 200, answer
    return answer


def metric(hub, name):
    """The value of one unlabelled metric from /metrics."""
    status, text = call(hub, "GET", "/metrics")
    assert status == 200, text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[-1]))
    raise AssertionError("no metric " + name)


def receipts_once_acked(hub, sync_id, timeout=5.0):
    """The sync's receipts once they count an ack, or as they are when `timeout` runs out."""
    deadline = time.time() + timeout
    while True:
        receipts = call(hub, "GET", "/v1/syncs/" + sync_id)[1]["receipts"]
        if receipts["acked"] >= 1 or time.time() > deadline:
            return receipts
        time.sleep(0.05)
