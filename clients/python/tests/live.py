"""Test fixtures: a live `memgate serve` built from this repository, a fake
OpenAI-compatible chat model for it, and a Client that records which of
its methods the tests called.

The server is built once (`go build ./cmd/memgate` at the repository root,
found relative to this file), or taken from $MEMGATE_TEST_BINARY when a
caller built it already, and started on 127.0.0.1:0; its address and admin
key are read from the banner it prints on stdout.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Callable, List, Optional, Set, Tuple

import memgate

REPO = Path(__file__).resolve().parents[3]

_SERVING = "memgate: serving on "
_KEY = "memgate: created the admin key"

# Names of the Client methods the tests called, across every server.
CALLED: Set[str] = set()


class RecordingClient(memgate.Client):
    """A Client that notes each public method called (in CALLED)."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if not name.startswith("_") and callable(value):
            CALLED.add(name)
        return value


def build(tmp: Path) -> Path:
    """Returns the memgate binary: $MEMGATE_TEST_BINARY, or one built now."""
    given = os.environ.get("MEMGATE_TEST_BINARY")
    if given:
        return Path(given)
    go = shutil.which("go") or "/usr/local/go/bin/go"
    out = tmp / "memgate"
    subprocess.run([go, "build", "-o", str(out), "./cmd/memgate"], cwd=REPO, check=True)
    return out


class Server:
    """A running `memgate serve` child: its URL and bootstrap admin key."""

    def __init__(self, binary: Path, tmp: Path, name: str, *flags: str) -> None:
        self.log = open(tmp / f"{name}.log", "wb")
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--addr", "127.0.0.1:0", "--db", str(tmp / f"{name}.db"), *flags],
            stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        self.url, self.key = _read_banner(self.proc.stdout)
        if not self.url or not self.key:
            self.stop()
            raise RuntimeError(f"memgate serve did not start; see {self.log.name}")
        # Drain the rest of stdout so the child never blocks on a full pipe.
        threading.Thread(target=_drain, args=(self.proc.stdout,), daemon=True).start()

    def client(self, key: Optional[str] = None, **kw: Any) -> RecordingClient:
        return RecordingClient(self.url, key or self.key, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _read_banner(out: IO[bytes]) -> Tuple[str, str]:
    """Reads the banner lines: the admin key (the line after its notice)
    and the URL of the serving line. Empty strings if the output ended."""
    key, url, key_next = "", "", False
    for raw in out:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if key_next:
            key, key_next = line.strip(), False
        elif line.startswith(_KEY):
            key_next = True
        elif line.startswith(_SERVING):
            url = line[len(_SERVING):].strip().rstrip("/")
            break
    return url, key


def _drain(out: IO[bytes]) -> None:
    for _ in out:
        pass


class FakeModel:
    """An OpenAI-compatible chat completions server on 127.0.0.1:0 that
    answers every request with ``reply``, and keeps the requests."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: List[Any] = []
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                model.requests.append(json.loads(self.rfile.read(n)))
                body = json.dumps({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "fake-1",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": model.reply},
                                 "finish_reason": "stop"}],
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Scripted:
    """An HTTP server on 127.0.0.1:0 answering from a script of (status,
    headers, body) responses in turn, for what a live memgate cannot be
    made to answer on cue (a 503 then a 200). It counts the requests."""

    def __init__(self, script: List[Tuple[int, dict, bytes]]) -> None:
        self.script = list(script)
        self.methods: List[str] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                fake.methods.append(self.command)
                status, headers, body = fake.script.pop(0) if fake.script else (500, {}, b"")
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def sleeps(c: memgate.Client) -> List[float]:
    """Replaces c's sleep between retries by a record of the waits."""
    waits: List[float] = []
    record: Callable[[float], None] = waits.append
    c._sleep = record
    return waits


def tempdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="memgate-py-"))


def error_json(code: str, message: str, field: str = "") -> bytes:
    err = {"code": code, "message": f"{field}: {message}" if field else message}
    if field:
        err["field"] = field
    return json.dumps({"error": err}).encode()

