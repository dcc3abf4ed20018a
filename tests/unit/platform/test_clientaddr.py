"""The client address behind trusted proxies: one rule for the API's rate limit and
telemetry's new-server cap."""

import ipaddress

from indexium_platform.clientaddr import NOT_AN_ADDRESS, TrustedProxies


def test_the_peer_is_the_client_when_no_proxy_is_trusted():
    proxies = TrustedProxies(())
    assert proxies.client("203.0.113.9", "198.51.100.1") == ipaddress.ip_address("203.0.113.9")


def test_behind_trusted_proxies_the_right_most_untrusted_hop_is_the_client():
    proxies = TrustedProxies(("10.0.0.0/8",))
    # the left-most entry was written by the client itself and is ignored
    got = proxies.client("10.1.2.3", "192.0.2.66, 198.51.100.7:443, 10.9.9.9")
    assert got == ipaddress.ip_address("198.51.100.7")
    assert proxies.client("10.1.2.3", "[2001:db8::5]:8443") == ipaddress.ip_address("2001:db8::5")


def test_a_trusted_proxy_naming_no_usable_client_gives_none():
    proxies = TrustedProxies(("10.0.0.0/8",))
    assert proxies.client("10.1.2.3", None) is None
    assert proxies.client("10.1.2.3", "10.4.4.4") is None
    assert proxies.client("10.1.2.3", "not-an-ip") is None


def test_an_untrusted_peer_cannot_forward_anything():
    proxies = TrustedProxies(("10.0.0.0/8",))
    assert proxies.client("198.51.100.1", "10.0.0.1") == ipaddress.ip_address("198.51.100.1")


def test_a_peer_that_is_not_an_ip_address_says_so():
    assert TrustedProxies(()).client(None, None) is NOT_AN_ADDRESS
    assert TrustedProxies(("10.0.0.0/8",)).client("/run/api.sock", "10.0.0.1") is NOT_AN_ADDRESS


def test_settings_name_the_variable_holding_a_bad_network():
    import pytest

    from indexium_platform.clientaddr import check_networks

    check_networks("INDEXIUM_X_TRUSTED_PROXIES", ("10.0.0.0/8", "2001:db8::/32", "192.0.2.1"))
    with pytest.raises(ValueError, match="INDEXIUM_X_TRUSTED_PROXIES: 'ten' is not an address or CIDR"):
        check_networks("INDEXIUM_X_TRUSTED_PROXIES", ("10.0.0.0/8", "ten"))
