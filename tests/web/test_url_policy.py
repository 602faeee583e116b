"""Tests for UrlPolicy: schemes, address classes, odd notations, allow and deny lists, serialisation."""

from __future__ import annotations

import json
import socket

import pytest

from haystack_deep_research.errors import ConfigurationError, FetchError, URLRefusedError
from haystack_deep_research.web import UrlPolicy
from haystack_deep_research.web.url_policy import Resolver


def resolver_for(answers: dict[str, list[str]]) -> Resolver:
    """A resolver that knows only ``answers`` and records what it was asked."""

    def resolve(host: str, port: int) -> list[str]:
        resolve.calls.append((host, port))  # type: ignore[attr-defined]
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    resolve.calls = []  # type: ignore[attr-defined]
    return resolve


def no_lookups(host: str, port: int) -> list[str]:
    raise AssertionError(f"the policy must not resolve the literal address {host!r}")


# --- addresses a name may resolve to ---------------------------------------------------------------------------

BLOCKED = [
    ("127.0.0.1", "a loopback address (127.0.0.1)"),
    ("127.8.9.10", "a loopback address (127.8.9.10)"),
    ("::1", "a loopback address (::1)"),
    ("10.0.0.5", "a private address (10.0.0.5)"),
    ("172.16.3.4", "a private address (172.16.3.4)"),
    ("192.168.1.1", "a private address (192.168.1.1)"),
    ("fc00::1", "a private address (fc00::1)"),
    ("fd12:3456::1", "a private address (fd12:3456::1)"),
    ("169.254.1.1", "a link-local address (169.254.1.1)"),
    ("fe80::1", "a link-local address (fe80::1)"),
    ("169.254.169.254", "a cloud metadata address (169.254.169.254)"),
    ("169.254.170.2", "a cloud metadata address (169.254.170.2)"),
    ("fd00:ec2::254", "a cloud metadata address (fd00:ec2::254)"),
    ("100.100.100.200", "a cloud metadata address (100.100.100.200)"),
    ("168.63.129.16", "a cloud metadata address (168.63.129.16)"),
    ("224.0.0.1", "a multicast address (224.0.0.1)"),
    ("239.255.255.250", "a multicast address (239.255.255.250)"),
    ("ff02::1", "a multicast address (ff02::1)"),
    ("ff0e::1", "a multicast address (ff0e::1)"),
    ("240.0.0.1", "a reserved address (240.0.0.1)"),
    ("255.255.255.255", "a reserved address (255.255.255.255)"),
    ("0.0.0.0", "an unspecified address (0.0.0.0)"),
    ("0.1.2.3", "an unspecified address (0.1.2.3)"),
    ("::", "an unspecified address (::)"),
    ("100.64.0.1", "a shared (carrier-grade NAT) address (100.64.0.1)"),
    ("100.127.255.254", "a shared (carrier-grade NAT) address (100.127.255.254)"),
    ("fec0::1", "a site-local address (fec0::1)"),
    ("64:ff9b:1::a00:1", "a local-use NAT64 address (64:ff9b:1::a00:1)"),
    ("192.0.2.10", "a private address (192.0.2.10)"),
    ("2001:db8::1", "a private address (2001:db8::1)"),
    ("2001::1", "a private address (2001::1)"),
    # IPv4 inside IPv6: mapped addresses are read as the IPv4 address, the other forms name the embedding.
    ("::ffff:127.0.0.1", "a loopback address (127.0.0.1)"),
    ("::ffff:a00:5", "a private address (10.0.0.5)"),
    ("::ffff:169.254.169.254", "a cloud metadata address (169.254.169.254)"),
    ("::127.0.0.1", "a loopback address (127.0.0.1, embedded in ::7f00:1)"),
    ("::10.0.0.5", "a private address (10.0.0.5, embedded in ::a00:5)"),
    ("::8.8.8.8", "a reserved address (::808:808)"),
    ("2002:a00:5::1", "a private address (10.0.0.5, embedded in 2002:a00:5::1)"),
    ("2002:7f00:1::", "a loopback address (127.0.0.1, embedded in 2002:7f00:1::)"),
    ("64:ff9b::a9fe:a9fe", "a cloud metadata address (169.254.169.254, embedded in 64:ff9b::a9fe:a9fe)"),
    ("64:ff9b::7f00:1", "a loopback address (127.0.0.1, embedded in 64:ff9b::7f00:1)"),
    ("64:ff9b::6440:1", "a shared (carrier-grade NAT) address (100.64.0.1, embedded in 64:ff9b::6440:1)"),
]


@pytest.mark.parametrize(("address", "described"), BLOCKED)
def test_a_name_resolving_to_a_non_public_address_is_refused(address: str, described: str) -> None:
    policy = UrlPolicy()
    with pytest.raises(URLRefusedError) as caught:
        policy.check("http://site.test/page", resolver=resolver_for({"site.test": [address]}))
    assert str(caught.value) == f"URL refused: site.test resolves to {described}."
    assert caught.value.url == "http://site.test/page"


@pytest.mark.parametrize(
    ("address", "connect_to"),
    [
        ("93.184.216.34", "93.184.216.34"),
        ("2606:4700::1111", "2606:4700::1111"),
        ("::ffff:93.184.216.34", "93.184.216.34"),
        ("64:ff9b::5db8:d822", "64:ff9b::5db8:d822"),
        ("2002:5db8:d822::1", "2002:5db8:d822::1"),
    ],
)
def test_a_name_resolving_to_a_public_address_is_accepted(address: str, connect_to: str) -> None:
    resolved = UrlPolicy().check("https://site.test/a", resolver=resolver_for({"site.test": [address]}))
    assert resolved.address == connect_to


def test_resolved_url_carries_the_normalised_url_and_the_checked_address() -> None:
    resolver = resolver_for({"site.test": ["93.184.216.34", "2606:4700::1111"]})
    resolved = UrlPolicy().check("https://Site.Test:8443/a?b=1#part", resolver=resolver)
    assert resolved.url == "https://site.test:8443/a?b=1"
    assert (resolved.scheme, resolved.host, resolved.port, resolved.address) == (
        "https",
        "site.test",
        8443,
        "93.184.216.34",
    )
    assert resolver.calls == [("site.test", 8443)]  # type: ignore[attr-defined]


def test_default_ports_and_international_host_names() -> None:
    resolver = resolver_for({"xn--bcher-kva.example": ["93.184.216.34"]})
    resolved = UrlPolicy().check("http://Bücher.example./x", resolver=resolver)
    assert (resolved.host, resolved.port) == ("xn--bcher-kva.example", 80)
    assert UrlPolicy().check("https://1.1.1.1/").port == 443


def test_any_private_answer_refuses_the_host_even_after_a_public_one() -> None:
    resolver = resolver_for({"rebind.test": ["93.184.216.34", "10.0.0.5"]})
    with pytest.raises(URLRefusedError, match=r"rebind\.test resolves to a private address \(10\.0\.0\.5\)"):
        UrlPolicy().check("http://rebind.test/", resolver=resolver)


# --- literal addresses, including notations that resolvers accept ----------------------------------------------


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://127.0.0.1./", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://2130706433/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://017700000001/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://0x7f000001/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://0x7f.1/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://0X7F.0.0.1/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://0177.1/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://127.1/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://0/", "URL refused: 0.0.0.0 is an unspecified address."),
        ("http://0xa9fea9fe/", "URL refused: 169.254.169.254 is a cloud metadata address."),
        ("http://2852039166/latest/meta-data/", "URL refused: 169.254.169.254 is a cloud metadata address."),
        ("http://10.1/", "URL refused: 10.0.0.1 is a private address."),
        ("http://[::1]:8080/", "URL refused: ::1 is a loopback address."),
        ("http://[::ffff:127.0.0.1]/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://[::ffff:7f00:1]/", "URL refused: 127.0.0.1 is a loopback address."),
        ("http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "URL refused: 169.254.169.254 is a cloud metadata address."),
        ("http://[fe80::1%25eth0]/", "URL refused: fe80::1%eth0 is a link-local address."),
        (
            "http://[64:ff9b::a00:5]/",
            "URL refused: 64:ff9b::a00:5 is a private address (10.0.0.5, embedded in 64:ff9b::a00:5).",
        ),
        ("http://1.2.3.4.5/", "URL refused: 1.2.3.4.5 is neither a valid domain name nor a valid IP address."),
        ("http://site.99/", "URL refused: site.99 is neither a valid domain name nor a valid IP address."),
        ("http://a b/", "URL refused: a%20b is neither a valid domain name nor a valid IP address."),
        ("http://-a.test/", "URL refused: -a.test is neither a valid domain name nor a valid IP address."),
        ("http://a..test/", "URL refused: a..test is neither a valid domain name nor a valid IP address."),
    ],
)
def test_literal_addresses_in_any_notation_are_judged_by_the_real_address(url: str, message: str) -> None:
    with pytest.raises(URLRefusedError) as caught:
        UrlPolicy().check(url, resolver=no_lookups)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "url", ["http://0177.0.0.1/", "http://999.1.1.1/", "http://1.2.3.256/", "http://0189.0.0.1/", "http://[::1/"]
)
def test_addresses_the_url_parser_rejects_are_refused(url: str) -> None:
    with pytest.raises(URLRefusedError, match="is not a valid URL"):
        UrlPolicy().check(url, resolver=no_lookups)


def test_a_public_literal_address_is_accepted_without_a_lookup() -> None:
    resolved = UrlPolicy().check("http://1572395042/x", resolver=no_lookups)
    assert (resolved.host, resolved.address) == ("93.184.216.34", "93.184.216.34")


def test_localhost_is_refused_with_the_system_resolver() -> None:
    with pytest.raises(URLRefusedError, match="localhost resolves to a loopback address"):
        UrlPolicy().check("http://localhost/")


# --- schemes and URL shapes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://files.test/readme.txt",
        "data:text/html,<h1>hi</h1>",
        "javascript:alert(1)",
        "gopher://site.test/",
        "ws://site.test/socket",
        "//site.test/no-scheme",
        "site.test/no-scheme",
        "",
    ],
)
def test_only_http_and_https_are_read(url: str) -> None:
    with pytest.raises(URLRefusedError) as caught:
        UrlPolicy().check(url, resolver=no_lookups)
    assert str(caught.value) == "URL refused: only http and https URLs can be read."


@pytest.mark.parametrize("url", ["http://", "http:///path", "https:///"])
def test_a_url_without_a_host_is_refused(url: str) -> None:
    with pytest.raises(URLRefusedError, match=r"URL refused: the URL has no host name\."):
        UrlPolicy().check(url, resolver=no_lookups)


def test_credentials_in_the_url_are_refused() -> None:
    with pytest.raises(URLRefusedError, match="user name or password"):
        UrlPolicy().check("http://user:secret@site.test/", resolver=no_lookups)


def test_a_resolution_failure_is_a_fetch_error_not_a_refusal() -> None:
    with pytest.raises(FetchError, match=r"Could not resolve the host nowhere\.test") as caught:
        UrlPolicy().check("http://nowhere.test/", resolver=resolver_for({}))
    assert not isinstance(caught.value, URLRefusedError)
    with pytest.raises(FetchError, match="no addresses found"):
        UrlPolicy().check("http://empty.test/", resolver=resolver_for({"empty.test": []}))
    with pytest.raises(FetchError, match="not an IP address"):
        UrlPolicy().check("http://odd.test/", resolver=resolver_for({"odd.test": ["not-an-ip"]}))


# --- allow and deny lists --------------------------------------------------------------------------------------


def test_an_allowed_host_name_may_resolve_to_a_private_address() -> None:
    policy = UrlPolicy(allow_hosts=("Intranet.Example.",))
    resolver = resolver_for({"intranet.example": ["10.0.0.5"], "wiki.intranet.example": ["10.0.0.6"]})
    assert policy.check("http://intranet.example/", resolver=resolver).address == "10.0.0.5"
    with pytest.raises(URLRefusedError, match="private address"):
        policy.check("http://wiki.intranet.example/", resolver=resolver)


def test_an_allowed_network_admits_only_its_addresses() -> None:
    policy = UrlPolicy(allow_hosts=("10.0.0.0/8", "::1"))
    resolver = resolver_for({"a.test": ["10.9.8.7"], "b.test": ["192.168.0.1"], "c.test": ["10.0.0.1", "172.16.0.1"]})
    assert policy.check("http://a.test/", resolver=resolver).address == "10.9.8.7"
    assert policy.check("http://[::1]:9000/", resolver=no_lookups).address == "::1"
    assert policy.check("http://10.1.2.3/", resolver=no_lookups).address == "10.1.2.3"
    with pytest.raises(URLRefusedError, match=r"192\.168\.0\.1"):
        policy.check("http://b.test/", resolver=resolver)
    with pytest.raises(URLRefusedError, match=r"172\.16\.0\.1"):
        policy.check("http://c.test/", resolver=resolver)


def test_an_allowed_address_also_admits_its_mapped_and_odd_spellings() -> None:
    policy = UrlPolicy(allow_hosts=("127.0.0.1",))
    assert policy.check("http://2130706433:8000/", resolver=no_lookups).address == "127.0.0.1"
    resolver = resolver_for({"local.test": ["::ffff:127.0.0.1"]})
    assert policy.check("http://local.test/", resolver=resolver).address == "127.0.0.1"
    with pytest.raises(URLRefusedError, match=r"loopback address \(127\.0\.0\.2\)"):
        policy.check("http://other.test/", resolver=resolver_for({"other.test": ["127.0.0.2"]}))


@pytest.mark.parametrize("url", ["http://evil.example/", "https://a.b.Evil.Example./x", "http://cdn.evil.example:81/"])
def test_a_denied_domain_and_its_subdomains_are_refused(url: str) -> None:
    policy = UrlPolicy(deny_domains=("evil.example",), allow_hosts=("evil.example",))
    with pytest.raises(URLRefusedError) as caught:
        policy.check(url, resolver=no_lookups)
    assert str(caught.value) == "URL refused: the domain evil.example is on the deny list."


def test_a_domain_that_only_ends_like_a_denied_one_is_accepted() -> None:
    policy = UrlPolicy(deny_domains=("evil.example",))
    resolver = resolver_for({"notevil.example": ["93.184.216.34"]})
    assert policy.check("http://notevil.example/", resolver=resolver).host == "notevil.example"


# --- construction and serialisation ----------------------------------------------------------------------------


def test_entries_are_normalised_and_survive_a_json_round_trip() -> None:
    policy = UrlPolicy(
        allow_hosts=("127.0.0.1", "[::1]", "10.0.0.0/8", "fd00::/8", "Intranet.Example."),
        deny_domains=("Evil.Example", "bücher.example"),
    )
    data = policy.to_dict()
    assert data == {
        "allow_hosts": ["127.0.0.1", "::1", "10.0.0.0/8", "fd00::/8", "intranet.example"],
        "deny_domains": ["evil.example", "xn--bcher-kva.example"],
    }
    again = UrlPolicy.from_dict(json.loads(json.dumps(data)))
    assert again == policy
    assert UrlPolicy.from_dict({}) == UrlPolicy()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allow_hosts": ("10.0.0.0/33",)}, "allow_hosts entry '10.0.0.0/33' is not a valid network"),
        ({"allow_hosts": ("10.0.0.1/8",)}, "Did you mean 10.0.0.0/8?"),
        ({"allow_hosts": ("not a host",)}, "allow_hosts entry 'not a host' is not a valid host name"),
        ({"allow_hosts": ("host.test:8080",)}, "allow_hosts entry 'host.test:8080' is not a valid host name"),
        ({"allow_hosts": ("2130706433",)}, "allow_hosts entry '2130706433' is not a valid host name"),
        ({"allow_hosts": ("",)}, "allow_hosts entries must be non-empty strings"),
        ({"allow_hosts": "127.0.0.1"}, "allow_hosts must be a tuple of strings"),
        ({"deny_domains": ("10.0.0.5",)}, "deny_domains entry '10.0.0.5' is an IP address"),
        ({"deny_domains": (42,)}, "deny_domains entries must be non-empty strings"),
    ],
)
def test_bad_entries_are_rejected_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace(".", r"\.").replace("?", r"\?")):
        UrlPolicy(**kwargs)  # type: ignore[arg-type]


def test_from_dict_names_unknown_keys() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown keys \['allow'\]"):
        UrlPolicy.from_dict({"allow": ["127.0.0.1"]})
