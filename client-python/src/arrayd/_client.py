"""Connecting: :func:`connect` gives a :class:`Client`, which lists devices and opens sessions."""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

import grpc

from ._dtypes import name_of_wire
from ._errors import from_rpc
from .v1 import devices_pb2

#: The largest message either side sends (the daemon's default limit).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class TLS:
    """TLS for :func:`connect`: PEM bytes or file paths. ``root_certificates`` verifies the daemon (None: the
    system's roots); ``private_key`` with ``certificate_chain`` is this client's identity for mutual TLS."""

    root_certificates: bytes | str | None = None
    private_key: bytes | str | None = None
    certificate_chain: bytes | str | None = None
    server_name: str | None = None


@dataclasses.dataclass(frozen=True)
class Device:
    """One device of the daemon (``id`` as commands name it, e.g. ``"cpu:0"``)."""

    id: str
    backend: str
    name: str
    memory_bytes: int
    compute_units: int
    unified_memory: bool
    dtypes: tuple[str, ...]
    #: buffers start at multiples of this; a launch's byte ranges (:class:`BufferRange`) too
    base_alignment_bytes: int = 1
    #: its buffers take ring transfers: large writes and reads over the Unix socket stream through the
    #: staging region's ring (a cpu device)
    ring_transfers: bool = False


def _pem(value: bytes | str | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


def connect(target: str = "127.0.0.1:7700", *, token: str | None = None, tls: TLS | bool | None = None,
            regions: bool = True) -> "Client":
    """Connects to a daemon at ``host:port`` or ``unix:///path/to/socket``.

    ``token``: the bearer token of a daemon with authentication (also from ``ARRAYD_TOKEN``).
    ``tls``: a :class:`TLS`, or True for TLS with the system's roots. Over a ``unix://`` target sessions use
    shared-memory regions for arrays unless ``regions`` is False.
    """
    options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
               ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]
    if tls:
        t = tls if isinstance(tls, TLS) else TLS()
        creds = grpc.ssl_channel_credentials(_pem(t.root_certificates), _pem(t.private_key), _pem(t.certificate_chain))
        if t.server_name:
            options.append(("grpc.ssl_target_name_override", t.server_name))
        channel = grpc.secure_channel(target, creds, options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    token = token if token is not None else os.environ.get("ARRAYD_TOKEN")
    return Client(channel, target, token, regions)


class Client:
    """A connection to one daemon. Use as a context manager, or :meth:`close` it."""

    def __init__(self, channel: grpc.Channel, target: str, token: str | None, regions: bool):
        self._channel = channel
        self.target = target
        self._metadata = [("authorization", f"Bearer {token}")] if token else []
        self._calls: dict[str, Callable] = {}
        self._unix_socket = target[len("unix://"):] if target.startswith("unix://") else None
        self._regions = regions and self._unix_socket is not None
        self._sessions: list[Any] = []

    # -- unary calls
    def _unary(self, service: str, method: str, request, response_class, timeout: float | None = None):
        path = f"/arrayd.v1.{service}/{method}"
        call = self._calls.get(path)
        if call is None:
            call = self._calls[path] = self._channel.unary_unary(path, request_serializer=type(request).SerializeToString,
                                                                 response_deserializer=response_class.FromString)
        try:
            return call(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc(e) from None

    def _server_stream(self, service: str, method: str, request, response_class):
        path = f"/arrayd.v1.{service}/{method}"
        call = self._channel.unary_stream(path, request_serializer=type(request).SerializeToString,
                                          response_deserializer=response_class.FromString)
        try:
            yield from call(request, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc(e) from None

    # -- the API
    def devices(self) -> list[Device]:
        """The daemon's devices, in the order it numbers them."""
        r = self._unary("DeviceService", "ListDevices", devices_pb2.ListDevicesRequest(), devices_pb2.ListDevicesResponse)
        return [Device(d.id, d.backend, d.name, d.memory_bytes, d.compute_units, d.unified_memory,
                       tuple(name_of_wire(t) for t in d.dtypes), d.base_alignment_bytes, d.ring_transfers)
                for d in r.devices]

    def session(self, name: str = "python", *, lease: float | None = None,
                completion_linger: float | None = None) -> "Session":
        """Opens a session (a context manager: closing it frees its buffers, kernels and streams).
        ``lease``: seconds the daemon keeps it without hearing from this client (kept alive by it).
        ``completion_linger``: seconds (at most 0.01) a completion may wait on the daemon so that completions
        leave together while other commands of the session are in flight: fewer messages for a pipelined
        loop, up to that much latency per completion (the last one in flight never waits); 0: at once;
        None: 200 µs (each message costs this process far more than the daemon)."""
        from ._session import Session
        s = Session(self, name, lease, completion_linger)
        self._sessions.append(s)
        return s

    def close(self) -> None:
        for s in list(self._sessions):
            s.close()
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"arrayd.Client({self.target!r})"
