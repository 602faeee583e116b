"""
The URL policy: which URLs the research agent may read, and the checked address to connect to for each
(:class:`UrlPolicy`, :class:`ResolvedURL`); and :class:`SearchScope`, the domains and dates a web search keeps to.
docs/safety.md ("Which URLs may be read") gives the rules, the address spellings and embeddings judged among them.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError, FetchError, URLRefusedError

__all__ = ["ResolvedURL", "Resolver", "SearchScope", "UrlPolicy", "system_resolver"]

Resolver = Callable[[str, int], list[str]]
"""Resolves ``(host, port)`` to IP address strings; raises ``OSError`` when the name cannot be resolved."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_NAME = re.compile(
    r"(?=.{1,253}\Z)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*"
)


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CLOUD_METADATA = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, Azure, Google Cloud, OpenStack, Oracle Cloud, DigitalOcean
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS instance metadata over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure platform (wire server)
        "192.0.0.192",  # Oracle Cloud (legacy)
    )
)
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


@dataclass(frozen=True)
class Verdict:
    """Why an address may not be fetched: its ``category``, and ``via``, the IPv6 address that embeds it, if any."""

    category: str
    address: IPAddress
    via: ipaddress.IPv6Address | None = None

    def describe(self, *, with_address: bool = True) -> str:
        """For a message: ``"a private address (10.0.0.5, embedded in 64:ff9b::a00:5)"``."""
        if self.via is not None:
            return f"{self.category} ({self.address}, embedded in {self.via})"
        return f"{self.category} ({self.address})" if with_address else self.category


def parse_address(text: str) -> IPAddress:
    """An IP address as a resolver or a URL gives it, IPv4-mapped ones unwrapped; ``ValueError`` for anything else."""
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """
    A host read as ``inet_aton`` reads it when its last label is a number, as in the URL standard (``0x7f.1`` is
    ``127.0.0.1``); ``None`` for a domain name, ``ValueError`` for a numeric host that is no IPv4 address.
    """
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    if not _NUMBER.fullmatch(labels[-1]):
        return None
    if len(labels) > 4 or not all(_NUMBER.fullmatch(label) for label in labels):
        raise ValueError(f"{host!r} is not a valid IPv4 address")
    *head, last = (_parse_number(label) for label in labels)
    if any(part > 255 for part in head) or last >= 256 ** (4 - len(head)):
        raise ValueError(f"{host!r} is not a valid IPv4 address")
    value = last
    for index, part in enumerate(head):
        value += part << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def find_block(address: IPAddress) -> Verdict | None:
    """Why an address is off limits, judging an embedded IPv4 address as well; ``None`` for a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            category = _category(inner)
            if category is not None:
                return Verdict(category, inner, via=address)
            if address in _NAT64_WELL_KNOWN or address.sixtofour is not None:
                # Translated or tunnelled traffic reaches the embedded address, which is public.
                return None
    category = _category(address)
    return None if category is None else Verdict(category, address)


def _parse_number(label: str) -> int:
    if label[:2].lower() == "0x":
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)
    return int(label)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64_WELL_KNOWN or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


# In this order: the first that applies names the address.
_CATEGORIES: tuple[tuple[str, Callable[[IPAddress], bool]], ...] = (
    ("a cloud metadata address", lambda address: address in _CLOUD_METADATA),
    ("a loopback address", lambda address: address.is_loopback),
    ("an unspecified address", lambda address: address.is_unspecified or address in _THIS_NETWORK),
    ("a link-local address", lambda address: address.is_link_local),
    ("a multicast address", lambda address: address.is_multicast),
    ("a shared (carrier-grade NAT) address", lambda address: address in _SHARED_ADDRESS_SPACE),
    ("a local-use NAT64 address", lambda address: address in _NAT64_LOCAL_USE),
    ("a site-local address", lambda address: isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
    ("a reserved address", lambda address: address.is_reserved),
    ("a private address", lambda address: address.is_private),
    ("a non-public address", lambda address: not address.is_global),
)


def _category(address: IPAddress) -> str | None:
    return next((category for category, applies in _CATEGORIES if applies(address)), None)


def system_resolver(host: str, port: int) -> list[str]:
    """
    The addresses the operating system's resolver (``socket.getaddrinfo``) gives a host, in its order, without
    duplicates; ``OSError`` when the name cannot be resolved.
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
    :param only_domains: When given, only these domains and their subdomains may be read, for example
        ``("who.int", "europa.eu")``; an IP address is no domain, so it is refused.
    :raises ConfigurationError: An entry is not a valid host name, IP address or network.
    """

    allow_hosts: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    only_domains: tuple[str, ...] = ()
    _allowed_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _allowed_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        allowed = [_parse_allow_entry(entry) for entry in _entries("allow_hosts", self.allow_hosts)]
        networks = tuple(entry for entry in allowed if not isinstance(entry, str))
        allow_hosts = tuple(
            entry if isinstance(entry, str) else str(entry.network_address if entry.num_addresses == 1 else entry)
            for entry in allowed
        )
        object.__setattr__(self, "allow_hosts", allow_hosts)
        for name in ("deny_domains", "only_domains"):
            object.__setattr__(self, name, domain_names(f"UrlPolicy.{name}", _entries(name, getattr(self, name))))
        object.__setattr__(self, "_allowed_names", frozenset(entry for entry in allowed if isinstance(entry, str)))
        object.__setattr__(self, "_allowed_networks", networks)

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
        host = host if literal is None else str(literal)
        for domain in self.deny_domains:  # no domain entry is an IP address, so none matches a literal one
            if in_domains(host, (domain,)):
                raise URLRefusedError(f"URL refused: the domain {domain} is on the deny list.", url=url)
        if self.only_domains and (literal is not None or not in_domains(host, self.only_domains)):
            raise URLRefusedError(
                f"URL refused: {host} is outside the domains this run may read ({', '.join(self.only_domains)}).",
                url=url,
            )
        addresses = [literal] if literal is not None else _resolve(host, port, resolver or system_resolver, url)
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
        """:returns: ``{"allow_hosts": [...], "deny_domains": [...]}``, and ``"only_domains"`` when set."""
        data = {"allow_hosts": list(self.allow_hosts), "deny_domains": list(self.deny_domains)}
        return {**data, "only_domains": list(self.only_domains)} if self.only_domains else data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UrlPolicy:
        """
        :param data: What :meth:`to_dict` returned; a missing key keeps its default.
        :returns: The policy.
        :raises ConfigurationError: ``data`` is not a mapping, a key is unknown or an entry is not valid.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                "UrlPolicy.from_dict needs a mapping such as {'allow_hosts': ['127.0.0.1']}, as to_dict returns; "
                f"got {type(data).__name__}."
            )
        unknown = sorted(set(data) - {"allow_hosts", "deny_domains", "only_domains"})
        if unknown:
            raise ConfigurationError(
                f"UrlPolicy.from_dict got unknown keys {unknown}; the allowed keys are 'allow_hosts', "
                "'deny_domains' and 'only_domains'."
            )
        return cls(**data)


def in_domains(host: str, domains: tuple[str, ...]) -> bool:
    """Whether ``host`` is one of ``domains`` or a subdomain of one (all lower case)."""
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def domain_names(name: str, entries: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Domain names (``name`` says whose, in messages) lower case, without a trailing dot; no IP address."""
    return tuple(_host_name(name, entry) for entry in entries)


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
            try:
                hint = f" Did you mean {ipaddress.ip_network(entry, strict=False)}?"
            except ValueError:
                hint = " Write a network as ADDRESS/PREFIX, for example 10.0.0.0/8."
            raise ConfigurationError(f"UrlPolicy.allow_hosts entry {entry!r} is not a valid network.{hint}") from exc
    try:
        return ipaddress.ip_network(parse_address(entry.strip("[]")))
    except ValueError:
        return _host_name("UrlPolicy.allow_hosts", entry)


def _host_name(name: str, entry: str) -> str:
    try:
        ipaddress.ip_address(entry.strip("[]"))
    except ValueError:
        pass  # not an IP address: read below as a host name
    else:
        raise ConfigurationError(f"{name} entry {entry!r} is an IP address; list domain names such as 'evil.example'.")
    try:
        host = httpx.URL(f"http://{entry}/").raw_host.decode("ascii").lower().rstrip(".")
        numeric = parse_legacy_ipv4(host) is not None if host else False
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise ConfigurationError(f"{name} entry {entry!r} is not a valid host name, IP address or network.") from exc
    if numeric or not _HOST_NAME.fullmatch(host) or any(char in entry for char in "/:@?#"):
        raise ConfigurationError(
            f"{name} entry {entry!r} is not a valid host name; write a bare name such as "
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


TIME_RANGES = {"day": 1, "week": 7, "month": 31, "year": 366}
"""The recency windows known by name (Tavily's ``time_range`` words), in days."""
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def _published(text: str) -> date | None:
    """The date an engine gave a result (ISO 8601 or RFC 2822), or ``None`` when it cannot be read."""
    if match := _ISO_DATE.match(text.strip()):
        try:
            return date(*map(int, match.groups()))
        except ValueError:
            return None
    try:
        return parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        return None


@dataclass(frozen=True, kw_only=True)
class SearchScope(FieldsSerialized):
    """
    Where a web search may look, and how recent its results must be. Empty (the default), it changes nothing.

    :param include_domains: Only results on these domains (and their subdomains) are kept, for example
        ``("who.int", "europa.eu")``.
    :param exclude_domains: Results on these domains (and their subdomains) are dropped.
    :param since: The oldest publication date kept: a ``datetime.date``, an ISO date ``"2026-01-31"``, or a window
        ending today, ``"day"``, ``"week"``, ``"month"`` or ``"year"``. A result whose engine gives no date is kept
        (nothing says it is old); one dated before the window is dropped.
    :raises ConfigurationError: If a domain is not a host name, or ``since`` is none of these.
    """

    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    since: date | str | None = None

    def __post_init__(self) -> None:
        for name in ("include_domains", "exclude_domains"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, list | tuple):
                raise ConfigurationError(
                    f"SearchScope({name}=...) must be a tuple of domain names, for example ('who.int',); got {value!r}."
                )
            object.__setattr__(self, name, domain_names(f"SearchScope.{name}", list(value)))
        since = self.since.strip().lower() if isinstance(self.since, str) else self.since
        if isinstance(since, str) and since not in TIME_RANGES:
            try:
                since = date.fromisoformat(since)
            except ValueError:
                raise ConfigurationError(
                    f"since must be a date (2026-01-31) or one of {', '.join(TIME_RANGES)}; got {self.since!r}."
                ) from None
        elif since is not None and not isinstance(since, str | date):
            raise ConfigurationError(f"since must be a date, an ISO date string or a window name; got {since!r}.")
        object.__setattr__(self, "since", since)

    def __bool__(self) -> bool:
        return bool(self.include_domains or self.exclude_domains or self.since is not None)

    @property
    def time_range(self) -> str | None:
        """:returns: The window's name when ``since`` is one (``"week"``), else ``None``."""
        return self.since if isinstance(self.since, str) else None

    def start(self, today: date | None = None) -> date | None:
        """The oldest publication date kept (the window ends ``today``, in UTC by default), or ``None``."""
        if isinstance(self.since, str):
            return (today or datetime.now(UTC).date()) - timedelta(days=TIME_RANGES[self.since])
        return self.since

    def keeps(self, url: str, published: str = "", today: date | None = None) -> bool:
        """Whether a result's URL is on the chosen domains and its ``published`` date (ISO, RFC 2822) in the window."""
        try:  # the host as the entries are kept: ASCII, an internationalised name as punycode
            host = httpx.URL(url).raw_host.decode("ascii").lower().rstrip(".")
        except (httpx.InvalidURL, UnicodeError, ValueError):
            host = (urlsplit(url).hostname or "").lower().rstrip(".")
        if self.include_domains and not in_domains(host, self.include_domains):
            return False
        if in_domains(host, self.exclude_domains):
            return False
        start = self.start(today)
        day = _published(published) if start is not None and published else None
        return day is None or start is None or day >= start

    def arguments(self, accepts: Any) -> dict[str, Any]:
        """
        The scope as the engine's own arguments, those it ``accepts(name)``: ``include_domains``, ``exclude_domains``
        (lists), ``time_range`` (a window's name) and ``start_date`` / ``since`` (ISO date).
        """
        values: dict[str, Any] = {
            "include_domains": list(self.include_domains) or None,
            "exclude_domains": list(self.exclude_domains) or None,
            "time_range": self.time_range,
        }
        start = self.start()
        if start is not None and self.time_range is None:
            values["start_date"] = values["since"] = start.isoformat()
        return {name: value for name, value in values.items() if value is not None and accepts(name)}

    def key(self) -> str:
        """:returns: What tells this scope apart in cache keys; ``""`` when empty."""
        if not self:
            return ""
        since = self.since.isoformat() if isinstance(self.since, date) else self.since
        return f" in={','.join(self.include_domains)} out={','.join(self.exclude_domains)} since={since}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> SearchScope:
        """The scope :meth:`to_dict` returned (``None``: an empty one)."""
        data = data or {}
        return cls(
            include_domains=tuple(data.get("include_domains") or ()),
            exclude_domains=tuple(data.get("exclude_domains") or ()),
            since=data.get("since"),
        )
