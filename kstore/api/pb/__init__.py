"""Generated protobuf modules for Kubernetes' wire format (do not edit by hand).

The ``*_pb2.py`` modules are produced from ``proto/kstore/api/pb/*.proto`` by
``scripts/gen-proto`` and committed; ``tests/codec/test_generated_current.py`` fails when they
no longer match their sources. Importing a module registers its messages in protobuf's default
descriptor pool, under Kubernetes' own package names (``k8s.io.api.core.v1`` and so on).
"""
