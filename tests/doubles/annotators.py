"""Annotators who join a running Label Studio server as people do: through the organization's invite
link, in a browser session, then with their own API token."""

from __future__ import annotations

import httpx
from label_studio_sdk import LabelStudio


def annotator_token(url: str, admin: LabelStudio, email: str, password: str = "annotator-password-1") -> str:
    """Sign `email` up through the admin's invite link and return the new account's API token (an
    address signs up once per server)."""
    invite = admin.organizations.invites.get_invite_link().invite_url
    with httpx.Client(base_url=url, trust_env=False) as browser:
        browser.get(invite)
        response = browser.post(
            invite,
            data={"email": email, "password": password, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
            headers={"Referer": url + invite},
        )
        if response.status_code != 302:
            raise RuntimeError(f"sign-up of {email} failed: HTTP {response.status_code}")
        return browser.get("/api/current-user/token").json()["token"]


def annotator_client(url: str, token: str, email: str) -> LabelStudio:
    """The annotator's own SDK client (checked to be theirs)."""
    client = LabelStudio(base_url=url, api_key=token)
    assert client.users.whoami().email == email
    return client
