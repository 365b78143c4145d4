"""How a Graph continuation link is kept in a cursor: canonically encoded.

Cursors themselves are signed on the tools' side (``tools.cursors``): they carry a
backend's position, for Graph ``{"link": url}``, and the backend checks the link against
the Graph root before any request (``graph.mail_pages.link_of``, ``tools.listing`` for
the files tools).
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["canonical_link"]

_URL_SAFE = "!$%&'()*+,/:;=?@[]~"
"""Characters left as they are when a link is canonicalised: ``%`` keeps escapes intact;
``#`` is encoded (a next link has no fragment: a raw ``#`` is search text)."""


def canonical_link(url: str) -> str:
    """``url`` with spaces, ``#``, controls and non-ASCII percent-encoded, all else unchanged.

    Graph's OneDrive search links carry the query text raw (``search(q='two words')``);
    httpx would encode the space itself, but the client refuses whitespace in a URL (a
    parser could drop it), so the link is issued already encoded.
    """
    return quote(url, safe=_URL_SAFE)
