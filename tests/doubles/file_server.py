"""An HTTP file server for the fetch tests: serves given bytes by path, honours `Range`, and can
cut a response short (to test resuming) or count what it was asked."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Files:
    """What the server serves, and what it saw."""

    content: dict[str, bytes] = field(default_factory=dict)
    cut_after: dict[str, int] = field(default_factory=dict)
    """path -> bytes after which the next response for it is cut (once)."""
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    """(path, Range header) of every GET."""


class _Handler(BaseHTTPRequestHandler):
    files: Files

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        files = self.server.files  # type: ignore[attr-defined]
        wanted = self.headers.get("Range")
        files.requests.append((self.path, wanted))
        body = files.content.get(self.path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", wanted or "")
        if match:
            start = int(match.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = files.cut_after.pop(self.path, None)
        self.wfile.write(body[start:] if cut is None else body[start : start + cut])
        if cut is not None:
            self.wfile.flush()
            self.close_connection = True


@contextmanager
def serving(files: Files) -> Iterator[str]:
    """Serve `files` on 127.0.0.1 for the block; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.files = files  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
