"""The shared backend conformance suite (tests/support/mail_conformance.py) for
GraphMailBackend, against the project's Graph emulator at httpx's transport seam (as
``--demo`` serves it), once for the global cloud and once for a national cloud, where
Graph has no permanent deletion and the same checks expect ``Unsupported``.

The seeder files mail into the emulator's model (tests/support/emulator_seeding.py),
independent of the backend under test; sends are delivered by the emulator to the
colleague's mailbox of the same tenant, where deliveries are counted. The foreign backend
is that colleague's own account: another mailbox, another reference tag.
"""

from __future__ import annotations

from typing import Any

import pytest

from mfconnector.auth import StaticTokenProvider
from mfconnector.emulator import Emulator
from mfconnector.emulator.transport import EmulatorTransport
from mfconnector.graph.client import GraphClient
from mfconnector.graph.mail_backend import GraphMailBackend, graph_account
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.query import MessageFilter, PageRequest
from tests.support.emulator_seeding import COLLEAGUE, EmulatorSeeder, conformance_tenant
from tests.support.mail_conformance import (
    CHECKS,
    Check,
    Conformance,
    SeedMessage,
    check_id,
    unique,
)


def backend_for(emulator: Emulator, name: str, own_path: str, cloud: str) -> GraphMailBackend:
    client = GraphClient(
        token_provider=StaticTokenProvider("t"),
        limits=DEFAULT_LIMITS,
        root=DEFAULT_GRAPH_ROOT,
        transport=EmulatorTransport(emulator),
    )

    async def factory() -> Any:
        return client

    account = graph_account(name, factory, DEFAULT_LIMITS, own_path=own_path, cloud=cloud)
    assert isinstance(account.mail, GraphMailBackend)
    return account.mail


@pytest.fixture(params=["global", "usgov"])
def env(request: pytest.FixtureRequest) -> Conformance:
    emulator = Emulator(conformance_tenant)
    backend = backend_for(emulator, "work", "/me", request.param)
    foreign = backend_for(emulator, "colleague", f"/users/{COLLEAGUE[1]}", request.param)
    return Conformance(backend, EmulatorSeeder(emulator, backend), foreign)


@pytest.mark.parametrize("check", CHECKS, ids=check_id)
async def test_conformance(check: Check, env: Conformance) -> None:
    await check(env)


def test_the_national_cloud_really_lacks_permanent_deletion(env: Conformance) -> None:
    caps = env.backend.capabilities
    assert caps.provider == "graph" and caps.conditional_flags and caps.move
    if isinstance(env.backend, GraphMailBackend) and env.backend.cloud == "global":
        assert caps.permanent_delete
    else:
        assert not caps.permanent_delete
        assert "no permanent deletion" in dict(caps.missing)["permanent_delete"]


async def test_the_seeder_files_by_role_where_the_backend_lists_it(env: Conformance) -> None:
    for role in ("inbox", "sent", "drafts", "trash", "junk", "archive"):
        subject = unique(f"Put-{role}")
        await env.seed.put(role, [SeedMessage(subject, flagged=True)])
        folder = await env.backend.resolve_folder(role, "folder")
        listed = await env.backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))
        assert [(m.subject, m.unread, m.flag) for m in listed.items] == [
            (subject, True, "flagged")
        ], role
