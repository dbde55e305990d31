#!/usr/bin/env python3
"""Reproduction of the soak's `spread_gap` counter (DESIGN §5/§9: "a sync either reaches a
signed-in client live or is in its last_sync replay").

Four anonymous clients are online (two per loop); a sync to all with `spread: 20s` is sent, then a
plain one. A client whose turn in the spread has not come yet receives the plain sync (seq 2)
first, disconnects, and reconnects with `last_sync: 2` (the highest seq it received): the spread
sync (seq 1) is then neither delivered live (its connection is gone) nor replayed (1 <= last_sync).
Exit 1 when a client never gets it, 0 when every client does.

  .venv/bin/python bench/soak/repro_spread_gap.py [PATH/TO/pushhub]
"""
import asyncio
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from websockets.asyncio.client import connect  # noqa: E402

from common import Admin, HubProcess  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


async def drain(ws, seconds):
    seqs = []
    try:
        while True:
            seqs.append(json.loads(await asyncio.wait_for(ws.recv(), seconds))["seq"])
    except asyncio.TimeoutError:
        return seqs


async def main(binary):
    scratch = tempfile.mkdtemp(prefix="spread-gap-")
    hub = HubProcess(binary, os.path.join(scratch, "data"), scratch, ["--dev", "--loops", "2"])
    await hub.start()
    try:
        admin = Admin(hub)
        clients = []
        for i in range(4):
            ws = await connect(hub.ws_url, compression=None)
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d%d" % i}))
            json.loads(await ws.recv())
            clients.append(ws)
        print(await admin.request("POST", "/v1/syncs", {"target": {"all": True}, "spread": "20s"}))
        print(await admin.request("POST", "/v1/syncs", {"target": {"all": True}}))
        lost = 0
        for i, ws in enumerate(clients):
            before = await drain(ws, 0.5)
            await ws.close()
            ws = await connect(hub.ws_url, compression=None)
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d%d" % i,
                                      "last_sync": max(before)}))
            json.loads(await ws.recv())
            after = await drain(ws, 1.0) if 1 in before else await drain(ws, 22)
            await ws.close()
            verdict = "ok" if 1 in before + after else "LOST s-1"
            lost += verdict != "ok"
            print("d%d: received %s, reconnected with last_sync=%d, then %s: %s" % (
                i, before, max(before), after, verdict))
        return 1 if lost else 0
    finally:
        hub.kill9()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else
                              os.path.join(ROOT, ".build-soak", "release", "pushhub"))))
