"""The values of one ``[servers.NAME]`` made ready at load: ``${VAR}`` expanded in its
command, args, env, url, headers and ``oauth``, a key file read, and the secrets among
them (also ones written as they are, by their names) recorded for masking. A problem
names the file, the line and the key. ``[model]``'s are :mod:`tui_agent.config.model_keys`'.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import MIN_SECRET_LEN, Expander, UnsetVariable
from tui_agent.config.model_keys import MIN_SECRET
from tui_agent.config.models import ServerConfig
from tui_agent.config.oauth import OAUTH_SECRETS, OAUTH_TEXT, OAuthSettings
from tui_agent.config.printable import safe_name
from tui_agent.config.reading import Origin
from tui_agent.config.urls import url_secrets


class UnsetServerVariable(ConfigError):
    """A ``${VAR}`` of one server is not set: that server cannot start, but the rest of
    the configuration can be used (:attr:`Settings.unready`)."""

    def __init__(self, problem: str, file: Path, variable: str) -> None:
        super().__init__(problem, file)
        self.variable = variable


def expand_server(name: str, server: ServerConfig, origin: Origin,
                  expander: Expander) -> ServerConfig:
    """``server`` with its variables expanded; raises :class:`UnsetServerVariable` naming
    an unset one (and :class:`ConfigError` for another problem)."""
    def ex(value: str, *key: str | int, secret: bool = False) -> str:
        try:
            return expander.expand(value, secret=secret)
        except UnsetVariable as unset:
            dotted = safe_name(".".join(str(k) for k in (*origin.path, *key)))
            var = unset.name
            raise UnsetServerVariable(
                f"{origin.where(*key)}{dotted}: ${{{var}}} is not set in the environment "
                f"(set {var}, or remove it from server '{safe_name(name)}', or write "
                f"${{{var}:-default}} to give a default)", origin.file, var) from None

    def maybe(key: str) -> str | None:
        value = getattr(server, key)
        return ex(value, key) if value else None

    command: str | list[str] | None = server.command
    if isinstance(command, list):
        command = [ex(c, "command", i) for i, c in enumerate(command)]
    elif command:
        command = ex(command, "command")
    for part, values in (("env", server.env), ("headers", server.headers)):
        for key, value in values.items():  # a key written as it is, not from a variable
            if secret_name(part, key) and len(value) >= MIN_SECRET and "${" not in value:
                expander.secrets.add(value)
    headers = {k: ex(v, "headers", k, secret=True) for k, v in server.headers.items()}
    _check_headers(headers, origin)
    url = ex(server.url, "url", secret=True) if server.url else None
    # A URL's credentials written as they are (a password, a token as the user name, a
    # secret-named query value: never ?workspace=production) are masked everywhere, as
    # a ${VAR} is; every other query value is hidden only where the URL is printed.
    expander.secrets.update(s for s in url_secrets(url) if len(s) >= MIN_SECRET_LEN)
    return server.model_copy(update={
        "command": command,
        "args": [ex(a, "args", i) for i, a in enumerate(server.args)],
        "volumes": [ex(v, "volumes", i) for i, v in enumerate(server.volumes)],
        **{key: maybe(key) for key in ("image", "container", "workdir", "docker_host")},
        "env": {k: ex(v, "env", k, secret=True) for k, v in server.env.items()},
        "url": url,
        "headers": headers,
        "oauth": expand_oauth(server.oauth, ex, origin, expander) if server.oauth else None,
    })


def _check_headers(headers: dict[str, str], origin: Origin) -> None:
    """Refuses a header with a line break (CR or LF) in its name or value: HTTP has no
    such header, and the HTTP library's error would quote the value (a secret) in full."""
    for key, value in headers.items():
        if any(c in text for c in "\r\n" for text in (key, value)):
            dotted = ".".join(str(k) for k in (*origin.path, "headers", key))
            raise ConfigError(f"{origin.where('headers', key)}{safe_name(dotted)}: a header "
                              "cannot hold a line break (CR or LF); write the value on one "
                              "line", origin.file)


def expand_oauth(oauth: OAuthSettings, ex: Callable[..., str], origin: Origin,
                 expander: Expander) -> OAuthSettings:
    """``${VAR}`` in every value; the secrets (also when written as they are) are recorded
    for masking; ``private_key_file`` is read into ``private_key_pem``."""
    update: dict[str, Any] = {"scopes": [ex(v, "oauth", "scopes", i)
                                         for i, v in enumerate(oauth.scopes)]}
    for key in OAUTH_TEXT:
        value = getattr(oauth, key)
        if value:
            update[key] = ex(value, "oauth", key, secret=key in OAUTH_SECRETS)
            if key in OAUTH_SECRETS and len(update[key]) >= MIN_SECRET_LEN:
                expander.secrets.add(update[key])
    if update.get("private_key_file"):
        path = Path(update["private_key_file"]).expanduser()
        try:
            update["private_key_pem"] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            dotted = ".".join(str(k) for k in (*origin.path, "oauth", "private_key_file"))
            raise ConfigError(f"{origin.where('oauth', 'private_key_file')}{dotted}: cannot "
                              f"read {path}: {exc}", origin.file) from None
        expander.secrets.add(update["private_key_pem"])
    return oauth.model_copy(update=update)


SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie")
SECRET_WORDS = ("key", "token", "secret", "password", "auth")


def secret_name(part: str, name: str) -> bool:
    """Whether a server's ``env`` variable or header of this name holds a secret (its
    value is masked even when written in the config as it is)."""
    lowered = name.lower()
    if part == "headers" and lowered in SECRET_HEADERS:
        return True
    return any(word in lowered for word in SECRET_WORDS)
