"""Folders and files for one demo drive, by path, with ids of real length."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import timedelta

from mfconnector.emulator import ids
from mfconnector.emulator.model import Drive, DriveItem, Recipient
from mfconnector.emulator.seed.facts import DEMO_NOW, ME

__all__ = ["DriveBuilder", "text_file"]


class DriveBuilder:
    def __init__(self, drive: Drive, label: str) -> None:
        self.drive = drive
        self.label = label
        self.count = 0

    def folder(self, path: str, days_ago: int = 60) -> DriveItem:
        return self._add(path, None, None, days_ago, "", folder=True)

    def file(
        self,
        path: str,
        mime: str,
        data: Callable[[], bytes],
        *,
        text: str = "",
        days_ago: int = 10,
        author: Recipient = ME,
        size: int | None = None,
    ) -> DriveItem:
        return self._add(path, mime, data, days_ago, text, author=author, size=size)

    def _add(
        self,
        path: str,
        mime: str | None,
        data: Callable[[], bytes] | None,
        days_ago: int,
        text: str,
        *,
        folder: bool = False,
        author: Recipient = ME,
        size: int | None = None,
    ) -> DriveItem:
        parent_path, _, name = path.rpartition("/")
        parent = self.drive.by_path(parent_path)
        assert parent is not None, path
        self.count += 1
        moment = DEMO_NOW - timedelta(days=days_ago, hours=self.count % 11, minutes=self.count)
        cached = functools.cache(data) if data is not None else None
        item = DriveItem(
            id=ids.drive_item_id(f"{self.label}:{path}"),
            name=name,
            parent_id=parent.id,
            created=moment - timedelta(days=3),
            modified=moment,
            author=author,
            is_folder=folder,
            mime=mime,
            data=cached,
            text=text,
            guid=ids.guid(f"{self.label}:{path}"),
        )
        item.declared_size = size if size is not None else (None if cached else 0)
        return self.drive.add(item)


def text_file(content: str) -> tuple[Callable[[], bytes], str]:
    data = content.encode("utf-8")
    return (lambda: data), content
