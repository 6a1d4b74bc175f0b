"""Test support shipped with kstore: the storage conformance suite any backend can run."""
