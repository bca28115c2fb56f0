"""The contract suite lives in the package; have pytest rewrite its asserts too."""

import pytest

pytest.register_assert_rewrite("skitter.testing.frontier_contract")
