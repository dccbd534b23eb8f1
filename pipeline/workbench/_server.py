"""`serve`: the workbench on 127.0.0.1 (never another interface), with uvicorn.

The socket is bound before the server starts, so a port in use is a clear error and port 0 (any
free port) is announced with the port it got.
"""

from __future__ import annotations

import errno
import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn

from safeforge.settings import LOOPBACK
from safeforge.workbench._app import create_app
from safeforge.workbench._workspace import WorkbenchError, Workspace


def _say(line: str) -> None:
    print(line, flush=True)


def serve(
    folder: str | Path,
    port: int,
    time_limit: float,
    *,
    cross_check: bool = False,
    open_browser: bool = False,
    announce: Callable[[str], None] = _say,
) -> None:
    """Serve the workbench over `folder` until interrupted (`cross_check`: Unified Planning reads every checked text too)."""
    workspace = Workspace(folder)
    try:
        listener = _listen(port)
        url = f"http://{LOOPBACK}:{listener.getsockname()[1]}/"
        announce(f"Safeforge workbench on {workspace.root} ({workspace.description}): {url}")
        announce("press Ctrl+C to stop")
        if open_browser:
            webbrowser.open(url)
        config = uvicorn.Config(create_app(workspace, time_limit, cross_check=cross_check), log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        workspace.close()


def _listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((LOOPBACK, port))
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise WorkbenchError(f"port {port} on {LOOPBACK} is in use: pass --port, or set SAFEFORGE_WORKBENCH_PORT") from None
        raise WorkbenchError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror}") from None
    listener.listen(64)
    return listener
