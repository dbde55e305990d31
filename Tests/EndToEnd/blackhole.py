"""A TCP proxy that can turn the links it carries into black holes: what a dropped NAT mapping, a
pulled cable or a hub gone without a FIN look like to a client. Used by the dead-link tests of
the JavaScript client (test_js_client.py) and, run as a program, of the Swift client
(Tests/PushHubClientTests/ClientResilienceTests.swift)."""
import selectors
import socket
import threading


class BlackHoleProxy:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`target_port`, both directions, one thread.

    `black_hole()` stops forwarding on every connection it carries at that moment, in both
    directions, and closes nothing: no FIN, no RST, and the kernel still acknowledges what
    arrives, so neither end can tell until it expects an answer. Connections accepted later are
    forwarded as usual: the working path a client reconnects through."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.lock = threading.Lock()
        self.links = []  # (client socket, hub socket), forwarding or swallowed
        self.swallowed = []
        self.waker_r, self.waker_w = socket.socketpair()
        self.selector.register(self.waker_r, selectors.EVENT_READ, "wake")
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def black_hole(self):
        """Every link carried now stops forwarding (and stays open); returns how many there were."""
        with self.lock:
            for link in self.links:
                for sock in link:
                    self.selector.unregister(sock)
            count = len(self.links)
            self.swallowed += self.links
            self.links = []
        return count

    def carried(self):
        """How many links are being forwarded."""
        with self.lock:
            return len(self.links)

    def close(self):
        self.stopped = True
        self.waker_w.send(b"x")
        self.thread.join(timeout=5)
        for link in self.links + self.swallowed:
            for sock in link:
                sock.close()
        self.listener.close()
        self.waker_r.close()
        self.waker_w.close()

    def _run(self):
        while not self.stopped:
            for key, _ in self.selector.select(timeout=0.5):
                if key.data == "wake":
                    return
                with self.lock:
                    if key.data is None:
                        self._accept()
                    elif key.fileobj.fileno() >= 0 and any(key.fileobj in link for link in self.links):
                        self._forward(key.fileobj, key.data)

    def _accept(self):
        client, _ = self.listener.accept()
        try:
            hub = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
        except OSError:
            client.close()
            return
        for sock in (client, hub):
            sock.setblocking(True)
        self.selector.register(client, selectors.EVENT_READ, hub)
        self.selector.register(hub, selectors.EVENT_READ, client)
        self.links.append((client, hub))

    def _forward(self, source, destination):
        try:
            data = source.recv(65536)
            if data:
                destination.sendall(data)
                return
        except OSError:
            pass
        # One end closed (or failed): close the link as a plain proxy would.
        for link in self.links:
            if source in link:
                self.links.remove(link)
                for sock in link:
                    self.selector.unregister(sock)
                    sock.close()
                break


if __name__ == "__main__":
    # For tests in other languages (Tests/PushHubClientTests): `blackhole.py TARGET_PORT` prints
    # the port it listens on, then answers each line on stdin: "black_hole" and "carried" print
    # their count; end of input closes it.
    import sys
    proxy = BlackHoleProxy(int(sys.argv[1]))
    print(proxy.port, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "black_hole":
            print(proxy.black_hole(), flush=True)
        elif command == "carried":
            print(proxy.carried(), flush=True)
    proxy.close()
