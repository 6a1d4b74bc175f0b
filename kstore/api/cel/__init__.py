"""CEL for CustomResourceDefinition validation rules (``x-kubernetes-validations``).

Placeholder docstring; see below.
"""

from kstore.api.cel.rules import (
    PER_CALL_LIMIT,
    RUNTIME_COST_BUDGET,
    CompiledRules,
    compile_schema_rules,
)

__all__ = ["PER_CALL_LIMIT", "RUNTIME_COST_BUDGET", "CompiledRules", "compile_schema_rules"]
