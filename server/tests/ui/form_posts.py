"""Helpers of the form-post tests: post a form as the browser does, read what the page says,
and look in the database."""

import html
import re
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Select


def post_form(client: TestClient, path: str, csrf: str, **fields: Any) -> httpx.Response:
    """Post ``fields`` (a list repeats a field, as checkboxes do) with the CSRF token."""
    reply: httpx.Response = client.post(
        path, data={"csrf_token": csrf, **fields}, follow_redirects=False
    )
    return reply


def said(reply: httpx.Response, testid: str) -> str:
    """The text of the page's element with ``data-testid`` (a refusal, a form error, a secret)."""
    match = re.search(rf'data-testid="{testid}"[^>]*>(.*?)</', reply.text, re.S)
    assert match, reply.text
    return html.unescape(match.group(1))


def heading(reply: httpx.Response) -> str:
    """The page's first heading: a refusal names its kind there."""
    match = re.search(r"<h1>(.*?)</h1>", reply.text, re.S)
    assert match, reply.text
    return html.unescape(match.group(1)).strip()


def rows(app: FastAPI, query: Select[Any]) -> list[Any]:
    with app.state.sessionmaker() as session:
        return list(session.scalars(query))
