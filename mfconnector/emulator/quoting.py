"""The quoted history Outlook writes below a reply or forward: a header block (From, Sent,
To, Subject) and the previous message's whole body.

Shared by the demo's seeded threads and the emulator's ``createReply``/``createForward``,
so a reply written in the demo looks like the ones it already holds.
"""

from __future__ import annotations

from datetime import datetime

from mfconnector.emulator.model import Message

__all__ = ["escape", "outlook_time", "quoted_history"]


def escape(text: str) -> str:
    """Text for an HTML body: ``&``, ``<`` and ``>`` escaped, quotes left as Outlook does."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def outlook_time(moment: datetime) -> str:
    """``Friday, March 6, 2026 4:42 PM``, as Outlook writes "Sent:" (portable strftime)."""
    hour = moment.hour % 12 or 12
    half = "AM" if moment.hour < 12 else "PM"
    return f"{moment:%A, %B} {moment.day}, {moment.year} {hour}:{moment:%M} {half}"


def _quote_header(message: Message) -> str:
    """Outlook's quoted-history header block, as createReply writes it."""
    to = "; ".join(name for name, _ in message.to)
    sent = outlook_time(message.sent or message.received)
    return (
        '<hr style="display:inline-block;width:98%" tabindex="-1">\r\n'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" '
        f'style="font-size:11pt" color="#000000"><b>From:</b> {escape(message.sender[0])} '
        f"&lt;{message.sender[1]}&gt;<br>\r\n<b>Sent:</b> {sent}<br>\r\n"
        f"<b>To:</b> {escape(to)}<br>\r\n<b>Subject:</b> {escape(message.subject)}</font>"
        "<div>&nbsp;</div>\r\n</div>\r\n"
    )


def quoted_history(message: Message) -> str:
    """The previous message's whole body, below Outlook's header block."""
    inner = message.body
    if message.body_type == "html":
        start = inner.find("<body>")
        end = inner.rfind("</body>")
        if start != -1 and end != -1:
            inner = inner[start + len("<body>") : end]
    else:
        inner = "".join(f"<p>{escape(line)}</p>" for line in inner.splitlines())
    return _quote_header(message) + f"<div>{inner}</div>\r\n"
