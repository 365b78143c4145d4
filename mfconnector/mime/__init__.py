"""A bounded MIME reader, pure (no I/O), shared by the IMAP and Gmail backends.

The stdlib ``email`` parser recurses once per nested multipart (RecursionError at about
1,000 levels) and takes seconds over 200,000 header lines. This reader walks the part tree
with an explicit stack and scans boundaries with ``bytes.find``, under the named limits
``mime_message_bytes``, ``mime_depth``, ``mime_parts``, ``mime_header_lines``,
``mime_header_bytes`` and ``mime_text_bytes``; the stdlib is used only to decode small,
already bounded pieces (an encoded-word header, a Content-Type's parameters).
Whatever is cut or replaced is said in ``MimeMessage.notes``.
"""

from mfconnector.mime.reader import MimeAttachment, MimeMessage, read_message

__all__ = ["MimeAttachment", "MimeMessage", "read_message"]
