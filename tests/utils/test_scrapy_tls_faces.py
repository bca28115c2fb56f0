"""``skitter.core.downloader.tls`` and ``skitter.utils.ssl``: Scrapy's helpers for code
that builds Twisted TLS endpoints (the test servers of Scrapy-era projects)."""

from __future__ import annotations

import pytest

from skitter.core.downloader import tls
from skitter.utils import ssl as ssl_utils


def test_the_version_names_map_to_twisteds_constants() -> None:
    internet_ssl = pytest.importorskip("twisted.internet.ssl")
    versions = tls._TWISTED_VERSION_MAP
    assert list(versions) == list(tls.TLS_VERSION_NAMES)
    assert versions["TLSv1.2"] is internet_ssl.TLSVersion.TLSv1_2


def test_certificate_options_keywords_bound_the_versions() -> None:
    internet_ssl = pytest.importorskip("twisted.internet.ssl")
    tls_version = internet_ssl.TLSVersion
    assert ssl_utils._get_cert_options_version_kwargs(None, None) == {}
    raised = ssl_utils._get_cert_options_version_kwargs(tls_version.TLSv1_3, None)
    assert raised == {"raiseMinimumTo": tls_version.TLSv1_3}
    lowered = ssl_utils._get_cert_options_version_kwargs(tls_version.TLSv1_0, None)
    assert lowered == {"insecurelyLowerMinimumTo": tls_version.TLSv1_0}
    options = internet_ssl.CertificateOptions(
        **ssl_utils._get_cert_options_version_kwargs(tls_version.TLSv1_2, tls_version.TLSv1_2)
    )
    assert options is not None  # Twisted takes the keywords as given


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = tls.NO_SUCH_NAME  # type: ignore[attr-defined]
