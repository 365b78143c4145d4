"""The well-known folder names Microsoft Graph accepts in place of a mail folder id.

One list for the read tools (a folder argument may be one of these) and the acting tools'
folder policy (every one but four is a system folder). Source: Microsoft Learn, "mailFolder
resource type", well-known folder names.
"""

from __future__ import annotations

__all__ = ["GRAPH_WELL_KNOWN_FOLDERS", "WELL_KNOWN_FOLDERS"]

WELL_KNOWN_FOLDERS = ("inbox", "sentitems", "drafts", "archive", "deleteditems", "junkemail")
"""The ones a person files mail in and names in a request."""
GRAPH_WELL_KNOWN_FOLDERS = frozenset(
    {
        *WELL_KNOWN_FOLDERS,
        "clutter",
        "conflicts",
        "conversationhistory",
        "localfailures",
        "msgfolderroot",
        "outbox",
        "recoverableitemsdeletions",
        "scheduled",
        "searchfolders",
        "serverfailures",
        "syncissues",
    }
)
