"""A stand-in for the user's web browser, run as ``$BROWSER <url>`` by Python's webbrowser.

It loads the sign-in page through the proxy in ``FAKE_BROWSER_PROXY`` (trusting the CA in
``FAKE_BROWSER_CA``), reads the form the page would auto-submit and posts it to the loopback
redirect URI directly, as a browser does. It writes nothing to stdout (it shares the
server's); problems go to stderr and the exit status.
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urlencode


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.action = values.get("action", "")
        elif tag == "input" and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")


def main(url: str) -> int:
    context = ssl.create_default_context(cafile=os.environ["FAKE_BROWSER_CA"])
    through_proxy = urllib.request.build_opener(
        urllib.request.ProxyHandler({"https": os.environ["FAKE_BROWSER_PROXY"]}),
        urllib.request.HTTPSHandler(context=context),
    )
    with through_proxy.open(url, timeout=10) as page:
        form = _Form()
        form.feed(page.read().decode("utf-8"))
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(form.action, data=urlencode(form.fields).encode("ascii"))
    with direct.open(request, timeout=10) as done:
        body = done.read().decode("utf-8")
    if "Signed in to mfconnector" not in body:
        sys.stderr.write("browser: the redirect page did not confirm sign-in\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
