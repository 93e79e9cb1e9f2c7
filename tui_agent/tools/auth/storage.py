"""Where OAuth tokens and client registrations are kept, one record per server URL and
client: the OS keyring when it has a working backend, else a JSON file only the user may
read (mode 0600) in the state dir, replaced whole on every write.

:meth:`TokenStore.slot` gives the SDK's ``TokenStorage`` for one server. Nothing here
logs or prints a token; :meth:`TokenStore.status` says who is logged in until when,
without the secrets.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.config.atomic import write_text
from tui_agent.config.interpolate import learn_secret
from tui_agent.tools.auth.token_hash import token_hash

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SERVICE = "tui-agent"
"""The keyring service name our records are kept under."""
FILE_NAME = "oauth-tokens.json"


class Vault(Protocol):
    """Somewhere to keep one JSON text per key."""

    def read(self, key: str) -> str | None: ...

    def write(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...


class FileVault:
    """Every record in one JSON object in ``path``, mode 0600, written atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _all(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable: as if logged out; the next login writes it afresh
        return {k: v for k, v in data.items() if isinstance(v, str)} \
            if isinstance(data, dict) else {}

    def read(self, key: str) -> str | None:
        return self._all().get(key)

    def write(self, key: str, value: str) -> None:
        records = self._all()
        records[key] = value
        write_text(self.path, json.dumps(records, indent=1, sort_keys=True), mode=0o600)

    def delete(self, key: str) -> None:
        records = self._all()
        if records.pop(key, None) is not None:
            write_text(self.path, json.dumps(records, indent=1, sort_keys=True), mode=0o600)


class KeyringVault:
    """Records in the OS keyring (Secret Service, macOS Keychain, Windows Credential
    Locker), under the service ``tui-agent``."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def read(self, key: str) -> str | None:
        value = self.backend.get_password(SERVICE, key)
        return value if isinstance(value, str) else None

    def write(self, key: str, value: str) -> None:
        self.backend.set_password(SERVICE, key, value)

    def delete(self, key: str) -> None:
        import keyring.errors

        with contextlib.suppress(keyring.errors.PasswordDeleteError):  # nothing kept there
            self.backend.delete_password(SERVICE, key)


def usable_keyring() -> Any | None:
    """The OS keyring's backend, or None when it has none that works here (a headless
    Linux without a Secret Service, for one). A backend the ``keyring`` library does not
    recommend (keyrings.alt's files, say: no safer than our own private file) is used only
    when the user chose it (``PYTHON_KEYRING_BACKEND``, or keyring's ``keyringrc.cfg``).
    Imports ``keyring`` (about 0.1 s)."""
    try:
        import keyring
        from keyring.backends import fail
        from keyring.util import platform_
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return None
    chosen = bool(os.environ.get("PYTHON_KEYRING_BACKEND")) or \
        (platform_.config_root() / "keyringrc.cfg").exists()
    return backend if getattr(backend, "priority", 0) >= 1 or chosen else None


@dataclass(frozen=True)
class Login:
    """Who is logged in to a server, without the secrets."""

    server_url: str
    client_id: str | None
    scope: str | None
    expires_at: float | None
    """Epoch seconds when the access token expires; None when the server did not say."""
    refreshable: bool
    dpop: bool = False
    """The access token is bound to a key kept beside it (DPoP, RFC 9449)."""

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (now or time.time()) >= self.expires_at

    def describe(self) -> str:
        """"logged in as CLIENT until TIME, scope S" (never a token)."""
        who = f" as {self.client_id}" if self.client_id else ""
        if self.expires_at is None:
            until = ""
        elif self.expired():
            until = " (expired; renewed at the next call)" if self.refreshable else \
                " (expired: log in again)"
        else:
            until = " until " + time.strftime("%Y-%m-%d %H:%M", time.localtime(self.expires_at))
        return f"logged in{who}{until}" + (f", scope {self.scope}" if self.scope else "") + \
            (", DPoP-bound" if self.dpop else "")


class TokenStore:
    """OAuth records of every server, in one vault."""

    def __init__(self, vault: Vault | None = None, *,
                 choose: Callable[[], Vault] | None = None) -> None:
        """``vault``, or ``choose`` to pick one at first use."""
        self._vault, self._choose = vault, choose

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            assert self._choose is not None
            self._vault = self._choose()
        return self._vault

    @classmethod
    def default(cls, state_dir: Path) -> TokenStore:
        """The keyring when it works here, else ``state_dir/oauth-tokens.json``; chosen at
        first use (looking for a keyring costs about 0.1 s, and most runs need none)."""
        def choose() -> Vault:
            backend = usable_keyring()
            return KeyringVault(backend) if backend is not None \
                else FileVault(state_dir / FILE_NAME)

        return cls(choose=choose)

    @staticmethod
    def key(server_url: str, client_id: str | None = None) -> str:
        """One record per server URL and configured client (``dynamic`` when the client
        registers itself)."""
        return f"{server_url.rstrip('/')} {client_id or 'dynamic'}"

    def slot(self, server_url: str, client_id: str | None = None) -> TokenSlot:
        return TokenSlot(self, self.key(server_url, client_id))

    def record(self, key: str) -> dict[str, Any]:
        text = self.vault.read(key)
        try:
            data = json.loads(text) if text else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, key: str, **fields: Any) -> None:
        self.vault.write(key, json.dumps({**self.record(key), **fields}, sort_keys=True))

    def forget(self, server_url: str, client_id: str | None = None) -> bool:
        """Log out: drop the tokens and the registration. False when there were none."""
        key = self.key(server_url, client_id)
        had = bool(self.record(key))
        self.vault.delete(key)
        return had

    def status(self, server_url: str, client_id: str | None = None) -> Login | None:
        """Who is logged in to ``server_url``, or None when nobody is."""
        record = self.record(self.key(server_url, client_id))
        tokens = record.get("tokens")
        if not isinstance(tokens, dict) or not tokens.get("access_token"):
            return None
        client = record.get("client") if isinstance(record.get("client"), dict) else {}
        expires_in, saved = tokens.get("expires_in"), record.get("saved_at")
        expires_at = float(saved) + float(expires_in) \
            if isinstance(expires_in, int | float) and isinstance(saved, int | float) else None
        return Login(server_url, client.get("client_id") if client else client_id,
                     tokens.get("scope"), expires_at, bool(tokens.get("refresh_token")),
                     _bound(record.get("dpop"), tokens["access_token"]))


class TokenSlot:
    """One server's record, as the SDK's ``TokenStorage`` protocol wants it."""

    def __init__(self, store: TokenStore, key: str) -> None:
        self.store, self.key = store, key

    async def get_tokens(self) -> OAuthToken | None:
        """The kept tokens, ``expires_in`` counted from now (the SDK reckons expiry from
        when it reads them): one that has expired says so, and is renewed before use."""
        from mcp.shared.auth import OAuthToken

        record = self.store.record(self.key)
        tokens, saved = record.get("tokens"), record.get("saved_at")
        if not isinstance(tokens, dict):
            return None
        learn_secret(tokens.get("access_token"))
        learn_secret(tokens.get("refresh_token"))
        lifetime = tokens.get("expires_in")
        if isinstance(lifetime, int | float) and isinstance(saved, int | float):
            left = int(saved + lifetime - time.time())
            tokens = {**tokens, "expires_in": left if left > 0 else -1}
        return OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        learn_secret(tokens.access_token)
        learn_secret(tokens.refresh_token)
        self.store.update(self.key, tokens=tokens.model_dump(mode="json", exclude_none=True),
                          saved_at=time.time())

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        client = self.store.record(self.key).get("client")
        return OAuthClientInformationFull.model_validate(client) \
            if isinstance(client, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.store.update(self.key, client=client_info.model_dump(mode="json",
                                                                  exclude_none=True))

    def drop_tokens(self, access_token: str) -> None:
        """Forget the tokens (keeping the client registration) if they are still the ones
        that did not do: a login made meanwhile elsewhere is kept."""
        record = self.store.record(self.key)
        tokens = record.get("tokens")
        if isinstance(tokens, dict) and tokens.get("access_token") == access_token:
            del record["tokens"]
            self.store.vault.write(self.key, json.dumps(record, sort_keys=True))


def _bound(kept: object, access_token: str) -> bool:
    """The kept DPoP record says ``access_token`` is the token bound to its key."""
    return isinstance(kept, dict) and kept.get("bound") == token_hash(access_token)
