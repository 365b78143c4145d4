"""The protected-resource metadata, challenges and settings checks of hosted mode."""

from __future__ import annotations

import pytest

from mfconnector.hosted.resource import (
    ResourceSettings,
    SettingsError,
    challenge,
    metadata_document,
    metadata_path,
    metadata_url,
)

ISSUER = "https://login.microsoftonline.com/8f1c2a4e-0000-4000-8000-00000000aaaa/v2.0"


def settings(**overrides: str) -> ResourceSettings:
    values = {
        "public_url": "https://mail.example.com/mcp",
        "issuer": ISSUER,
        "scope": "Mail.Connector",
    }
    values.update(overrides)
    return ResourceSettings.build(**values)


def test_the_metadata_sits_at_the_rfc_9728_path_for_the_resource() -> None:
    assert (
        metadata_path("https://mail.example.com/mcp") == "/.well-known/oauth-protected-resource/mcp"
    )
    assert metadata_path("https://mail.example.com/") == "/.well-known/oauth-protected-resource"
    assert (
        metadata_url("https://mail.example.com:8443/tenant/mcp/")
        == "https://mail.example.com:8443/.well-known/oauth-protected-resource/tenant/mcp"
    )


def test_the_metadata_names_the_issuer_and_the_scope() -> None:
    assert metadata_document(settings()) == {
        "resource": "https://mail.example.com/mcp",
        "authorization_servers": [ISSUER],
        "scopes_supported": ["Mail.Connector"],
        "bearer_methods_supported": ["header"],
        "resource_name": "mfconnector",
    }
    template = ISSUER.replace("8f1c2a4e-0000-4000-8000-00000000aaaa", "{tenantid}")
    multi = settings(
        issuer=template,
        jwks_url="https://login.microsoftonline.com/common/keys",
        allowed_tenants="b,a",
    )
    assert metadata_document(multi)["authorization_servers"] == [
        "https://login.microsoftonline.com/a/v2.0",
        "https://login.microsoftonline.com/b/v2.0",
    ]


def test_challenges_point_to_the_metadata_and_say_what_went_wrong() -> None:
    resource_metadata = (
        'resource_metadata="https://mail.example.com/.well-known/oauth-protected-resource/mcp"'
    )
    assert challenge(settings()) == f"Bearer {resource_metadata}"
    assert challenge(settings(), error="insufficient_scope", scope="Mail.Connector") == (
        f'Bearer {resource_metadata}, error="insufficient_scope", scope="Mail.Connector"'
    )
    quoted = challenge(settings(), error="invalid_token", description='say "hi" \\ there')
    assert quoted.endswith("error_description=\"say 'hi'  there\"")


def test_the_audience_defaults_to_the_public_url_and_takes_a_list() -> None:
    assert settings().audience == ("https://mail.example.com/mcp",)
    assert settings(audience="api://abc, 1234").audience == ("api://abc", "1234")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"issuer": "http://login.example.com/v2.0"}, "--oauth-issuer must be an https URL"),
        ({"public_url": "ftp://mail.example.com/mcp"}, "--public-url must be an https URL"),
        ({"public_url": "https://mail.example.com/mcp?x=1"}, "query or a fragment"),
        ({"jwks_url": "http://10.0.0.1/keys"}, "--oauth-jwks-url must be an https URL"),
        ({"issuer": "https://login.microsoftonline.com/{tenantid}/v2.0"}, "set --oauth-jwks-url"),
        ({"scope": "two scopes"}, "one scope name"),
        ({"issuer": "https://user:pw@login.example.com/v2.0"}, "user name or password"),
        ({"audience": " , "}, "names no audience"),
    ],
)
def test_settings_that_cannot_work_are_refused_at_start_up(overrides, message) -> None:
    with pytest.raises(SettingsError, match=message.replace("?", r"\?")):
        settings(**overrides)


def test_loopback_http_is_accepted_for_tests_and_local_issuers() -> None:
    local = settings(issuer="http://127.0.0.1:8080/t/v2.0", public_url="http://localhost:8000/mcp")
    assert local.discovery_url == "http://127.0.0.1:8080/t/v2.0/.well-known/openid-configuration"
