"""Text from Word, Excel, PowerPoint, PDF and .eml files, parsed in a bounded worker.

Nothing here is imported at start-up. The server side (``runner``, ``formats``) is small
and stdlib-only; the parsers (``ooxml``, ``pdf``, ``eml``) only ever run inside the worker
process (``worker``), under CPU, memory and wall-clock limits.
"""
