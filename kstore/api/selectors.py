"""Label and field selectors: Kubernetes' two selector languages, their errors, and matching.

Behaviour follows k8s.io/apimachinery as of Kubernetes 1.35 (``pkg/labels``, ``pkg/fields``,
``metav1.LabelSelectorAsSelector``):

* **label selectors** — ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``
  (exists), ``!a`` (does not exist), ``a>5``, ``a<5``; a comma is AND. Keys must be qualified
  names, values label values. ``in``/``notin``/``!=`` match an absent label; ``>``/``<`` need the
  label to be a base-10 int64. Also built from a ``metav1.LabelSelector`` dict
  (:meth:`LabelSelector.from_dict`: ``{}`` selects everything, ``None`` nothing).
* **field selectors** — ``f=v``, ``f==v``, ``f!=v``; a comma is AND; ``\\\\``, ``\\,`` and
  ``\\=`` escape a value. An absent field is the empty string.

Invariants:

* selectors and requirements are frozen and hashable, and compare equal exactly when
  Kubernetes' would (``a=b`` and ``a==b`` are different label requirements, one field
  requirement);
* a label selector keeps its requirements sorted by key (stably), a field selector in the order
  of its sorted terms, so ``str()`` is the canonical string Kubernetes renders;
* each requirement compiles once into a closure over precomputed values; ``matches`` only calls
  those closures (no parsing, regex or operator dispatch on the watch fan-out path);
* every syntax or validation problem raises :class:`~kstore.errors.BadRequest` carrying the
  message Kubernetes' parser returns, so the REST facade can hand it to clients unchanged.

Where each part lives: :mod:`kstore.api._selection` (the operators, compiled checks and their
AND), :mod:`kstore.api._label_selector` (label requirements, selectors, lexer and parser; key and
value rules and Go's renderings from :mod:`kstore.api.validation`),
:mod:`kstore.api._field_selector` (field requirements, selectors and escaping).
"""

from __future__ import annotations

from kstore.api._field_selector import FieldRequirement, FieldSelector, escape_field_value
from kstore.api._label_selector import LabelRequirement, LabelSelector
from kstore.api._label_selector import _lex as _lex  # the lexer's own tests reach it here
from kstore.api._label_selector import _Token as _Token
from kstore.api._selection import Operator

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "Operator",
    "escape_field_value",
]

# These names have always lived here: their reprs and pickles keep naming this module.
for _public in (FieldRequirement, FieldSelector, LabelRequirement, LabelSelector, Operator):
    _public.__module__ = __name__
escape_field_value.__module__ = __name__
del _public
