"""The control port's line protocol: one command per line in, one answer per line out.

Parsing and running a command (:func:`execute`) is separate from the socket (:func:`serve`,
:func:`send`), so the command line and a test speak the same words. See the package
docstring for the commands.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

Network = Any  # a minikafka.netfault.network.Network, which imports this module (not the other way)

USAGE = (
    "commands: partition A B [one-way] | reset A B [one-way] | isolate A [reset] | "
    "delay A B MS [JITTER] [request|response] | drop A B FRACTION | heal [A B] | status | routes"
)


def _one_way(extra: list[str]) -> bool:
    if extra and extra != ["one-way"]:
        raise ValueError(f"expected 'one-way' or nothing after the two nodes, not {' '.join(extra)!r}")
    return bool(extra)


def execute(net: Network, line: str) -> str:
    """Run one command on ``net``; the answer is ``ok [json]`` or ``error <sentence>``."""
    words = line.split()
    if not words:
        return "error an empty line is not a command; " + USAGE
    verb, args = words[0].lower(), words[1:]
    try:
        answer = _run(net, verb, args)
    except (ValueError, IndexError) as e:
        return f"error {e or 'missing arguments'}; {USAGE}"
    return "ok" if answer is None else "ok " + json.dumps(answer, sort_keys=True)


def _run(net: Network, verb: str, args: list[str]) -> object:
    if verb == "partition":
        net.partition(args[0], args[1], one_way=_one_way(args[2:]))
    elif verb == "reset":
        net.reset(args[0], args[1], one_way=_one_way(args[2:]))
    elif verb == "isolate":
        net.isolate(args[0], mode="reset" if args[1:] == ["reset"] else "partition")
    elif verb == "delay":
        rest = args[3:]
        direction = rest.pop() if rest and rest[-1] in ("request", "response") else None
        net.delay(args[0], args[1], float(args[2]), float(rest[0]) if rest else 0.0, direction=direction)
    elif verb == "drop":
        net.drop(args[0], args[1], float(args[2]))
    elif verb == "heal":
        if len(args) not in (0, 2):
            raise ValueError("heal takes no node (everything) or two nodes")
        net.heal(*args)
    elif verb == "status":
        return net.status()
    elif verb == "routes":
        return net.routes()
    else:
        raise ValueError(f"unknown command {verb!r}")
    return None


async def serve(net: Network, host: str, port: int) -> asyncio.Server:
    """Answer commands on ``host:port`` on the network's own loop."""

    async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(execute(net, line.decode("utf-8", "replace")).encode() + b"\n")
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    return await asyncio.start_server(session, host, port)


def send(address: str, line: str, timeout: float = 10.0) -> str:
    """Send one command to a control port and return its answer line."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout) as sock:
        sock.sendall(line.strip().encode() + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer.decode().strip()
