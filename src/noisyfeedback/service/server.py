"""Running the app under uvicorn with the header limit enforced while the headers are read.

The app checks the size of the request line and headers too (431), but only once the HTTP parser has
read them whole; here the connection counts the bytes of a request's head as they arrive and answers
431 (then closes) as soon as they pass the limit, so a huge header is never buffered and never stalls
the event loop. A request's head must also arrive whole within ``header_timeout`` seconds of its first
byte (of the connection, for its first request): a connection that sends its headers slowly is answered
408 and closed, so slow clients cannot hold connections open for ever (idle keep-alive connections are
closed by uvicorn's ``timeout_keep_alive``).

The connection's writes are held until the end of the event loop's step (`Coalesced`): a response's
head and body, which uvicorn writes one after the other, leave in one system call and one TCP segment.
"""

from __future__ import annotations

import gc

import orjson

__all__ = ["limited_protocol", "run", "Coalesced"]


#: seconds a request's line and headers may take to arrive
HEADER_TIMEOUT = 10.0


class Coalesced:
    """A transport whose writes are joined until the end of the event loop's current step (then written
    at once, in order); closing writes what is held first. Everything else is the transport's."""

    __slots__ = ("transport", "loop", "held")

    def __init__(self, transport, loop) -> None:
        self.transport, self.loop, self.held = transport, loop, None

    def write(self, data: bytes) -> None:
        if self.held is None:
            self.held = [data]
            self.loop.call_soon(self.flush)
        else:
            self.held.append(data)

    def flush(self) -> None:
        held, self.held = self.held, None
        if held and not self.transport.is_closing():
            self.transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def __getattr__(self, name: str):
        return getattr(self.transport, name)


def limited_protocol(max_header: int, header_timeout: float = HEADER_TIMEOUT):
    """uvicorn's httptools protocol with a limit on the bytes read before the headers are complete
    (None when httptools is absent: uvicorn's h11 protocol then takes the limit as an option)."""
    try:
        import httptools  # noqa: F401
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    body = orjson.dumps({"detail": f"request line and headers larger than {max_header} bytes.",
                         "field": "headers"})
    refusal = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
               b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
    slow = orjson.dumps({"detail": f"request line and headers not received within {header_timeout:g} s.",
                         "field": "headers"})
    timeout = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: "
               + str(len(slow)).encode() + b"\r\nconnection: close\r\n\r\n" + slow)

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        _nf_head_done = False
        _nf_head_bytes = 0
        _nf_timer = None

        def _nf_arm(self) -> None:
            if self._nf_timer is None:
                self._nf_timer = self.loop.call_later(header_timeout, self._nf_expire)

        def _nf_disarm(self) -> None:
            if self._nf_timer is not None:
                self._nf_timer.cancel()
                self._nf_timer = None

        def _nf_expire(self) -> None:
            self._nf_timer = None
            if not self._nf_head_done and not self.transport.is_closing():
                self.transport.write(timeout)
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self.transport = Coalesced(transport, self.loop)  # what the protocol and its cycles write to
            self._nf_arm()

        def connection_lost(self, exc) -> None:
            self._nf_disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._nf_head_done, self._nf_head_bytes = False, 0  # the timer: after this data (`data_received`)

        def on_headers_complete(self) -> None:
            self._nf_head_done = True
            self._nf_disarm()
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():
                return
            super().data_received(data)
            if not self._nf_head_done:
                self._nf_head_bytes += len(data)
                if self._nf_head_bytes > max_header:
                    self.transport.write(refusal)
                    self.transport.close()
                else:  # a head begun and not complete in this data: its time runs from now
                    self._nf_arm()

    return LimitedHttpToolsProtocol


def run(app, host: str, port: int, max_header: int, header_timeout: float = HEADER_TIMEOUT) -> None:
    """Serve ``app`` until interrupted. What start-up made (the modules, the model rebuilt from the log, the
    compiled kernels: a few hundred thousand objects) lives as long as the process, so it is frozen out of
    the garbage collector first: each full collection would otherwise walk it all, holding every request
    for tens to hundreds of milliseconds (the p99 latency of a loaded service)."""
    import uvicorn

    gc.collect()
    gc.freeze()

    protocol = limited_protocol(max_header, header_timeout)
    extra = {"http": protocol} if protocol is not None else {"http": "h11", "h11_max_incomplete_event_size": max_header}
    # no proxy-header rewriting: the service reads no client address or scheme (and it cost 5 % of a pair's CPU)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, workers=1, proxy_headers=False,
                **extra)
