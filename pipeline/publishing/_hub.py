"""Pushing a release folder to the Hugging Face Hub (or any Hub-compatible server, HF_ENDPOINT).

The token comes from HF_TOKEN and is handed to huggingface_hub only; it is never printed or
written. The repo is created when missing; a version that already exists as a tag is refused.
The folder goes up as one commit on `main`, then the version is tagged on that commit.
"""

from __future__ import annotations

from pathlib import Path

from safeforge.publishing._errors import PublishError
from safeforge.settings import Settings


def hub_token() -> str:
    token = Settings.load().hf_token
    if token is None:
        raise PublishError("HF_TOKEN is not set: a token with write access is needed to push")
    return token.get_secret_value()


def _api(token: str):
    from huggingface_hub import HfApi

    return HfApi(token=token)


def remote_version_exists(repo_id: str, version: str, token: str) -> bool:
    """True when `version` is already a tag of the dataset repo (False if the repo is missing)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = _api(token).list_repo_refs(repo_id, repo_type="dataset")
    except RepositoryNotFoundError:
        return False
    return any(tag.name == version for tag in refs.tags)


def check_card(text: str) -> None:
    """The card's metadata as huggingface_hub reads it: PublishError when it does not parse."""
    from huggingface_hub import DatasetCard

    try:
        DatasetCard(text).data.to_dict()
    except (ValueError, TypeError) as exc:
        raise PublishError(f"the dataset card's metadata does not parse: {exc}") from None


def push_release(folder, repo_id: str, version: str, token: str) -> str:
    """Upload `folder` and tag it `version`; returns the URL of the tagged tree."""
    from huggingface_hub import DatasetCard
    from huggingface_hub.errors import HfHubHTTPError

    api = _api(token)
    try:
        try:  # the Hub's own card validation (its /api/validate-yaml), before anything is uploaded
            DatasetCard.load(Path(folder) / "README.md").validate(repo_type="dataset")
        except ValueError as exc:
            raise PublishError(f"{repo_id}: the Hub rejects the dataset card: {exc}") from None
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        if remote_version_exists(repo_id, version, token):
            raise PublishError(f"{repo_id}: version {version} is already published (tag exists)")
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message=f"Release {version}")
        api.create_tag(repo_id, tag=version, revision=commit.oid, repo_type="dataset", tag_message=f"Safeforge release {version}")
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        detail = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
        raise PublishError(f"{repo_id}: the Hub refused the release (HTTP {status}): {detail}") from None
    return f"{api.endpoint}/datasets/{repo_id}/tree/{version}"
