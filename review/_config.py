"""How to reach the Label Studio server: `ReviewConfig.from_env()` takes it from `Settings`
(LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY, LABEL_STUDIO_USERNAME, LABEL_STUDIO_PASSWORD,
SAFEFORGE_LABELSTUDIO_DATA, SAFEFORGE_LABELSTUDIO_DATABASE), whose defaults suit only a local demo server on 127.0.0.1 that nobody
else can reach. Secrets never appear in `repr`, logs or files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from safeforge.settings import Settings


@dataclass(frozen=True)
class ReviewConfig:
    """How to reach the Label Studio server."""

    url: str
    """Base URL of the server, e.g. http://127.0.0.1:8080."""
    api_key: str = field(repr=False)
    """Legacy API token (sent as `Authorization: Token ...`) of a user who may create projects."""
    username: str
    """Admin e-mail: the user a server started by Safeforge creates."""
    password: str = field(repr=False)
    """Admin password (for logging in to the web interface)."""
    timeout: float = 30.0
    """Seconds to wait for one HTTP request."""
    data_dir: Path = field(default_factory=lambda: Settings.load().labelstudio_data_dir)
    """Data dir of the server that `safeforge review server start` manages."""
    database: str | None = None
    """Database of a new server (sqlite or postgresql); None: what the data dir holds, else sqlite."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReviewConfig:
        """The review part of `Settings.load(environ)`."""
        settings = Settings.load(environ)
        return cls(
            url=settings.label_studio_url.rstrip("/"),
            api_key=settings.label_studio_api_key.get_secret_value(),
            username=settings.label_studio_username,
            password=settings.label_studio_password.get_secret_value(),
            data_dir=settings.labelstudio_data_dir,
            database=settings.labelstudio_database,
        )

    @property
    def port(self) -> int:
        parsed = urlparse(self.url)
        return parsed.port or (443 if parsed.scheme == "https" else 80)
