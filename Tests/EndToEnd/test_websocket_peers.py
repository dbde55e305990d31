"""pushhub against Python's `websockets` client: echo, ping, fragments, close, subprotocol."""
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


def test_text_and_binary_messages_are_echoed(hub):
    with connect(hub.url + "/echo") as ws:
        ws.send("hello, hub")
        assert ws.recv(timeout=5) == "hello, hub"
        ws.send(bytes(range(256)))
        assert ws.recv(timeout=5) == bytes(range(256))
        ws.send("κόσμε ✓")
        assert ws.recv(timeout=5) == "κόσμε ✓"


def test_large_message_of_one_mebibyte_round_trips(hub):
    payload = bytes(i % 251 for i in range(1 << 20))
    with connect(hub.url + "/echo", max_size=None) as ws:
        ws.send(payload)
        assert ws.recv(timeout=10) == payload


def test_ping_is_answered_with_pong(hub):
    with connect(hub.url + "/echo") as ws:
        pong = ws.ping(b"are you there")
        assert pong.wait(timeout=5)


def test_fragmented_message_is_reassembled(hub):
    with connect(hub.url + "/echo") as ws:
        ws.send(["frag", "ment", "ed ✓"])
        assert ws.recv(timeout=5) == "fragmented ✓"
        ws.send([b"\x00\x01", b"\x02"])
        assert ws.recv(timeout=5) == b"\x00\x01\x02"


def test_client_close_is_echoed_with_its_code(hub):
    ws = connect(hub.url + "/echo")
    ws.close(code=4000, reason="bye")
    assert ws.protocol.close_rcvd.code == 4000  # the hub echoed our code (RFC 6455 §5.5.1)
    assert ws.protocol.close_rcvd_then_sent is False  # we sent first, the hub answered
    hub.wait_for_connections(0)


def test_subprotocol_is_negotiated_on_connect_path(hub):
    with connect(hub.url + "/v1/connect", subprotocols=["pushhub.v1"]) as ws:
        assert ws.subprotocol == "pushhub.v1"


def test_silent_client_is_closed_after_the_hello_timeout(hub):
    with connect(hub.url + "/v1/connect") as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1008
        assert closed.value.rcvd.reason == "hello timeout"


def test_oversized_client_message_is_closed_with_1009(hub):
    with connect(hub.url + "/v1/connect", max_size=None) as ws:
        ws.send(b"x" * (64 * 1024 + 1))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1009


def test_sigterm_closes_clients_with_1001_and_exits_zero(hub):
    ws = connect(hub.url + "/echo")
    ws.send("still here")
    assert ws.recv(timeout=5) == "still here"
    hub.process.send_signal(15)
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=5)
    assert closed.value.rcvd.code == 1001
    assert hub.process.wait(timeout=15) == 0
