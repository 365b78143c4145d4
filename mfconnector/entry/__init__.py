"""The entry point's rooms: the command line (``parser``), what a mode is built from
(``wiring``) and how a built server is served on stdio (``serving``).

``mfconnector.cli:main`` dispatches to them; only this layer knows how pieces fit.
"""
