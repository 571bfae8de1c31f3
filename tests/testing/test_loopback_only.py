"""`harness_core.testing.loopback_only`: a command run in a network namespace with only loopback, under strace, is
seen trying a connection beyond loopback or a DNS lookup (and stopped), and reaches loopback unhindered; the trace
parser reads IPv4 and IPv6 calls of every kind. What the offline contract test relies on to fail a provider that
merely tries to reach the network."""

from __future__ import annotations

import sys
import textwrap

import pytest

from harness_core.testing.loopback_only import attempts_in, loopback_only_unavailable, run_loopback_only

needs_namespace = pytest.mark.skipif(loopback_only_unavailable() is not None,
                                     reason=f"{loopback_only_unavailable()}")


@needs_namespace
def test_a_connection_beyond_loopback_is_seen_and_goes_nowhere() -> None:
    code = textwrap.dedent("""
        import socket
        try:
            socket.create_connection(("192.0.2.1", 3128), timeout=5)
        except OSError as exc:
            print(exc.errno)
    """)
    watched = run_loopback_only([sys.executable, "-c", code], timeout=60)
    assert watched.returncode == 0 and watched.stdout.strip() == "101"  # ENETUNREACH: nothing left the machine
    assert [(a.call, a.address, a.port) for a in watched.attempts] == [("connect", "192.0.2.1", 3128)]


@needs_namespace
def test_loopback_works_and_is_not_reported() -> None:
    code = textwrap.dedent("""
        import socket
        server = socket.create_server(("127.0.0.1", 0))
        client = socket.create_connection(server.getsockname(), timeout=5)
        peer, _ = server.accept()
        client.sendall(b"hi")
        print(peer.recv(2).decode())
    """)
    watched = run_loopback_only([sys.executable, "-c", code], timeout=60)
    assert watched.stdout.strip() == "hi" and watched.attempts == ()


@needs_namespace
def test_a_name_lookup_is_reported_wherever_the_resolver_is() -> None:
    code = "import socket\ntry:\n    socket.getaddrinfo('api.example.com', 443)\nexcept OSError:\n    pass\n"
    watched = run_loopback_only([sys.executable, "-c", code], timeout=60)
    assert any(a.port == 53 for a in watched.attempts), watched.attempts


def test_the_trace_is_read_for_ipv4_ipv6_and_each_call() -> None:
    trace = "\n".join([
        '7 connect(3, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.1.2.3")}, 16) = -1 ENETUNREACH',
        '7 connect(4, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '8 sendto(5, "q", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 1',
        '9 connect(6, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28 <unfinished ...>',
        '9 connect(6, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '10 connect(7, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0',
        '11 sendto(7, "\\1", 1, MSG_NOSIGNAL, NULL, 0) = 1',
    ])
    assert [(a.pid, a.call, a.address, a.port) for a in attempts_in(trace)] == [
        (7, "connect", "10.1.2.3", 443), (8, "sendto", "127.0.0.53", 53), (9, "connect", "2001:db8::1", 443)]


def test_a_connect_to_a_host_resolvers_unix_socket_is_an_attempt() -> None:
    """Unix sockets are not isolated by the namespace: nscd or systemd-resolved would resolve (and so reach the
    network) for the command. A connect that succeeded to one is reported; one that failed, or another socket, is
    not."""
    trace = "\n".join([
        '12 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = 0',
        '13 connect(3, {sa_family=AF_UNIX, sun_path="/run/systemd/resolve/io.systemd.Resolve"}, 110) = 0',
        '14 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file)',
        '15 connect(3, {sa_family=AF_UNIX, sun_path="/tmp/harness-supervise/ctl.sock"}, 110) = 0',
    ])
    assert [(a.pid, a.address, a.port) for a in attempts_in(trace)] == [
        (12, "/var/run/nscd/socket", 0), (13, "/run/systemd/resolve/io.systemd.Resolve", 0)]
