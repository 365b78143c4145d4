"""The Microsoft Graph layer: capped client, URL rules, continuation cursors, fixtures."""
