"""
The URL policy: which URLs the research agent may read, and which address to connect to for each.

:class:`UrlPolicy` refuses everything a model should never make the library fetch: schemes other than http and
https, hosts on a deny list, and hosts that resolve to loopback, private, link-local, cloud metadata or other
non-public addresses. It resolves the host once and hands back the checked address in a :class:`ResolvedURL`, so
the fetcher connects to exactly the address that was judged (no second DNS lookup that a rebinding attacker
could answer differently).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from haystack_deep_research.errors import ConfigurationError, FetchError, URLRefusedError
from haystack_deep_research.web._addresses import IPAddress, find_block, parse_address, parse_legacy_ipv4

__all__ = ["ResolvedURL", "Resolver", "UrlPolicy", "system_resolver"]

Resolver = Callable[[str, int], list[str]]
"""Resolves ``(host, port)`` to IP address strings; raises ``OSError`` when the name cannot be resolved."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_NAME = re.compile(
    r"(?=.{1,253}\Z)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*"
)


def system_resolver(host: str, port: int) -> list[str]:
    """
    Resolve a host name with the operating system's resolver (``socket.getaddrinfo``).

    :param host: The host name.
    :param port: The port, passed on to ``getaddrinfo``.
    :returns: The addresses, in the resolver's order, without duplicates.
    :raises OSError: The name cannot be resolved.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, kw_only=True)
class ResolvedURL:
    """
    A URL the policy accepted, with the address it was checked against.

    :param url: The URL, normalised (international host names in ASCII form, no fragment).
    :param scheme: ``"http"`` or ``"https"``.
    :param host: The host name in lower-case ASCII without a trailing dot, or the canonical form of an IP address.
    :param port: The port to connect to (80 or 443 unless the URL names another).
    :param address: The checked IP address to connect to.
    """

    url: str
    scheme: str
    host: str
    port: int
    address: str


@dataclass(frozen=True, kw_only=True)
class UrlPolicy:
    """
    Decides which URLs may be fetched. By default every public http or https URL is allowed.

    :param allow_hosts: Exceptions to the refusal of non-public addresses: host names (matched exactly), IP
        addresses or CIDR networks, for example ``("127.0.0.1", "::1", "10.0.0.0/8", "intranet.example")``.
        A host listed by name may resolve to any address; an address may be reached when it lies in a listed
        network.
    :param deny_domains: Domains that are always refused, together with all their subdomains, for example
        ``("evil.example",)``. The deny list wins over ``allow_hosts``.
    :raises ConfigurationError: An entry is not a valid host name, IP address or network.
    """

    allow_hosts: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    _allowed_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _allowed_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        allow = _entries("allow_hosts", self.allow_hosts)
        deny = _entries("deny_domains", self.deny_domains)
        names: list[str] = []
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        normalised_allow: list[str] = []
        for entry in allow:
            parsed = _parse_allow_entry(entry)
            if isinstance(parsed, str):
                names.append(parsed)
                normalised_allow.append(parsed)
            else:
                networks.append(parsed)
                normalised_allow.append(str(parsed.network_address) if parsed.num_addresses == 1 else str(parsed))
        normalised_deny = [_parse_deny_entry(entry) for entry in deny]
        object.__setattr__(self, "allow_hosts", tuple(normalised_allow))
        object.__setattr__(self, "deny_domains", tuple(normalised_deny))
        object.__setattr__(self, "_allowed_names", frozenset(names))
        object.__setattr__(self, "_allowed_networks", tuple(networks))

    def check(self, url: str, *, resolver: Resolver | None = None) -> ResolvedURL:
        """
        Check a URL and resolve its host to the address to connect to.

        :param url: The URL to check.
        :param resolver: Resolves a host name to addresses; defaults to :func:`system_resolver`. Literal IP
            addresses are never passed to it.
        :returns: The accepted URL with its checked address.
        :raises URLRefusedError: The scheme is not http or https, the URL is malformed or has no host, carries
            a user name or password, the domain is on the deny list, or any address the host resolves to is not
            public and not allowed.
        :raises FetchError: The host name cannot be resolved.
        """
        parsed = _parse_url(url)
        host = _normalise_host(parsed, url)
        port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
        literal = _literal_address(host, url)
        if literal is not None:
            host = str(literal)
            addresses = [literal]
        else:
            self._check_deny_list(host, url)
            addresses = _resolve(host, port, resolver or system_resolver, url)
        for address in addresses:
            if host in self._allowed_names or any(address in network for network in self._allowed_networks):
                continue
            verdict = find_block(address)
            if verdict is None:
                continue
            if literal is not None:
                raise URLRefusedError(f"URL refused: {host} is {verdict.describe(with_address=False)}.", url=url)
            raise URLRefusedError(f"URL refused: {host} resolves to {verdict.describe()}.", url=url)
        return ResolvedURL(
            url=str(parsed.copy_with(fragment=None)),
            scheme=parsed.scheme,
            host=host,
            port=port,
            address=str(addresses[0]),
        )

    def to_dict(self) -> dict[str, Any]:
        """
        Serialise the policy to a plain, JSON-compatible dictionary.

        :returns: ``{"allow_hosts": [...], "deny_domains": [...]}``.
        """
        return {"allow_hosts": list(self.allow_hosts), "deny_domains": list(self.deny_domains)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UrlPolicy:
        """
        Build a policy from the output of :meth:`to_dict`.

        :param data: A mapping with the optional keys ``allow_hosts`` and ``deny_domains`` (lists of strings).
        :returns: The policy.
        :raises ConfigurationError: ``data`` is not a mapping, a key is unknown or a value is not a list of valid
            entries.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                "UrlPolicy.from_dict needs a mapping such as {'allow_hosts': ['127.0.0.1']}, as to_dict returns; "
                f"got {type(data).__name__}."
            )
        unknown = sorted(set(data) - {"allow_hosts", "deny_domains"})
        if unknown:
            raise ConfigurationError(
                f"UrlPolicy.from_dict got unknown keys {unknown}; the allowed keys are 'allow_hosts' and "
                "'deny_domains'."
            )
        return cls(
            allow_hosts=tuple(_entries("allow_hosts", data.get("allow_hosts", ()))),
            deny_domains=tuple(_entries("deny_domains", data.get("deny_domains", ()))),
        )

    def _check_deny_list(self, host: str, url: str) -> None:
        for domain in self.deny_domains:
            if host == domain or host.endswith("." + domain):
                raise URLRefusedError(f"URL refused: the domain {domain} is on the deny list.", url=url)


def _entries(name: str, value: object) -> list[str]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise ConfigurationError(
            f"UrlPolicy.{name} must be a tuple of strings, for example ('127.0.0.1',); got {value!r}."
        )
    for entry in value:
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigurationError(f"UrlPolicy.{name} entries must be non-empty strings; got {entry!r}.")
    return [entry.strip() for entry in value]


def _parse_allow_entry(entry: str) -> str | ipaddress.IPv4Network | ipaddress.IPv6Network:
    if "/" in entry:
        try:
            return ipaddress.ip_network(entry)
        except ValueError as exc:
            hint = ""
            try:
                hint = f" Did you mean {ipaddress.ip_network(entry, strict=False)}?"
            except ValueError:
                hint = " Write a network as ADDRESS/PREFIX, for example 10.0.0.0/8."
            raise ConfigurationError(f"UrlPolicy.allow_hosts entry {entry!r} is not a valid network.{hint}") from exc
    try:
        return ipaddress.ip_network(parse_address(entry.strip("[]")))
    except ValueError:
        return _host_name("allow_hosts", entry)


def _parse_deny_entry(entry: str) -> str:
    try:
        ipaddress.ip_address(entry.strip("[]"))
    except ValueError:
        return _host_name("deny_domains", entry)
    raise ConfigurationError(
        f"UrlPolicy.deny_domains entry {entry!r} is an IP address; list domain names such as 'evil.example'."
    )


def _host_name(name: str, entry: str) -> str:
    try:
        host = httpx.URL(f"http://{entry}/").raw_host.decode("ascii").lower().rstrip(".")
        numeric = parse_legacy_ipv4(host) is not None if host else False
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise ConfigurationError(
            f"UrlPolicy.{name} entry {entry!r} is not a valid host name, IP address or network."
        ) from exc
    if numeric or not _HOST_NAME.fullmatch(host) or any(char in entry for char in "/:@?#"):
        raise ConfigurationError(
            f"UrlPolicy.{name} entry {entry!r} is not a valid host name; write a bare name such as "
            "'intranet.example' or a dotted IP address such as '10.0.0.5'."
        )
    return host


def _parse_url(url: str) -> httpx.URL:
    if not isinstance(url, str):
        raise URLRefusedError(f"URL refused: expected a URL string, got {type(url).__name__}.", url=str(url))
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise URLRefusedError(f"URL refused: {url!r} is not a valid URL ({exc}).", url=url) from exc
    if parsed.scheme not in _DEFAULT_PORTS:
        raise URLRefusedError("URL refused: only http and https URLs can be read.", url=url)
    if parsed.userinfo:
        raise URLRefusedError("URL refused: URLs with a user name or password cannot be read.", url=url)
    return parsed


def _normalise_host(parsed: httpx.URL, url: str) -> str:
    host = parsed.raw_host.decode("ascii").lower().replace("%25", "%")
    if host.endswith(".") and ":" not in host:
        host = host[:-1]
    if not host:
        raise URLRefusedError("URL refused: the URL has no host name.", url=url)
    return host


def _literal_address(host: str, url: str) -> IPAddress | None:
    try:
        if ":" in host:
            return parse_address(host)
        literal = parse_legacy_ipv4(host)
        if literal is None and not _HOST_NAME.fullmatch(host):
            raise ValueError(host)
    except ValueError as exc:
        raise URLRefusedError(
            f"URL refused: {host} is neither a valid domain name nor a valid IP address.", url=url
        ) from exc
    return literal


def _resolve(host: str, port: int, resolver: Resolver, url: str) -> list[IPAddress]:
    try:
        answers = resolver(host, port)
    except (OSError, UnicodeError) as exc:
        raise FetchError(f"Could not resolve the host {host}: {exc}.", url=url) from exc
    if not answers:
        raise FetchError(f"Could not resolve the host {host}: no addresses found.", url=url)
    addresses: list[IPAddress] = []
    for answer in answers:
        try:
            addresses.append(parse_address(answer))
        except ValueError as exc:
            raise FetchError(f"Resolving {host} gave {answer!r}, which is not an IP address.", url=url) from exc
    return addresses
