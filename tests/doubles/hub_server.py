"""A Hugging Face Hub-compatible HTTP server that stores repositories on disk, for the tests (in a
checkout: the wheel does not ship it; a developer can also start it by hand, see below).

It speaks the part of the Hub's HTTP API that `huggingface_hub` (2.4) and `datasets` (5.2) use to
publish and read a dataset, so the real clients talk to it unchanged: point them at it with
`HF_ENDPOINT=<url>` and `HF_HUB_DISABLE_XET=1`, both set before either library is imported.

Start it with `HUB_SERVER_TOKEN=T python -m tests.doubles.hub_server --root DIR [--port P]` (port 0
picks a free one; the URL is printed) or, in tests, `with running_hub_server(root) as url:`.

Endpoints (REPO = `<org>/<name>`, TYPE = `datasets`, `models` or `spaces`; models have no prefix
in the resolve and LFS URLs, as on the Hub):
- POST /api/repos/create; GET /api/TYPE/REPO[/revision/REV] (repo info with siblings);
  GET /api/TYPE/REPO/refs; POST /api/TYPE/REPO/tag/REV; GET /api/whoami-v2;
  POST /api/validate-yaml (the card's YAML front matter must parse, and its `license` be one of the
  Hub's identifiers, as the Hub checks it; the list is the project's copy of the Hub's,
  `safeforge.publishing.hub_licenses`);
- upload: POST /api/TYPE/REPO/preupload/REV (text files `regular`, binary ones `lfs`),
  POST /TYPE/REPO.git/info/lfs/objects/batch (basic transfer; answers one-time upload URLs, like
  the Hub's presigned ones), PUT /lfs-upload/OID?ticket=T,
  POST /lfs-verify/OID, POST /api/TYPE/REPO/commit/REV (ndjson: header, file, lfsFile,
  deletedFile, deletedFolder; a README.md whose metadata fails the card checks is refused, as the
  Hub refuses it);
- reading: GET /api/TYPE/REPO/tree/REV[/PATH] (?recursive), POST /api/TYPE/REPO/paths-info/REV,
  HEAD/GET /TYPE/REPO/resolve/REV/PATH (with X-Repo-Commit, ETag, X-Linked-Etag/Size, Range).

Writes need `Authorization: Bearer <token>` (the one given with --token, or any non-empty token
when none is given); reads are public. Tokens are never logged or stored.

Storage under ROOT: `<TYPE>/<org>/<name>/refs.json` (branches and tags -> commit id),
`commits/<id>.json` (parent, message, path -> blob) and `blobs/<sha256>` (file contents,
shared by all revisions). A commit is applied under a lock, so it is all or nothing.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from safeforge.publishing import hub_licenses

REPO_TYPES = {"datasets": "dataset", "models": "model", "spaces": "space"}
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


class HubError(Exception):
    """An HTTP error answer: status, the Hub's X-Error-Code, and a message."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _is_text(sample: bytes) -> bool:
    if b"\0" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:  # a cut multi-byte character at the end is still text
        return exc.start >= len(sample) - 3
    return True


def card_errors(content: str) -> list[str]:
    """What the Hub says is wrong with a card's YAML metadata (the front matter between `---` lines):
    it does not parse, is not a mapping, or names a licence that is not one of the Hub's identifiers."""
    match = re.match(r"^---\s*\n(.*?)\n---\s*\n", content, re.DOTALL)
    if not match:
        return []
    try:
        metadata = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        return [f"invalid YAML: {exc}"]
    if not isinstance(metadata, dict):
        return ["the metadata block must be a mapping"]
    licences = metadata.get("license", [])
    known = hub_licenses()
    for licence in licences if isinstance(licences, list) else [licences]:
        if licence not in known:
            return [f'"license" must be one of [{", ".join(known)}]']
    return []


@dataclass
class _Repo:
    """One repository's folder."""

    folder: Path
    repo_type: str  # datasets | models | spaces
    repo_id: str

    @property
    def refs_file(self) -> Path:
        return self.folder / "refs.json"

    def refs(self) -> dict:
        return json.loads(self.refs_file.read_text())

    def write_refs(self, refs: dict) -> None:
        tmp = self.refs_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(refs, indent=1, sort_keys=True))
        tmp.replace(self.refs_file)

    def commit(self, commit_id: str) -> dict:
        return json.loads((self.folder / "commits" / f"{commit_id}.json").read_text())

    def resolve(self, revision: str) -> str:
        """The commit id a branch, tag or commit id names."""
        revision = unquote(revision)
        refs = self.refs()
        for kind in ("branches", "tags"):
            if revision in refs[kind]:
                return refs[kind][revision]
        if re.fullmatch(r"[0-9a-f]{40}", revision) and (self.folder / "commits" / f"{revision}.json").exists():
            return revision
        raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")


class HubStore:
    """Repositories on disk; every mutation holds the store's lock."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.blobs = self.root / "blobs"
        self.blobs.mkdir(exist_ok=True)
        self.lock = threading.RLock()

    # -- repositories --------------------------------------------------------------------------
    def repo(self, repo_type: str, repo_id: str, must_exist: bool = True) -> _Repo:
        parts = repo_id.split("/")
        if len(parts) != 2 or not all(_NAME.match(p) for p in parts):
            raise HubError(400, f"Invalid repo id {repo_id!r}: expected <namespace>/<name>")
        repo = _Repo(self.root / repo_type / parts[0] / parts[1], repo_type, repo_id)
        if must_exist and not repo.refs_file.exists():
            raise HubError(404, f"Repository Not Found for url: {repo_type}/{repo_id}.", "RepoNotFound")
        return repo

    def create_repo(self, repo_type: str, repo_id: str) -> bool:
        """Create with one initial commit (a .gitattributes); False if it already existed."""
        with self.lock:
            repo = self.repo(repo_type, repo_id, must_exist=False)
            if repo.refs_file.exists():
                return False
            (repo.folder / "commits").mkdir(parents=True, exist_ok=True)
            attributes = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.gz filter=lfs diff=lfs merge=lfs -text\n"
            files = {".gitattributes": self._store_blob(attributes)}
            commit_id = self._write_commit(repo, None, "initial commit", files)
            repo.write_refs({"branches": {"main": commit_id}, "tags": {}})
            return True

    def _store_blob(self, data: bytes) -> dict:
        sha = hashlib.sha256(data).hexdigest()
        path = self.blobs / sha
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return {"sha256": sha, "size": len(data), "git_oid": _git_blob_id(data), "lfs": not _is_text(data[:512])}

    def blob_path(self, sha256: str) -> Path:
        return self.blobs / sha256

    def _write_commit(self, repo: _Repo, parent: str | None, message: str, files: dict) -> str:
        body = {"parent": parent, "message": message, "created": time.time(), "files": files}
        text = json.dumps(body, sort_keys=True)
        commit_id = hashlib.sha1(text.encode()).hexdigest()
        (repo.folder / "commits" / f"{commit_id}.json").write_text(text)
        return commit_id

    def commit(self, repo: _Repo, branch: str, message: str, operations: list[tuple[str, dict]], parent_commit: str | None = None) -> str:
        """Apply (key, value) operations of an ndjson commit to `branch`; returns the commit id."""
        with self.lock:
            refs = repo.refs()
            if branch not in refs["branches"]:
                raise HubError(404, f"Invalid rev id: {branch} (commits go to a branch)", "RevisionNotFound")
            head = refs["branches"][branch]
            if parent_commit and parent_commit != head:
                raise HubError(412, f"A commit has happened since {parent_commit}. Please refresh and try again.")
            files = dict(repo.commit(head)["files"])
            for key, value in operations:
                path = str(value.get("path", "")).strip("/")
                if not path or ".." in path.split("/"):
                    raise HubError(400, f"Invalid path {path!r} in commit operation {key}")
                if key == "file":
                    if value.get("encoding") != "base64":
                        raise HubError(400, f"{path}: only base64 file content is supported")
                    data = base64.b64decode(value["content"])
                    errors = card_errors(data.decode("utf-8", errors="replace")) if path == "README.md" else []
                    if errors:
                        raise HubError(400, "Invalid metadata in README.md.\n" + "\n".join(f"- {e}" for e in errors))
                    files[path] = self._store_blob(data)
                elif key == "lfsFile":
                    blob = self.blob_path(str(value.get("oid", "")))
                    if not blob.exists():
                        raise HubError(422, f"{path}: LFS object {value.get('oid')} was not uploaded")
                    data = blob.read_bytes()
                    files[path] = {"sha256": value["oid"], "size": len(data), "git_oid": _git_blob_id(data), "lfs": True}
                elif key == "deletedFile":
                    if files.pop(path, None) is None:
                        raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                elif key == "deletedFolder":
                    prefix = path + "/"
                    for name in [n for n in files if n.startswith(prefix)]:
                        del files[name]
                else:
                    raise HubError(400, f"Unsupported commit operation {key!r}")
            commit_id = self._write_commit(repo, head, message, files)
            refs["branches"][branch] = commit_id
            repo.write_refs(refs)
            return commit_id

    def create_tag(self, repo: _Repo, revision: str, tag: str) -> None:
        with self.lock:
            if not _REF.match(tag):
                raise HubError(400, f"Invalid tag name {tag!r}")
            refs = repo.refs()
            if tag in refs["tags"]:
                raise HubError(409, f"Tag {tag} already exists")
            refs["tags"][tag] = repo.resolve(revision)
            repo.write_refs(refs)

    def put_lfs_object(self, oid: str, data: bytes) -> None:
        if hashlib.sha256(data).hexdigest() != oid:
            raise HubError(400, f"LFS object {oid}: content does not match its sha256")
        self._store_blob(data)


class HubServer:
    """The HTTP front of a HubStore, served from a background thread."""

    def __init__(self, root: Path, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None):
        self.store = HubStore(root)
        self.token = token
        self.upload_tickets: dict[str, str] = {}  # oid -> one-time upload ticket (like a presigned URL)
        handler = type("Handler", (_Handler,), {"hub": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="hub-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


@contextmanager
def running_hub_server(root: Path, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> Iterator[str]:
    """Run the server in a background thread; yields its URL (the value for HF_ENDPOINT)."""
    server = HubServer(root, host=host, port=port, token=token)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


_API_REPO = re.compile(r"^/api/(datasets|models|spaces)/([^/]+/[^/]+?)(?:/(.*))?$")
_FILE_URL = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+?)/resolve/([^/]+)/(.+)$")
_LFS_BATCH = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+?)\.git/info/lfs/objects/batch$")


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - quiet; never logs headers (tokens)
        pass

    # -- plumbing ------------------------------------------------------------------------------
    def _body(self) -> bytes:
        """The request body, read once (the connection is kept alive)."""
        if getattr(self, "_cached_body", None) is None:
            length = int(self.headers.get("Content-Length") or 0)
            self._cached_body = self.rfile.read(length) if length else b""
        return self._cached_body

    def _json_body(self) -> dict:
        try:
            value = json.loads(self._body() or b"{}")
        except json.JSONDecodeError as exc:
            raise HubError(400, f"Invalid JSON body: {exc}") from None
        if not isinstance(value, dict):
            raise HubError(400, "The JSON body must be an object")
        return value

    def _send(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "application/json",
        headers: dict | None = None,
        head: bool = False,
        length: int | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status: int, value, headers: dict | None = None) -> None:
        self._send(status, json.dumps(value).encode(), headers=headers)

    def _error(self, error: HubError, head: bool = False) -> None:
        headers = {"X-Error-Message": " ".join(error.message.split())}  # a header is one line
        if error.code:
            headers["X-Error-Code"] = error.code
        self._send(error.status, json.dumps({"error": error.message}).encode(), headers=headers, head=head)

    def _require_token(self) -> None:
        auth = self.headers.get("Authorization", "")
        token = auth[7:].strip() if auth.startswith("Bearer ") else ""
        if not token or (self.hub.token is not None and token != self.hub.token):
            raise HubError(401, "Invalid credentials in Authorization header")

    def _dispatch(self, method: str) -> None:
        head = method == "HEAD"
        self._cached_body = None
        try:
            parts = urlsplit(self.path)
            self._route(method, unquote(parts.path), parse_qs(parts.query))
        except HubError as error:
            if method in ("POST", "PUT"):
                self._body()
            self._error(error, head=head)
        except Exception as exc:  # answer instead of dropping the connection
            self._error(HubError(500, f"{type(exc).__name__}: {exc}"), head=head)

    def do_GET(self):  # noqa: N802
        self._dispatch("GET")

    def do_HEAD(self):  # noqa: N802
        self._dispatch("HEAD")

    def do_POST(self):  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self):  # noqa: N802
        self._dispatch("PUT")

    # -- routing -------------------------------------------------------------------------------
    def _route(self, method: str, path: str, query: dict) -> None:
        store = self.hub.store
        if path == "/api/whoami-v2" and method == "GET":
            self._require_token()
            return self._json(200, {"type": "user", "name": "local", "orgs": [], "auth": {"type": "access_token"}})
        if path == "/api/validate-yaml" and method == "POST":
            return self._validate_yaml(self._json_body())
        if path == "/api/repos/create" and method == "POST":
            return self._create_repo(self._json_body())
        if path.startswith("/lfs-upload/") and method == "PUT":
            oid = path.rsplit("/", 1)[1]
            if self.hub.upload_tickets.pop(oid, None) != query.get("ticket", [""])[0]:
                raise HubError(403, f"LFS object {oid}: no valid upload ticket (ask the batch endpoint first)")
            store.put_lfs_object(oid, self._body())
            return self._send(200)
        if path.startswith("/lfs-verify/") and method == "POST":
            body = self._json_body()
            if not store.blob_path(str(body.get("oid", ""))).exists():
                raise HubError(404, f"LFS object {body.get('oid')} not found")
            return self._json(200, {})
        match = _LFS_BATCH.match(path)
        if match and method == "POST":
            self._require_token()
            return self._lfs_batch(self._json_body())
        match = _FILE_URL.match(path)
        if match and method in ("GET", "HEAD"):
            kind = match.group(1) or "models"
            return self._resolve(store.repo(kind, match.group(2)), match.group(3), match.group(4), method == "HEAD")
        match = _API_REPO.match(path)
        if match:
            return self._repo_api(method, match.group(1), match.group(2), match.group(3) or "", query)
        raise HubError(404, f"No such endpoint: {method} {path}")

    def _repo_api(self, method: str, kind: str, repo_id: str, rest: str, query: dict) -> None:
        store = self.hub.store
        repo = store.repo(kind, repo_id)
        action, _, tail = rest.partition("/")
        if method == "GET" and action in ("", "revision"):
            return self._json(200, self._info(repo, unquote(tail) if action else "main"))
        if method == "GET" and action == "refs":
            refs = repo.refs()

            def listing(kind_, prefix):
                return [{"name": n, "ref": f"{prefix}{n}", "targetCommit": c} for n, c in sorted(refs[kind_].items())]

            return self._json(
                200,
                {"branches": listing("branches", "refs/heads/"), "tags": listing("tags", "refs/tags/"), "converts": [], "pullRequests": []},
            )
        if method == "GET" and action == "tree":
            revision, _, sub = tail.partition("/")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return self._json(200, self._tree(repo, revision, sub.strip("/"), recursive))
        if method == "POST" and action == "paths-info":
            form = parse_qs(self._body().decode())
            return self._json(200, self._paths_info(repo, tail, form.get("paths", [])))
        if method == "POST" and action == "preupload":
            self._require_token()
            body = self._json_body()
            repo.resolve(tail)
            files = [
                {
                    "path": f["path"],
                    "shouldIgnore": False,
                    "uploadMode": "regular" if _is_text(base64.b64decode(f.get("sample", ""))) else "lfs",
                }
                for f in body.get("files", [])
            ]
            return self._json(200, {"files": files, "commitOid": repo.resolve(tail)})
        if method == "POST" and action == "commit":
            self._require_token()
            return self._commit(repo, tail)
        if method == "POST" and action == "tag":
            self._require_token()
            body = self._json_body()
            store.create_tag(repo, tail, str(body.get("tag", "")))
            return self._json(200, {})
        raise HubError(404, f"No such endpoint: {method} /api/{kind}/{repo_id}/{rest}")

    # -- handlers ------------------------------------------------------------------------------
    def _validate_yaml(self, body: dict) -> None:
        """As the Hub answers: 400 with the errors (as `- Error: ...` lines when plain text is asked
        for, as RepoCard.validate does; else as JSON, which HfApi reads before a commit), else 200
        with the warnings."""
        content = str(body.get("content", ""))
        errors = card_errors(content)
        if errors:
            headers = {"X-Error-Message": errors[0]}
            if "text/plain" in self.headers.get("Accept", ""):
                text = "\n".join(f"- Error: {e}" for e in errors)
                return self._send(400, text.encode(), content_type="text/plain; charset=utf-8", headers=headers)
            return self._json(400, {"errors": [{"message": e} for e in errors], "warnings": []}, headers=headers)
        warnings = [] if content.startswith("---") else [{"message": "empty or missing yaml metadata in repo card"}]
        self._json(200, {"errors": [], "warnings": warnings})

    def _create_repo(self, body: dict) -> None:
        self._require_token()
        kind = {"dataset": "datasets", "model": "models", "space": "spaces", None: "models"}.get(body.get("type"))
        if kind is None:
            raise HubError(400, f"Invalid repo type {body.get('type')!r}")
        name, organization = body.get("name"), body.get("organization") or "local"
        repo_id = f"{organization}/{name}"
        url_prefix = "" if kind == "models" else f"{kind}/"
        url = f"{self.hub.url}/{url_prefix}{repo_id}"
        if not self.hub.store.create_repo(kind, repo_id):
            message = f"You already created this {REPO_TYPES[kind]} repo"
            return self._json(409, {"error": message, "url": url}, headers={"X-Error-Message": message})
        self._json(200, {"url": url, "name": repo_id, "id": repo_id})

    def _info(self, repo: _Repo, revision: str) -> dict:
        commit_id = repo.resolve(revision)
        commit = repo.commit(commit_id)
        siblings = [{"rfilename": p} for p in sorted(commit["files"])]
        card = self._card_data(commit["files"].get("README.md"))
        return {
            "id": repo.repo_id,
            "_id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit_id,
            "private": False,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [*card.get("tags", []), *([f"license:{card['license']}"] if card.get("license") else [])],
            "lastModified": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(commit["created"])),
            "createdAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(commit["created"])),
            "siblings": siblings,
            "cardData": card,
        }

    def _card_data(self, readme: dict | None) -> dict:
        """The YAML metadata at the top of README.md, as the Hub returns it in `cardData`."""
        if readme is None:
            return {}
        text = self.hub.store.blob_path(readme["sha256"]).read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---\n") or "\n---" not in text[4:]:
            return {}
        data = yaml.safe_load(text[4 : text.index("\n---", 4)])
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _file_entry(path: str, blob: dict) -> dict:
        entry = {"type": "file", "path": path, "size": blob["size"], "oid": blob["git_oid"]}
        if blob["lfs"]:
            entry["lfs"] = {"oid": blob["sha256"], "size": blob["size"], "pointerSize": 134}
        return entry

    def _tree(self, repo: _Repo, revision: str, sub: str, recursive: bool) -> list[dict]:
        files = repo.commit(repo.resolve(revision))["files"]
        prefix = f"{sub}/" if sub else ""
        if sub and sub in files:
            raise HubError(404, f"{sub} is a file, not a folder", "EntryNotFound")
        entries, folders = [], set()
        for path in sorted(files):
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix) :]
            if "/" in rest:
                parts = rest.split("/")
                depth = len(parts) - 1 if recursive else 1
                for i in range(1, depth + 1):
                    folders.add(prefix + "/".join(parts[:i]))
                if not recursive:
                    continue
            entries.append(self._file_entry(path, files[path]))
        if sub and not entries and not folders:
            raise HubError(404, f"Entry not found: {sub}", "EntryNotFound")
        entries += [{"type": "directory", "path": f, "oid": _EMPTY_TREE, "size": 0} for f in sorted(folders)]
        return sorted(entries, key=lambda e: e["path"])

    def _paths_info(self, repo: _Repo, revision: str, paths: list[str]) -> list[dict]:
        files = repo.commit(repo.resolve(revision))["files"]
        found = []
        for path in paths:
            path = path.strip("/")
            if path in files:
                found.append(self._file_entry(path, files[path]))
            elif any(p.startswith(path + "/") for p in files) or path == "":
                found.append({"type": "directory", "path": path, "oid": _EMPTY_TREE, "size": 0})
        return found

    def _lfs_batch(self, body: dict) -> None:
        if body.get("operation") != "upload":
            raise HubError(400, "only the upload operation is supported")
        objects = []
        for item in body.get("objects", []):
            oid, size = str(item.get("oid", "")), int(item.get("size", 0))
            if self.hub.store.blob_path(oid).exists():
                objects.append({"oid": oid, "size": size})  # already stored: nothing to upload
                continue
            ticket = self.hub.upload_tickets.setdefault(oid, secrets.token_urlsafe(16))
            objects.append(
                {
                    "oid": oid,
                    "size": size,
                    "authenticated": True,
                    "actions": {
                        "upload": {"href": f"{self.hub.url}/lfs-upload/{oid}?ticket={ticket}"},
                        "verify": {"href": f"{self.hub.url}/lfs-verify/{oid}"},
                    },
                }
            )
        self._send(
            200,
            json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
            content_type="application/vnd.git-lfs+json",
        )

    def _commit(self, repo: _Repo, revision: str) -> None:
        header, operations = None, []
        for line in self._body().splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise HubError(400, f"Invalid ndjson line in commit payload: {exc}") from None
            if item.get("key") == "header":
                header = item.get("value") or {}
            else:
                operations.append((item.get("key"), item.get("value") or {}))
        if header is None:
            raise HubError(400, "The commit payload has no header line")
        branch = unquote(revision)
        commit_id = self.hub.store.commit(repo, branch, str(header.get("summary", "")), operations, header.get("parentCommit"))
        prefix = "" if repo.repo_type == "models" else f"{repo.repo_type}/"
        self._json(200, {"success": True, "commitOid": commit_id, "commitUrl": f"{self.hub.url}/{prefix}{repo.repo_id}/commit/{commit_id}"})

    def _resolve(self, repo: _Repo, revision: str, path: str, head: bool) -> None:
        commit_id = repo.resolve(revision)
        blob = repo.commit(commit_id)["files"].get(path)
        headers = {"X-Repo-Commit": commit_id, "Accept-Ranges": "bytes"}
        if blob is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        headers["ETag"] = f'"{blob["git_oid"]}"'
        if blob["lfs"]:
            headers["X-Linked-Etag"] = f'"{blob["sha256"]}"'
            headers["X-Linked-Size"] = str(blob["size"])
        data = self.hub.store.blob_path(blob["sha256"]).read_bytes()
        status, start, end = 200, 0, len(data)
        range_header = self.headers.get("Range")
        if range_header and not head:
            match = re.fullmatch(r"bytes=(\d*)-(\d*)", range_header.strip())
            if match:
                first, last = match.groups()
                if first:
                    start, end = int(first), min(len(data), int(last) + 1 if last else len(data))
                else:
                    start, end = max(0, len(data) - int(last or 0)), len(data)
                status = 206
                headers["Content-Range"] = f"bytes {start}-{max(start, end - 1)}/{len(data)}"
        body = data[start:end]
        self._send(
            status, body, content_type="application/octet-stream", headers=headers, head=head, length=len(data) if head else len(body)
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.doubles.hub_server", description="A local Hugging Face Hub-compatible server.")
    parser.add_argument("--root", type=Path, required=True, help="folder where repositories are stored")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.epilog = (
        "The only token accepted for writes comes from the environment variable HUB_SERVER_TOKEN "
        "(never the command line, where `ps` would show it); unset: any non-empty token."
    )
    args = parser.parse_args(argv)
    server = HubServer(args.root, host=args.host, port=args.port, token=os.environ.get("HUB_SERVER_TOKEN") or None)
    print(f"hub server on {server.url} (root {args.root}); use HF_ENDPOINT={server.url} HF_HUB_DISABLE_XET=1", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["HubError", "HubServer", "HubStore", "running_hub_server"]
