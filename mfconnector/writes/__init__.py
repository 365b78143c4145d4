"""Acting on mail: gates, the send state store, frozen messages and their digests."""
