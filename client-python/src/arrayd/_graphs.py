"""Graphs: commands recorded once (:meth:`Session.record`) and replayed with other buffers and scalars."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import _dtypes
from ._convert import deadline_timestamp, scalar
from ._event import Event
from .v1 import execution_pb2

if TYPE_CHECKING:
    from ._buffer import Buffer
    from ._session import Session


class GraphRecorder:
    """Records the commands issued in a ``with`` block into a graph (see :meth:`Session.record`)."""

    def __init__(self, session: Session):
        self._session = session
        self.graph: Graph | None = None

    def __enter__(self) -> "GraphRecorder":
        if self._session._recording is not None:
            raise RuntimeError("already recording a graph")
        self._session._recording = []
        return self

    def __exit__(self, exc_type, *exc) -> None:
        commands = self._session._recording
        buffers, self._session._recorded_buffers = self._session._recorded_buffers, []
        self._session._recording = None
        if exc_type is not None:
            return
        s = self._session
        r = s._ordered_unary("ExecutionService", "RecordGraph",
                             execution_pb2.RecordGraphRequest(session=s.id, commands=commands),
                             execution_pb2.RecordGraphResponse)
        self.graph = Graph(s, r.graph, r.commands, buffers)


class Graph:
    """A recorded graph: :meth:`replay` runs its commands again (with other buffers and scalars if asked)."""

    def __init__(self, session: Session, graph_id: int, size: int, buffers: Sequence[Buffer] = ()):
        self._session = session
        self.id = graph_id
        self.size = size
        self._buffers = list(buffers)  # the buffers its commands name, alive while it is

    def replay(self, *, rebind: dict | None = None, scalars: Iterable[tuple[int, int, Any, str]] = (),
               wait_for: Iterable[Event] = (), deadline: float | None = None) -> list[Event]:
        """Runs the graph's commands; their events, in order. ``rebind``: ``{old_buffer: new_buffer}``;
        ``scalars``: ``(command, arg, value, dtype)`` new scalar arguments."""
        s = self._session
        n = self.size
        first = s._ids_for(n)
        req = execution_pb2.ReplayGraphRequest(graph=self.id, first_event=first, wait_events=[e.id for e in wait_for])
        for old, new in (rebind or {}).items():
            req.rebind.add(**{"from": old.id, "to": new.id})
        for command, arg, value, dtype in scalars:
            req.scalars.add(command=command, arg=arg, value=scalar(value, _dtypes.name_of(dtype), "scalars"))
        ts = deadline_timestamp(deadline)
        if ts is not None:
            req.deadline.CopyFrom(ts)
        events = [Event(first + i) for i in range(n)]
        s._stream.replay(req, events)
        return events

    def destroy(self) -> None:
        s = self._session
        s._ordered_unary("ExecutionService", "DestroyGraph", execution_pb2.DestroyGraphRequest(session=s.id, graph=self.id),
                         execution_pb2.DestroyGraphResponse)
