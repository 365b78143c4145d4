"""A keyring backend for tests: entries in a JSON file named by ``MFC_TEST_KEYRING_FILE``.

The OS keyring is a seam: the tests select this backend with ``PYTHON_KEYRING_BACKEND``
(keyring's own switch), so ``login --provider imap`` and a later server process share what
was stored, as they would through the desktop's keyring."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["MFC_TEST_KEYRING_FILE"])

    def _load(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._load()
        entries[f"{service}\0{username}"] = password
        self._path().write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._load()
        if entries.pop(f"{service}\0{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(entries))
