"""A real Label Studio server for the review tests (one per session, from a copy of the migrated
template data dir), demo runs on it, and annotators who join it as people do: through the
organization's invite link, then with their own API token."""

from __future__ import annotations

import uuid

import pytest
from label_studio_sdk import LabelStudio
from review_helpers import ADMIN, PASSWORD, TOKEN, free_port, join_as

from safeforge.review import ReviewConfig, ServerError, check_installation, start_server, stop_server
from tests.doubles.review_demo import demo_run


@pytest.fixture(scope="session")
def labelstudio(tmp_path_factory):
    """The running server's handle."""
    try:
        check_installation()
    except ServerError as exc:
        pytest.fail(f"{exc} (CI runs scripts/setup.sh, which calls it)")
    handle = start_server(tmp_path_factory.mktemp("labelstudio"), free_port(), ADMIN, PASSWORD, TOKEN)
    yield handle
    stop_server(handle)


@pytest.fixture
def config(labelstudio) -> ReviewConfig:
    return ReviewConfig(url=labelstudio.url, api_key=TOKEN, username=ADMIN, password=PASSWORD, timeout=20)


@pytest.fixture
def admin(labelstudio) -> LabelStudio:
    return LabelStudio(base_url=labelstudio.url, api_key=TOKEN)


@pytest.fixture
def make_run(tmp_path):
    """A demo run of checked example tasks with a name no other test uses (one project each)."""

    def make(examples: list[str], **options):
        return demo_run(tmp_path / f"run-{uuid.uuid4().hex[:8]}", examples, **options)

    return make


@pytest.fixture
def annotator(labelstudio, admin):
    """An annotator's own SDK client: signed up through the invite link, with their own token."""
    return lambda email: join_as(labelstudio.url, admin, email)
