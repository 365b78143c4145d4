"""The real server process with an accounts file whose Graph accounts live on loopback
servers: ``python tests/support/accounts_server.py NAME=GRAPH_ROOT ... -- MFCONNECTOR_ARGS``.

It is ``mfconnector``'s own entry point (parser, accounts file, wiring, routing, stdio);
only the Graph builder of the provider registry differs, at its two seams: each account's
Graph is at the root given for its name, and its token provider is a fixed one that names
its scopes (``tests/support/acting_harness.py``), because a test cannot sign in to
Microsoft.
"""

from __future__ import annotations

import sys

from mfconnector.cli import main
from mfconnector.entry.account_builders import PROVIDER_BUILDERS, LazyGraph
from mfconnector.entry.accounts_file import AccountSpec
from mfconnector.entry.providers import BuildPlace, ServedAccount
from mfconnector.graph.client import GraphClient
from mfconnector.graph.mail_backend import graph_account
from tests.support.acting_harness import ScopedTokens


def run(argv: list[str]) -> int:
    split = argv.index("--")
    roots = dict(pair.split("=", 1) for pair in argv[:split])

    def loopback_graph(spec: AccountSpec, place: BuildPlace) -> ServedAccount:
        tokens = ScopedTokens(account=f"{spec.name}@contoso.com")
        root = roots[spec.name]
        graph = LazyGraph(
            lambda: GraphClient(token_provider=tokens, limits=place.limits, root=root)
        )
        account = graph_account(spec.name, graph, place.limits, gates=spec.gates)
        return ServedAccount(account, tokens, graph, graph.aclose)

    PROVIDER_BUILDERS["graph"] = loopback_graph
    return main(argv[split + 1 :])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
