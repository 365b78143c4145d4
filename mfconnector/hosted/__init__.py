"""Hosted mode: the connector as an OAuth protected resource serving many users over HTTP.

``resource`` holds the operator's OAuth settings, the RFC 9728 metadata and the
``WWW-Authenticate`` challenges; ``jwks`` the issuer's signing keys; ``bearer`` the token
checks that turn a request's ``Authorization`` header into the Subject whose state it may
touch.
"""
