"""``--token-auth-file``: Kubernetes' static token CSV, read once at start.

The parser keeps ``tokenfile.NewCSV``'s rules (three columns at least, optional quoted groups,
empty tokens skipped, the last of duplicate tokens wins); a bad file stops ``kstore serve``
before it listens, naming the file and the problem.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kstore.errors import BadRequest, Unauthorized
from kstore.registry.interface import UserInfo
from kstore.server.filters.authentication import (
    ANONYMOUS,
    Authenticator,
    load_token_file,
)


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens.csv"
    path.write_text(text)
    return path


def test_records_give_user_uid_and_quoted_groups(tmp_path: Path) -> None:
    tokens = load_token_file(_file(tmp_path, 't1,alice,u1,"dev,qa"\nt2,bob,u2\n\n'))
    assert len(tokens) == 2
    assert tokens.authenticate("t1") == UserInfo(name="alice", uid="u1", groups=("dev", "qa"))
    assert tokens.authenticate("t2") == UserInfo(name="bob", uid="u2", groups=())
    assert tokens.authenticate("t3") is None
    assert tokens.authenticate("t1 ") is None
    assert tokens.authenticate("") is None


def test_empty_token_is_skipped_and_last_duplicate_wins(tmp_path: Path) -> None:
    tokens = load_token_file(_file(tmp_path, ",nobody,u0\nt,first,u1\nt,second,u2\n"))
    assert len(tokens) == 1
    user = tokens.authenticate("t")
    assert user is not None and user.name == "second"


def test_fewer_than_three_columns_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path, "t1,alice,u1\nt2,bob\n")
    with pytest.raises(BadRequest) as error:
        load_token_file(path)
    assert error.value.message == (
        f"--token-auth-file: token file '{path}' must have at least 3 columns "
        "(token, user name, user uid), found 2"
    )


def test_malformed_csv_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="is not valid CSV"):
        load_token_file(_file(tmp_path, 't1,alice,u1,"dev\n'))


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="cannot read token file"):
        load_token_file(tmp_path / "absent.csv")


def test_authenticated_users_join_system_authenticated(tmp_path: Path) -> None:
    authenticator = Authenticator(load_token_file(_file(tmp_path, 't1,alice,u1,"dev"\n')))
    user = authenticator.authenticate("Bearer t1")
    assert user.groups == ("dev", "system:authenticated")
    assert authenticator.authenticate("") == ANONYMOUS
    # Not a bearer credential: no authenticator claims it, so it is anonymous.
    assert authenticator.authenticate("Basic dTpw") == ANONYMOUS
    with pytest.raises(Unauthorized):
        authenticator.authenticate("Bearer t2")


def test_without_anonymous_auth_no_credentials_is_unauthorized(tmp_path: Path) -> None:
    authenticator = Authenticator(load_token_file(_file(tmp_path, "t1,a,u\n")), anonymous=False)
    with pytest.raises(Unauthorized):
        authenticator.authenticate("")
    assert authenticator.authenticate("Bearer t1").name == "a"


def test_serve_refuses_a_bad_token_file_before_listening(tmp_path: Path) -> None:
    path = _file(tmp_path, "only-a-token\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--token-auth-file",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: --token-auth-file: token file '{path}' must have at least 3 columns "
        "(token, user name, user uid), found 1"
    )
    assert "kstore serving" not in done.stdout
    assert not (tmp_path / "data").exists()


def test_serve_refuses_an_unknown_authorization_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--authorization-mode",
            "Node,RBAC",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert 'authorization-mode "Node" is not a valid mode' in done.stderr
