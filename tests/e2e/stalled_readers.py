#!/usr/bin/env python3
"""Event-stream clients that never read, for tests/e2e/stream_stall.test.mjs.

Opens --count TCP connections to 127.0.0.1:--port, each with a receive buffer
of --rcvbuf bytes set before it connects (Node cannot set SO_RCVBUF on a TCP
socket), from the --from source addresses in turn (comma-separated; default
the kernel's choice), and sends `--method --path` on each (with --body as a
JSON body, for POST /v1/games/events and /v1/games/export). Not one byte of any answer is ever
read. Writes JSON lines on stdout: {"open": N} once every request is sent,
then {"closed": I} as connection I is closed or reset by the server (seen
with poll(): POLLRDHUP, POLLHUP or POLLERR, which need no read), closing its
socket then, and {"left": N} when all are closed, stdin is closed or
--seconds have passed (the sockets still open are closed on exit).
"""
import argparse
import json
import select
import socket
import sys
import time


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--rcvbuf", type=int, default=4096)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body", default=None)
    parser.add_argument("--from", dest="sources", default="")
    args = parser.parse_args()

    head = f"{args.method} {args.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/x-ndjson\r\n"
    body = (args.body or "").encode()
    if args.body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    request = (head + "\r\n").encode() + body
    sources = [a for a in args.sources.split(",") if a]
    sockets = {}
    poller = select.poll()
    for index in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
        if sources:
            s.bind((sources[index % len(sources)], 0))
        s.connect(("127.0.0.1", args.port))
        s.sendall(request)
        sockets[s.fileno()] = (index, s)
        poller.register(s, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    poller.register(sys.stdin, select.POLLIN | select.POLLHUP)
    say({"open": len(sockets)})

    deadline = time.monotonic() + args.seconds
    while sockets and time.monotonic() < deadline:
        for fd, _ in poller.poll(100):
            if fd == sys.stdin.fileno():
                deadline = 0  # the test is done with us
                continue
            index, s = sockets.pop(fd)
            poller.unregister(fd)
            s.close()
            say({"closed": index})
    say({"left": len(sockets)})
    for _, s in sockets.values():
        s.close()


if __name__ == "__main__":
    main()
