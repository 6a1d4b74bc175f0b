"""CEL for CustomResourceDefinition validation rules (``x-kubernetes-validations``).

``compile_schema_rules(schema, path)`` compiles every rule of a CRD version's
``openAPIV3Schema`` once and reports what Kubernetes refuses when the CRD is written
(``CompiledRules.errors``); ``CompiledRules.validate(new, old)`` evaluates them on a create or
update as kube-apiserver 1.36 does (see :mod:`kstore.api.cel.rules`).

How it is built, and why (measured on this machine, CPython 3.11, x86_64):

================================  =========  ===========  ===========================
candidate (PyPI)                  semantics  eval / rule  notes
================================  =========  ===========  ===========================
``cel-expr-python`` 0.1.3         48/56      3.3 us       official cel-cpp; checker;
(cel-cpp bindings)                                        compile 60-190 us
``cel-python`` 0.5.0 (``celpy``)  34/56      112-178 us   pure Python, no checker, no
                                                          ``.?``, no strings extension
``common-expression-language``    34/56      5.1 us       Rust; no checker, no ``.?``,
0.10.0                                                    no strings ext, ``size()`` of
                                                          a string counts bytes
``python-cel`` 0.1.1              --         --           Rust; int64 overflow wraps
                                                          silently, ``1 / 0`` panics
                                                          the process
================================  =========  ===========  ===========================

(56 expressions of the kind CRDs use: field access, macros, ``has``, string functions,
int/uint/double rules, overflow and division errors, map/list equality, durations,
timestamps, optionals, ``lists``/``strings`` extensions.) All four ship CPython 3.11 x86_64
wheels. None can stop a running evaluation at a cost limit, none exposes Kubernetes' cost
model, and the native ones cannot return opaque values (quantity, IP, CIDR, URL, semver)
from Python functions (cel-cpp: ``Unimplemented type``).

So the work is split. **cel-cpp** (``cel-expr-python``) parses and type-checks each rule,
giving cel-go's error texts (``ERROR: <input>:1:6: ...`` with the caret lines) for free;
its checked AST is read from the wire format (:mod:`._ast`). A **Python closure
interpreter** (:mod:`._interpreter`) evaluates it with cel-go's cost accounting checked at
every call and comprehension step, so a runaway rule stops within one step of its limit; it
carries Kubernetes' libraries in Python (:mod:`._stdlib`, :mod:`._k8s_library`). Schema
knowledge cel-cpp cannot have is added around it: undefined-field checks (:mod:`._fields`),
literal checks (:mod:`._literals`), the static cost estimate (:mod:`._estimate`, equal to
Kubernetes' on all 67 rows of its ``TestCostEstimation``), value conversion
(:mod:`._convert`), two-variable comprehension macros (:mod:`._macros`).

Measured (``bench/bench_cel.py``, medians): a simple rule ``self.minReplicas <=
self.maxReplicas`` 1.2 us, ``startsWith`` 1.0 us, an ``all`` over 10 items 12 us, a whole
``validate()`` of an object with 3 node rules and 5 item rules 22 us; compiling a rule
(checks and estimate included) 0.3-0.4 ms, once per CRD version. Conformance: all 675
``valid`` expressions of Kubernetes' ``TestValidationExpressions`` compile, and those that
do not read ``self`` all evaluate to true.
"""

from kstore.api.cel.rules import (
    PER_CALL_LIMIT,
    RUNTIME_COST_BUDGET,
    CompiledRules,
    compile_schema_rules,
)

__all__ = ["PER_CALL_LIMIT", "RUNTIME_COST_BUDGET", "CompiledRules", "compile_schema_rules"]
