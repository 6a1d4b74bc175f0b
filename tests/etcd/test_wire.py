"""The hand-encoded write transactions are byte for byte what etcd's generated messages
serialize to, for any key, value, revision and lease."""

from __future__ import annotations

from etcd3 import etcdrpc
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.storage._etcd_wire import delete_txn, put_txn

_KEYS = st.binary(min_size=1, max_size=300)
# Large values (lengths needing a 2- or 3-byte varint) built cheaply: their bytes do not matter.
_VALUES = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda n, b: bytes([b]) * n, st.integers(16_000, 200_000), st.integers(0, 255)),
)
_REVISIONS = st.one_of(st.integers(0, 300), st.integers(0, 2**62))


def _compare(key: bytes, revision: int) -> list[object]:
    return [
        etcdrpc.Compare(
            result=etcdrpc.Compare.EQUAL,
            target=etcdrpc.Compare.MOD,
            key=key,
            mod_revision=revision,
        )
    ]


def _get(key: bytes) -> list[object]:
    return [etcdrpc.RequestOp(request_range=etcdrpc.RangeRequest(key=key))]


@settings(max_examples=200)
@given(key=_KEYS, value=_VALUES, revision=_REVISIONS, lease=_REVISIONS, read=st.booleans())
def test_put_transaction_bytes_equal_the_generated_message(
    key: bytes, value: bytes, revision: int, lease: int, read: bool
) -> None:
    expected = etcdrpc.TxnRequest(
        compare=_compare(key, revision),
        success=[
            etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=key, value=value, lease=lease))
        ],
        failure=_get(key) if read else [],
    )
    assert put_txn(key, value, revision, lease, read=read) == expected.SerializeToString()


@settings(max_examples=100)
@given(key=_KEYS, revision=_REVISIONS)
def test_delete_transaction_bytes_equal_the_generated_message(key: bytes, revision: int) -> None:
    expected = etcdrpc.TxnRequest(
        compare=_compare(key, revision),
        success=[etcdrpc.RequestOp(request_delete_range=etcdrpc.DeleteRangeRequest(key=key))],
        failure=_get(key),
    )
    assert delete_txn(key, revision) == expected.SerializeToString()
