"""Where the Label Studio server is and how to log in: from the environment, with local-demo defaults.

    LABEL_STUDIO_URL          server address             (default http://127.0.0.1:8080)
    LABEL_STUDIO_API_KEY      API token of the admin     (default: the local demo token below;
                              LABEL_STUDIO_USER_TOKEN is read when LABEL_STUDIO_API_KEY is unset)
    LABEL_STUDIO_USERNAME     admin e-mail               (default admin@safeforge.local)
    LABEL_STUDIO_PASSWORD     admin password             (default: the local demo password below)
    SAFEFORGE_LABELSTUDIO_DATA  data dir of the server that `safeforge review server start` runs
                              (default <outputs>/.labelstudio; <outputs>: SAFEFORGE_OUTPUTS or
                              <repo>/outputs)

The defaults are only good for a server on 127.0.0.1 that nobody else can reach; set real
credentials for anything else. Secrets never appear in `repr`, logs or files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from pipeline.settings import outputs_dir

DEFAULT_URL = "http://127.0.0.1:8080"
DEMO_USERNAME = "admin@safeforge.local"
DEMO_PASSWORD = "safeforge-local-demo"
DEMO_TOKEN = "safeforge-local-demo-token"
DATA_DIR_NAME = ".labelstudio"


@dataclass(frozen=True)
class ReviewConfig:
    """How to reach the Label Studio server."""

    url: str = DEFAULT_URL
    """Base URL of the server, e.g. http://127.0.0.1:8080."""
    api_key: str = field(default=DEMO_TOKEN, repr=False)
    """Legacy API token (sent as `Authorization: Token ...`) of a user who may create projects."""
    username: str = DEMO_USERNAME
    """Admin e-mail: the user a server started by Safeforge creates."""
    password: str = field(default=DEMO_PASSWORD, repr=False)
    """Admin password (for logging in to the web interface)."""
    timeout: float = 30.0
    """Seconds to wait for one HTTP request."""
    data_dir: Path = field(default_factory=lambda: outputs_dir() / DATA_DIR_NAME)
    """Data dir of the server that `safeforge review server start` manages."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "ReviewConfig":
        env = os.environ if environ is None else environ
        return cls(
            url=(env.get("LABEL_STUDIO_URL") or DEFAULT_URL).rstrip("/"),
            api_key=env.get("LABEL_STUDIO_API_KEY") or env.get("LABEL_STUDIO_USER_TOKEN") or DEMO_TOKEN,
            username=env.get("LABEL_STUDIO_USERNAME") or DEMO_USERNAME,
            password=env.get("LABEL_STUDIO_PASSWORD") or DEMO_PASSWORD,
            data_dir=Path(env.get("SAFEFORGE_LABELSTUDIO_DATA") or outputs_dir(env) / DATA_DIR_NAME),
        )

    @property
    def port(self) -> int:
        parsed = urlparse(self.url)
        return parsed.port or (443 if parsed.scheme == "https" else 80)
