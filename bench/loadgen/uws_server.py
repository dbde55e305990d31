"""Optional yardstick: uWebSockets (through PyPI `socketify`) with rawserver's interface, so that
loadgen drives it like ../shared/bench-reference/rawserver: `GET /ws` upgrades and subscribes the
client to one topic, `GET /echo` echoes, `POST /publish` broadcasts its body as one text frame
through uWS's native pub/sub (the fan-out runs in C++, not in Python), then answers 200.
Connects run one Python callback each (the subscribe), so connects/s and memory are not "pure C++".
`GET /v1/connect` answers the first text message with a welcome (one Python callback per hello).

Usage: python uws_server.py PORT   (127.0.0.1; needs `pip install socketify` and libuv1)."""
import sys

from socketify import App, AppListenOptions, CompressOptions, OpCode

port = int(sys.argv[1])
app = App()
behaviour = {"compression": CompressOptions.DISABLED, "idle_timeout": 0, "max_payload_length": 16 << 20,
             "max_backpressure": 64 << 20}
app.ws("/ws", dict(behaviour, open=lambda ws: ws.subscribe("all"), message=lambda ws, msg, op: None))
app.ws("/echo", dict(behaviour, message=lambda ws, msg, op: ws.send(msg, op)))
# The same round trip a PushHub client makes after its upgrade: any text message (the hello) is
# answered with a welcome-shaped message, so `loadgen connect --path /v1/connect` compares like
# with like (upgrade + hello + welcome).
WELCOME = '{"type":"welcome","session":"s-0000000000000","user":null,"heartbeat_s":25,"sync_seq":0}'
app.ws("/v1/connect", dict(behaviour, message=lambda ws, msg, op: ws.send(WELCOME, OpCode.TEXT)))


def publish(res, req):
    chunks = []

    def on_data(res, data, is_end):
        if data:
            chunks.append(data)
        if is_end:
            app.publish("all", b"".join(chunks), OpCode.TEXT)
            res.end("")

    res.on_data(on_data)


app.post("/publish", publish)
app.listen(AppListenOptions(port=port, host="127.0.0.1"), lambda config: print("listening", port, flush=True))
app.run()
