"""`lower_bound`: the binary search the n-gram part looks its tables up with, unrolled so every exporter has it."""

import numpy as np
import pytest

from hierattn.ngrams.search import lower_bound


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 9, 1000, 4097])
def test_lower_bound_is_numpys_searchsorted(size, rng):
    table = np.sort(rng.choice(10 * size + 10, size=size, replace=False)).astype(np.int32)
    values = np.concatenate([table, table + 1, table - 1, [0, table.max() + 5]]).astype(np.int32)
    found = np.asarray(lower_bound(table, values))
    np.testing.assert_array_equal(found, np.searchsorted(table, values, side="left"))
