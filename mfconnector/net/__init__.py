"""How mfconnector reaches the network: one proxy setting and one trust decision for both
HTTP stacks (httpx for Graph, requests under msal for sign-in).

``settings`` is pure (flags and environment in, a frozen ``NetworkSettings`` out);
``tls`` builds the certificate-verifying ``ssl.SSLContext`` (the operating system's trust
store through ``truststore``) and names certificate failures; ``graph_transport`` and
``signin_session`` turn the settings into an httpx transport and a requests session. Neither
stack reads proxy or CA variables from the environment by itself: only ``--proxy env`` does.
``capped_body`` reads an answer under a byte cap (raw and inflated) and parses it as strict
JSON, for the Graph and Gmail clients alike.
"""
