"""Label and field selectors: parsing Kubernetes' selector syntax and matching objects.

Placeholder API being completed (set-based syntax, Kubernetes' error messages); the class
names and method signatures below are the contract other layers use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kstore.errors import BadRequest

__all__ = ["FieldSelector", "LabelSelector"]


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    operator: str  # "=", "!="
    value: str


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[_Requirement, ...] = ()

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        reqs = []
        for part in filter(None, (p.strip() for p in text.split(","))):
            if "!=" in part:
                k, v = part.split("!=", 1)
                reqs.append(_Requirement(k.strip(), "!=", v.strip()))
            elif "=" in part:
                k, v = part.replace("==", "=").split("=", 1)
                reqs.append(_Requirement(k.strip(), "=", v.strip()))
            else:
                raise BadRequest(f"unable to parse requirement: {part}")
        return cls(tuple(reqs))

    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        for r in self.requirements:
            has = labels.get(r.key)
            if r.operator == "=" and has != r.value:
                return False
            if r.operator == "!=" and has == r.value:
                return False
        return True


@dataclass(frozen=True, slots=True)
class FieldSelector:
    requirements: tuple[_Requirement, ...] = ()

    @classmethod
    def everything(cls) -> FieldSelector:
        return cls()

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        return cls(LabelSelector.parse(text).requirements)

    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        for r in self.requirements:
            has = fields.get(r.key, "")
            if r.operator == "=" and has != r.value:
                return False
            if r.operator == "!=" and has == r.value:
                return False
        return True

    def exact_value(self, field: str) -> str | None:
        """The value ``field`` must equal, when the selector requires one (e.g. metadata.name)."""
        for r in self.requirements:
            if r.key == field and r.operator == "=":
                return r.value
        return None
