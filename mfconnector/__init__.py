"""mfconnector: a bounded, read-only MCP stdio server for Microsoft 365 mail and files."""

__version__ = "0.3.0.dev0"
SERVER_NAME = "mfconnector"

__all__ = ["SERVER_NAME", "__version__"]
