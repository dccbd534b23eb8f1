"""`python -m safeforge.generation.worker`: one of the N - 1 worker processes of a generation run
with `safeforge generate --workers N`; `_workers.run_in_workers` starts and feeds it.

It reads one job line on stdin (the run folder, the LLM configuration, the stage settings, its
number of lanes, optionally a pickled checker), then each lane asks for a record (`{"want": 1}` on
stdout), takes it through `process_record` and reports its state (`{"done": id, "state": s}`).
`{"end": true}` means no more records. Stdin closing before that means the run's process is gone:
the worker stops at once, as a killed run does (its calls in flight become "unknown" in the call
ledger; the records resume with the run). Storage that cannot be written (a full disk) stops it
too: it says why (`{"stopped": message}`) and exits with EXIT_STORAGE; its records keep their states.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import pickle
import signal
import sys
from collections import deque
from typing import Any

from safeforge.common.concurrency import gather_or_cancel
from safeforge.common.errors import StorageError
from safeforge.common.limits import limits_in, use_limits
from safeforge.generation._record import RunContext, process_record, process_safely
from safeforge.generation._settings import GenerationSettings
from safeforge.llm import LLMClient, LLMConfig
from safeforge.runs.ledger import RunStore
from safeforge.sources import Record

EXIT_RUN_GONE = 3
EXIT_STORAGE = 4


_protocol = sys.stdout  # the run's process reads this; main() points everything else at stderr


class _Feed:
    """Records as the run's process sends them, one per request, in order."""

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[Record | None]] = deque()
        self._ended = False

    async def next(self) -> Record | None:
        if self._ended:
            return None
        future: asyncio.Future[Record | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        _send({"want": 1})
        return await future

    async def read(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            message = json.loads(line)
            if "record" in message:
                self._waiting.popleft().set_result(Record(**message["record"]))
            elif message.get("end"):
                self._ended = True
                while self._waiting:
                    self._waiting.popleft().set_result(None)
        if not self._ended:
            os._exit(EXIT_RUN_GONE)  # the run's process is gone: stop as a killed run does


def _send(message: dict[str, Any]) -> None:
    _protocol.write(json.dumps(message) + "\n")
    _protocol.flush()


async def serve() -> None:
    """Read the job, then process records from stdin until the run's process says there are no more."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    job = json.loads(await reader.readline())
    store = RunStore(job["run"])
    checker = pickle.loads(base64.b64decode(job["checker"])) if job.get("checker") else None
    context = RunContext.load(GenerationSettings.model_validate(job["settings"]), checker)  # once for every record here
    feed = _Feed()
    reading = asyncio.create_task(feed.read(reader))
    try:
        async with LLMClient(LLMConfig.model_validate(job["config"])) as client:

            async def lane() -> None:
                while (record := await feed.next()) is not None:
                    state = await process_safely(process_record, record, store, client, context)
                    _send({"done": record.record_id, "state": state})

            await gather_or_cancel(lane() for _ in range(job["lanes"]))
    finally:
        reading.cancel()
        store.ledger.close()


def main() -> int:
    global _protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the run's process, which stops its workers
    _protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot break the protocol
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s [worker %(process)d]: %(message)s")
    use_limits(limits_in(os.environ))
    try:
        asyncio.run(serve())
    except StorageError as exc:
        _send({"stopped": str(exc)})
        return EXIT_STORAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
