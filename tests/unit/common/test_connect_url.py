"""method: connect's server address: a host name and fields, or a Spark Connect URL,
checked without a network; a bad one names the profile field."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.connect_url import ConnectUrlError, connect_url, parse_url
from dbt.adapters.jammi.credentials import JammiCredentials


def creds(**fields) -> JammiCredentials:
    return JammiCredentials.from_dict({"method": "connect", "schema": "analytics", **fields})


def test_a_host_name_gets_spark_connects_default_port():
    c = creds(host="spark.internal")
    assert c.is_connect and not c.is_session
    assert c.port == 15002
    assert c.connect_url().render() == "sc://spark.internal:15002/"


def test_profile_fields_become_url_parameters():
    c = creds(host="spark.internal", port=443, token="t0k", use_ssl=True, user="ana")
    assert c.connect_url().render() == "sc://spark.internal:443/;token=t0k;use_ssl=true;user_id=ana"


def test_a_full_url_is_taken_in_spark_connects_own_terms():
    c = creds(host="sc://spark.internal:443/;use_ssl=true;token=abc")
    assert c.port == 443
    url = c.connect_url()
    assert url.render() == "sc://spark.internal:443/;use_ssl=true;token=abc"
    assert "abc" not in url.redacted() and "token=***" in url.redacted()


def test_a_url_without_a_port_means_15002():
    assert parse_url("sc://h").render() == "sc://h:15002/"
    assert creds(host="sc://h/;user_id=x").port == 15002


@pytest.mark.parametrize(
    "fields, field, words",
    [
        ({"host": "sc://h:notaport"}, "host", "no valid port"),
        ({"host": "sc://:15002"}, "host", "names no host"),
        ({"host": "sc://h:1/path"}, "host", "has a path"),
        ({"host": "sc://h:1/;token"}, "host", "not key=value"),
        ({"host": "sc://h:1/;use_ssl=maybe"}, "host", "use_ssl must be true or false"),
        ({"host": "sc://h:1/;token=a;token=b"}, "host", "repeats a parameter"),
        ({"host": "http://h:1"}, "host", "neither a host name nor an sc:// URL"),
        ({"host": "sc://h:1", "port": 2}, "port", "differs from the URL's port 1"),
        ({"host": "h", "port": 70000}, "port", "is not a TCP port"),
        ({"host": "sc://h:1/;token=a", "token": "b"}, "token", "differs from the URL's token"),
    ],
)
def test_bad_addresses_name_the_profile_field(fields, field, words):
    with pytest.raises(ConnectUrlError) as raised:
        creds(**fields)
    message = str(raised.value)
    assert f"profile field '{field}' (method: connect)" in message
    assert words in message
    assert "sc://host:port" in message  # what a valid value looks like


def test_the_same_value_in_the_url_and_the_profile_is_accepted():
    url = connect_url("sc://h:1/;token=a", 1, token="a", use_ssl=False)
    assert url.render() == "sc://h:1/;token=a"


def test_other_methods_keep_dbt_sparks_behaviour():
    thrift = JammiCredentials.from_dict({"method": "thrift", "host": "h", "schema": "s"})
    assert thrift.port == 443 and not thrift.is_connect
    session = JammiCredentials.from_dict({"method": "session", "schema": "s"})
    assert session.is_session and session.host == "localhost"


def test_an_unknown_method_is_refused():
    with pytest.raises(Exception, match="method"):
        JammiCredentials.from_dict({"method": "bogus", "host": "h", "schema": "s"})
