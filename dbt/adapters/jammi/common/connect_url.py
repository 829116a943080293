"""The Spark Connect URL of a ``method: connect`` profile, checked without a network.

Spark Connect names its server with one URL, ``sc://host:port/;param=value;...``
(``token``, ``use_ssl``, ``user_id`` and others; any other parameter is sent as a gRPC
header). A profile gives either that URL in ``host`` or a plain host name, with ``port``
(default 15002, Spark Connect's own), ``token``, ``use_ssl`` and ``user`` as separate
fields; both become the same URL. A field given twice (in the URL and in the profile)
with two values is refused rather than one of them silently ignored.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Optional

from dbt_common.exceptions import DbtRuntimeError

SCHEME = "sc://"
DEFAULT_PORT = 15002
_BOOLEAN = ("true", "false")
# profile field -> the URL parameter that carries it
PROFILE_PARAMS = {"token": "token", "use_ssl": "use_ssl", "user": "user_id"}


class ConnectUrlError(DbtRuntimeError):
    """A ``method: connect`` profile whose server address cannot be used; the message
    names the profile field and what a valid value looks like."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(
            f"profile field '{field}' (method: connect): {problem}. Give a host name "
            f"(with 'port', default {DEFAULT_PORT}) or a Spark Connect URL "
            f"'sc://host:port/;token=...;use_ssl=true'"
        )


@dataclass(frozen=True)
class ConnectUrl:
    host: str
    port: int
    params: tuple[tuple[str, str], ...] = ()

    def render(self) -> str:
        tail = "".join(f";{key}={value}" for key, value in self.params)
        return f"{SCHEME}{self.host}:{self.port}/{tail}"

    def redacted(self) -> str:
        """The URL for messages and logs: the token's value replaced."""
        params = tuple((k, "***" if k == "token" else v) for k, v in self.params)
        return ConnectUrl(self.host, self.port, params).render()


def is_url(host: Optional[str]) -> bool:
    return bool(host) and str(host).strip().lower().startswith(SCHEME)


def url_port(host: str) -> int:
    """The port a ``sc://`` URL names (Spark Connect's default when it names none)."""
    return parse_url(host).port


def parse_url(url: str) -> ConnectUrl:
    """``sc://host[:port][/][;key=value...]`` as Spark Connect's client reads it."""
    url = url.strip()
    if not url.lower().startswith(SCHEME):
        raise ConnectUrlError("host", f"{url!r} is not a Spark Connect URL (sc://...)")
    parsed = urllib.parse.urlparse("http://" + url[len(SCHEME) :])
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
        raise ConnectUrlError(
            "host", f"{url!r} has a path or query; parameters follow '/;' as key=value"
        )
    try:
        host, port = parsed.hostname, parsed.port
    except ValueError as exc:
        raise ConnectUrlError("host", f"{url!r} has no valid port ({exc})") from None
    if not host or parsed.username or parsed.password:
        raise ConnectUrlError("host", f"{url!r} names no host (sc://host:port)")
    params: list[tuple[str, str]] = []
    for item in filter(None, parsed.params.split(";")):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConnectUrlError("host", f"{url!r}: parameter {item!r} is not key=value")
        params.append((key.strip(), urllib.parse.unquote(value.strip())))
    keys = [key for key, _ in params]
    if len(set(keys)) != len(keys):
        raise ConnectUrlError("host", f"{url!r} repeats a parameter")
    ssl = dict(params).get("use_ssl")
    if ssl is not None and ssl.lower() not in _BOOLEAN:
        raise ConnectUrlError("host", f"{url!r}: use_ssl must be true or false, not {ssl!r}")
    return ConnectUrl(host, port or DEFAULT_PORT, tuple(params))


def connect_url(
    host: Optional[str],
    port: Optional[int],
    token: Optional[str] = None,
    use_ssl: bool = False,
    user: Optional[str] = None,
) -> ConnectUrl:
    """The server URL of a ``method: connect`` profile (see the module docstring)."""
    if not host or not str(host).strip():
        raise ConnectUrlError("host", "it is empty")
    if port is not None and not 0 < int(port) < 65536:
        raise ConnectUrlError("port", f"{port} is not a TCP port")
    if is_url(host):
        url = parse_url(str(host))
        if port is not None and int(port) != url.port:
            raise ConnectUrlError(
                "port", f"{port} differs from the URL's port {url.port}; give it once"
            )
    else:
        if any(c in str(host) for c in "/;:@ "):
            raise ConnectUrlError("host", f"{host!r} is neither a host name nor an sc:// URL")
        url = ConnectUrl(str(host).strip(), int(port or DEFAULT_PORT))
    return _with_profile_params(url, {"token": token, "use_ssl": use_ssl, "user": user})


def _with_profile_params(url: ConnectUrl, fields: dict[str, object]) -> ConnectUrl:
    params = dict(url.params)
    for field, value in fields.items():
        if value is None or value is False:
            continue
        key = PROFILE_PARAMS[field]
        text = "true" if value is True else str(value)
        if key in params and params[key].lower() != text.lower():
            raise ConnectUrlError(
                field, f"it differs from the URL's {key}; give it in one place only"
            )
        params[key] = text
    return ConnectUrl(url.host, url.port, tuple(params.items()))
