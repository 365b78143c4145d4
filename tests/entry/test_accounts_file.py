"""The accounts file (``--accounts FILE``): what it accepts, and every malformed input
refused with a sentence in our words that names the account and the key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mfconnector.entry.accounts_file import (
    AccountsFileError,
    AccountSpec,
    load_accounts_file,
    parse_accounts,
)
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.refs import account_tag

LIMITS = DEFAULT_LIMITS

EXAMPLE = """
[[account]]
name = "work"
provider = "graph"
tenant = "contoso.onmicrosoft.com"
cloud = "global"
mailbox = "shared@contoso.com"
all_files = true
enable_writes = true
enable_send = true

[[account]]
name = "home"
provider = "imap"
imap = "imap.example.org:993"
imap_security = "tls"
imap_user = "me@example.org"
smtp = "smtp.example.org:587"
smtp_security = "starttls"
from = "Me <me@example.org>"
append_sent = false
enable_writes = true
enable_delete = true

[[account]]
name = "personal"
provider = "gmail"
api_root = "http://127.0.0.1:8123"
client_id = "1234.apps.googleusercontent.com"
"""


def refused(text: str, limits: object = LIMITS) -> str:
    with pytest.raises(AccountsFileError) as caught:
        parse_accounts(text, limits)  # type: ignore[arg-type]
    return str(caught.value)


def accounts(count: int, provider: str = "graph") -> str:
    return "".join(
        f'[[account]]\nname = "a{i}"\nprovider = "{provider}"\n'
        + ('imap = "h"\nimap_user = "u"\n' if provider == "imap" else "")
        for i in range(count)
    )


def test_the_documented_example_is_read_in_order_with_its_settings_and_gates() -> None:
    specs = parse_accounts(EXAMPLE, LIMITS)
    assert [(s.name, s.provider) for s in specs] == [
        ("work", "graph"),
        ("home", "imap"),
        ("personal", "gmail"),
    ]
    work, home, personal = specs
    assert work.gates == {"writes", "send"}
    assert work.settings["tenant"] == "contoso.onmicrosoft.com"
    assert work.settings["all_files"] is True
    assert home.gates == {"writes", "delete"}
    assert home.settings["imap"] == "imap.example.org:993"
    assert home.settings["from"] == "Me <me@example.org>" and home.settings["append_sent"] is False
    assert personal.gates == frozenset()
    assert personal.settings == {
        "api_root": "http://127.0.0.1:8123",
        "client_id": "1234.apps.googleusercontent.com",
    }


@pytest.mark.parametrize(
    "key",
    ["password", "smtp_password", "client_secret", "refresh_token", "Access_Token", "passwd"],
)
def test_a_secret_key_is_refused_by_name_and_its_value_never_repeated(key: str) -> None:
    text = (
        '[[account]]\nname = "home"\nprovider = "imap"\nimap = "h"\nimap_user = "u"\n'
        f'{key} = "hunter2-s3cr3t"\n'
    )
    message = refused(text)
    assert key in message
    assert "environment or the OS keyring" in message
    assert "hunter2" not in message


def test_a_secret_is_refused_before_anything_else_is_judged() -> None:
    # an unknown provider and a secret: the secret is what is named
    message = refused('[[account]]\nname = "x"\nprovider = "pop3"\ntoken = "abc"\n')
    assert "'account.token'" in message


def test_a_secret_in_a_nested_table_is_found_too() -> None:
    message = refused('[[account]]\nname = "x"\nprovider = "graph"\n[account.auth]\nsecret = "v"\n')
    assert "account.auth.secret" in message and '"v"' not in message


def test_bad_toml_names_the_line_in_our_words() -> None:
    message = refused('[[account]]\nname = "x"\nprovider == "graph"\n')
    assert message == "not valid TOML at line 3, column 11"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "defines no account"),
        ("title = 'mine'\n", "unknown top-level key 'title'"),
        ('account = "x"\n', "defines no account"),
        ('[[account]]\nprovider = "graph"\n', "account #1 has no `name`"),
        ('[[account]]\nname = "x"\n', "account 'x': unknown provider none"),
        ('[[account]]\nname = "x"\nprovider = "exchange"\n', "unknown provider 'exchange'"),
        ('[[account]]\nname = "x"\nprovider = "graph"\nimap = "h"\n', "unknown key 'imap'"),
        ('[[account]]\nname = "x"\nprovider = "imap"\nhost = "h"\n', "unknown key 'host'"),
        ('[[account]]\nname = "x"\nprovider = "graph"\nall_files = "yes"\n', "true or false"),
        ('[[account]]\nname = "x"\nprovider = "graph"\ncloud = "mars"\n', "global, usgov"),
        ('[[account]]\nname = "x"\nprovider = "imap"\nimap_user = "u"\n', "needs 'imap'"),
        ('[[account]]\nname = "x"\nprovider = "imap"\nimap = "h"\n', "needs 'imap_user'"),
        (
            '[[account]]\nname = "x"\nprovider = "imap"\nimap = "h:0"\nimap_user = "u"\n',
            "HOST or HOST:PORT",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "imap"\nimap = "h:99999"\nimap_user = "u"\n',
            "a port from 1 to 65535",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "imap"\nimap = "h h"\nimap_user = "u"\n',
            "HOST or HOST:PORT",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "imap"\nimap = "mail.example.org"\n'
            'imap_user = "u"\nimap_security = "plain"\n',
            "imap_security = 'plain' is allowed only to a loopback address",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "imap"\nimap = "127.0.0.1:1143"\n'
            'imap_user = "u"\nsmtp = "smtp.example.org"\nsmtp_security = "plain"\n',
            "smtp_security = 'plain' is allowed only to a loopback address",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "gmail"\napi_root = "http://gmail.example"\n',
            "https URL, or http to a loopback",
        ),
        (
            '[[account]]\nname = "x"\nprovider = "graph"\nenable_delete = true\n',
            "needs enable_writes",
        ),
        ('[[account]]\nname = "bad name"\nprovider = "graph"\n', "letters, digits"),
        ('[[account]]\nname = "-x"\nprovider = "graph"\n', "starting with a letter"),
        (
            '[[account]]\nname = "Work"\nprovider = "graph"\n[[account]]\nname = "work"\n'
            'provider = "graph"\n',
            "two accounts are named 'work'",
        ),
    ],
)
def test_each_malformed_input_is_refused_clearly(text: str, expected: str) -> None:
    assert expected in refused(text)


def test_a_plain_imap_connection_to_loopback_is_allowed() -> None:
    text = (
        '[[account]]\nname = "x"\nprovider = "imap"\nimap = "127.0.0.1:1143"\n'
        'imap_user = "u"\nimap_security = "plain"\nsmtp = "[::1]:2525"\n'
        'smtp_security = "plain"\n'
    )
    assert parse_accounts(text, LIMITS)[0].settings["smtp"] == "[::1]:2525"


def clashing_names() -> tuple[str, str]:
    """Two different names whose Graph reference tags are the same (found by search)."""
    seen: dict[str, str] = {}
    for i in range(10_000):
        name = f"n{i}"
        tag = account_tag("graph", name).tag
        if tag in seen:
            return seen[tag], name
        seen[tag] = name
    raise AssertionError("no clash among 10,000 names")


def test_names_whose_reference_tags_collide_are_refused() -> None:
    first, second = clashing_names()
    text = (
        f'[[account]]\nname = "{first}"\nprovider = "graph"\n'
        f'[[account]]\nname = "{second}"\nprovider = "graph"\n'
    )
    message = refused(text)
    assert f"accounts {first!r} and {second!r} give the same reference tag" in message


def test_the_same_name_at_two_providers_gives_two_tags_and_is_still_refused() -> None:
    text = (
        '[[account]]\nname = "x"\nprovider = "graph"\n[[account]]\nname = "X"\nprovider = "gmail"\n'
    )
    assert "two accounts are named 'X'" in refused(text)


@pytest.mark.parametrize("count", [LIMITS.accounts - 1, LIMITS.accounts])
def test_up_to_the_account_limit_is_served(count: int) -> None:
    assert len(parse_accounts(accounts(count), LIMITS)) == count


def test_one_account_past_the_limit_is_refused_naming_it() -> None:
    message = refused(accounts(LIMITS.accounts + 1))
    assert message == (
        f"defines {LIMITS.accounts + 1} accounts; at most {LIMITS.accounts} (accounts) are served"
    )


def test_the_account_limit_read_is_the_active_one() -> None:
    small = replace(LIMITS, accounts=2)
    assert len(parse_accounts(accounts(2), small)) == 2
    assert "at most 2 (accounts)" in refused(accounts(3), small)


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_the_name_length_limit(extra: int) -> None:
    name = "n" * (LIMITS.account_name_chars + extra)
    text = f'[[account]]\nname = "{name}"\nprovider = "graph"\n'
    if extra <= 0:
        assert parse_accounts(text, LIMITS)[0].name == name
    else:
        assert "account_name_chars" in refused(text)


def padded_file(tmp_path: Path, size: int) -> Path:
    body = b'[[account]]\nname = "a"\nprovider = "graph"\n'
    path = tmp_path / "accounts.toml"
    path.write_bytes(body + b"#" * (size - len(body) - 1) + b"\n")
    assert path.stat().st_size == size
    return path


@pytest.mark.parametrize("extra", [-1, 0])
def test_a_file_up_to_the_size_limit_is_read(tmp_path: Path, extra: int) -> None:
    path = padded_file(tmp_path, LIMITS.accounts_file_bytes + extra)
    assert load_accounts_file(path, LIMITS) == [AccountSpec("a", "graph")]


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = padded_file(tmp_path, LIMITS.accounts_file_bytes + 1)
    with pytest.raises(AccountsFileError) as caught:
        load_accounts_file(path, LIMITS)
    assert str(caught.value) == (
        f"--accounts {path}: larger than {LIMITS.accounts_file_bytes:,} bytes (accounts_file_bytes)"
    )


def test_a_missing_or_binary_file_is_said_in_our_words(tmp_path: Path) -> None:
    with pytest.raises(AccountsFileError, match="cannot be read"):
        load_accounts_file(tmp_path / "none.toml", LIMITS)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[[account]]")
    with pytest.raises(AccountsFileError, match="not UTF-8 text"):
        load_accounts_file(binary, LIMITS)
