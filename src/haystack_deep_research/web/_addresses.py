"""
Which IP addresses a fetch may never reach, and how to read a host that is written as an address.

The URL policy refuses every address that is not on the public internet. Three things make that harder than
``ipaddress.ip_address(...).is_global``:

* IPv6 addresses can carry an IPv4 address inside them (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible
  ``::a.b.c.d``, 6to4 ``2002::/16`` and NAT64 ``64:ff9b::/96``); the embedded address is what a packet may
  end up reaching, so it is judged too.
* Some addresses look public but serve cloud instance metadata (for example ``168.63.129.16``).
* Resolvers accept IPv4 addresses in old notations (``2130706433``, ``0x7f.1``, ``0177.0.0.1``); they are read
  here the way ``inet_aton`` reads them, so the policy judges the address that would really be contacted.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

__all__ = ["IPAddress", "Verdict", "find_block", "parse_address", "parse_legacy_ipv4"]

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
    """
    Why an address may not be fetched: its ``category`` (``"a private address"``), and ``via``, the IPv6 address
    that embeds it (``None`` when it was resolved directly).
    """

    category: str
    address: IPAddress
    via: ipaddress.IPv6Address | None = None

    def describe(self, *, with_address: bool = True) -> str:
        """
        For an error message: ``"a private address (10.0.0.5, embedded in 64:ff9b::a00:5)"``; ``with_address=False``
        names only an embedding IPv6 address.
        """
        if self.via is not None:
            return f"{self.category} ({self.address}, embedded in {self.via})"
        return f"{self.category} ({self.address})" if with_address else self.category


def parse_address(text: str) -> IPAddress:
    """
    Parse an IP address as a resolver or a URL gives it (``"fe80::1%eth0"`` too); an IPv4-mapped IPv6 address
    becomes its IPv4 address. Raises ``ValueError`` for anything else.
    """
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """
    Read a host the way ``inet_aton`` does when it is written as an IPv4 address in any notation.

    A host is taken for an IPv4 address when its last label is a number (decimal, ``0x`` hexadecimal or
    ``0``-prefixed octal), as in the URL standard; ``2130706433``, ``0x7f.1`` and ``0177.0.0.1`` are all
    ``127.0.0.1``. ``None`` means a domain name; one that ends in a number but is no valid IPv4 address
    (``"1.2.3.4.5"``) raises ``ValueError``.
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
    """
    Why an address (IPv4-mapped ones already unwrapped) is off limits, judging an embedded IPv4 address as well;
    ``None`` for a public address.
    """
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


def _category(address: IPAddress) -> str | None:
    if address in _CLOUD_METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified or address in _THIS_NETWORK:
        return "an unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address in _SHARED_ADDRESS_SPACE:
        return "a shared (carrier-grade NAT) address"
    if address in _NAT64_LOCAL_USE:
        return "a local-use NAT64 address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "a non-public address"
    return None
