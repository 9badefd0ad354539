"""stages._unmanaged: the step kernel's arguments without reference counts (issue 28 item 1).

The views it returns must alias the caller's arrays exactly (writes land in them, shapes and
strides kept, scalars of a bundle passed through) and leave their reference counts as they were.
"""

import sys
from collections import namedtuple

import numpy as np
from numba import njit

from orca_env.stages import _unmanaged

Bundle = namedtuple("Bundle", ("a", "n", "m"))


@njit(cache=False)
def _write_through(x, bundle):
    x = _unmanaged(x)
    bundle = _unmanaged(bundle)
    v = x[1:3]  # a view of an unmanaged array
    v[0] = 7.0
    m = bundle.m[:, 1]  # a strided view of a 2-D field
    for i in range(m.shape[0]):
        m[i] = bundle.n + i
    bundle.a[0] = x.shape[0]
    return bundle.n


def test_views_alias_the_arrays_and_leave_their_reference_counts():
    x = np.zeros(5)
    b = Bundle(a=np.zeros(2), n=3, m=np.zeros((4, 2)))
    before = (sys.getrefcount(x), sys.getrefcount(b.a), sys.getrefcount(b.m))
    for _ in range(3):
        assert _write_through(x, b) == 3
    assert (sys.getrefcount(x), sys.getrefcount(b.a), sys.getrefcount(b.m)) == before
    assert x.tolist() == [0.0, 7.0, 0.0, 0.0, 0.0]
    assert b.a.tolist() == [5.0, 0.0]
    assert b.m[:, 1].tolist() == [3.0, 4.0, 5.0, 6.0] and not b.m[:, 0].any()
