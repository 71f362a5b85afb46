"""A free TCP port on 127.0.0.1, for a test server started later by its port number (a
subprocess, or a server restarted on the same port). Another process may take it between
the probe and the start: the tests that use it say so when their server cannot bind."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
